"""numbax: JAX's function transformations for plain NumPy code, compiled with Numba.

The error classes, ``numbax.devices`` and ``process_index``/``process_count`` are imported here (the function
``devices`` shadows the module of that name only if imported before it; the processes' module imports no MPI);
the compiler on first use (PEP 562), so that ``import numbax`` is fast and ``numbax.runtime``, the one import
of generated code, loads no compiler.
"""
import importlib

from numbax import source_files  # noqa: F401 - first: stamps numbax's files before any other module loads
from numbax.devices import (
    Array, block_until_ready, device_get, device_put, devices, local_device_count, local_devices)
from numbax.distributed.processes import process_count, process_index
from numbax.errors import (
    NumbaxBatchingError,
    NumbaxCacheError,
    NumbaxCacheWarning,
    NumbaxCollectiveError,
    NumbaxComplexDerivativeError,
    NumbaxDeviceError,
    NumbaxDifferentiationError,
    NumbaxDistributedError,
    NumbaxDomainError,
    NumbaxDtypeError,
    NumbaxEmptyListError,
    NumbaxError,
    NumbaxIndexError,
    NumbaxInternalError,
    NumbaxIntegerPowerError,
    NumbaxMaskShapeError,
    NumbaxOverflowError,
    NumbaxRecursionError,
    NumbaxRunTimeError,
    NumbaxShapeError,
    NumbaxSourceError,
    NumbaxSpecializationError,
    NumbaxStaticArgumentError,
    NumbaxSyntaxError,
    NumbaxTypingError,
    NumbaxUnboundLocalError,
    NumbaxUnimplementedValueError,
    NumbaxWarning,
    NumbaxZeroDivisionError,
)

from numbax._version import __version__  # noqa: F401

__all__ = [
    "jit", "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "jacobian", "hessian", "vmap",
    "pmap", "custom_jvp", "custom_vjp", "checkpoint", "remat", "coverage", "source", "export", "clear_caches", "config",
    "tree_util", "tree", "nn",
    "example_libraries", "devices", "local_devices", "process_index", "process_count", "distributed",
    "local_device_count", "device_put", "device_get", "block_until_ready", "Array",
    "NumbaxBatchingError", "NumbaxCacheError", "NumbaxCacheWarning", "NumbaxCollectiveError", "NumbaxDeviceError",
    "NumbaxDifferentiationError", "NumbaxDistributedError", "NumbaxDomainError", "NumbaxDtypeError",
    "NumbaxEmptyListError", "NumbaxError", "NumbaxIndexError", "NumbaxIntegerPowerError", "NumbaxInternalError", "NumbaxMaskShapeError",
    "NumbaxOverflowError", "NumbaxRecursionError", "NumbaxComplexDerivativeError", "NumbaxUnboundLocalError",
    "NumbaxRunTimeError", "NumbaxShapeError", "NumbaxSourceError",
    "NumbaxSpecializationError", "NumbaxStaticArgumentError", "NumbaxSyntaxError", "NumbaxTypingError",
    "NumbaxUnimplementedValueError",
    "NumbaxWarning", "NumbaxZeroDivisionError",
]

# the compiler's public names -> their modules, imported together on the first use of any of them, in this
# order (the registrations they make on import are then the same as when numbax imported them eagerly)
_COMPILER = {
    "jit": "numbax.api", "source": "numbax.generated_source",
    "coverage": "numbax.transforms.coverage",
    "grad": "numbax.transforms.grad", "value_and_grad": "numbax.transforms.grad", "vjp": "numbax.transforms.grad",
    "jvp": "numbax.transforms.jvp", "linearize": "numbax.transforms.jvp", "vmap": "numbax.transforms.vmap",
    "pmap": "numbax.transforms.pmap",
    "jacfwd": "numbax.transforms.jacobian", "jacrev": "numbax.transforms.jacobian",
    "jacobian": "numbax.transforms.jacobian", "hessian": "numbax.transforms.jacobian",
    "custom_jvp": "numbax.transforms.custom", "custom_vjp": "numbax.transforms.custom",
    "checkpoint": "numbax.transforms.custom", "remat": "numbax.transforms.custom",
    "export": "numbax.standalone", "clear_caches": "numbax.transform_cache",
}
_SUBMODULES = ("config", "tree_util", "tree", "lax", "numpy", "debug", "random", "nn", "example_libraries",
               "distributed")


def __getattr__(name: str):
    """``numbax.jit`` and the other transformations, and ``numbax.lax`` and the other submodules, imported on
    first use (keeps ``import numbax`` fast and the runtime free of the compiler)."""
    if name in _COMPILER:
        for attribute, module in _COMPILER.items():
            globals()[attribute] = getattr(importlib.import_module(module), attribute)
        return globals()[name]
    if name in _SUBMODULES:
        return importlib.import_module(f"numbax.{name}")
    raise AttributeError(f"module 'numbax' has no attribute {name!r}")


def __dir__():
    """The public names, imported or not, and the module's own."""
    return sorted(set(globals()) | set(__all__) | set(_SUBMODULES))
