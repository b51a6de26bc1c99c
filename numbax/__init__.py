"""numbax: JAX's function transformations for plain NumPy code, compiled with Numba."""
from numbax import config, tree_util
from numbax.api import jit, source
from numbax.devices import device_get, device_put, devices, local_device_count
from numbax.transforms.coverage import coverage
from numbax.transforms.grad import grad, value_and_grad, vjp
from numbax.transforms.vmap import vmap
from numbax.errors import (
    NumbaxBatchingError,
    NumbaxCacheError,
    NumbaxCacheWarning,
    NumbaxDifferentiationError,
    NumbaxDomainError,
    NumbaxDtypeError,
    NumbaxError,
    NumbaxIndexError,
    NumbaxInternalError,
    NumbaxRecursionError,
    NumbaxRunTimeError,
    NumbaxShapeError,
    NumbaxSourceError,
    NumbaxSpecializationError,
    NumbaxStaticArgumentError,
    NumbaxSyntaxError,
    NumbaxTypingError,
    NumbaxWarning,
    NumbaxZeroDivisionError,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "jit", "grad", "value_and_grad", "vjp", "vmap", "coverage", "source", "config", "tree_util", "devices",
    "local_device_count", "device_put", "device_get",
    "NumbaxBatchingError", "NumbaxCacheError", "NumbaxCacheWarning", "NumbaxDifferentiationError",
    "NumbaxDomainError", "NumbaxDtypeError", "NumbaxError", "NumbaxIndexError", "NumbaxInternalError",
    "NumbaxRecursionError", "NumbaxRunTimeError", "NumbaxShapeError", "NumbaxSourceError",
    "NumbaxSpecializationError", "NumbaxStaticArgumentError", "NumbaxSyntaxError", "NumbaxTypingError",
    "NumbaxWarning", "NumbaxZeroDivisionError",
]

_SUBMODULES = ("lax", "numpy", "debug", "random")


def __getattr__(name: str):
    """``numbax.lax`` and the other optional submodules, imported on first use (keeps ``import numbax`` fast)."""
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"numbax.{name}")
    raise AttributeError(f"module 'numbax' has no attribute {name!r}")
