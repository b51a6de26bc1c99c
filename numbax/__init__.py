"""numbax: JAX's function transformations for plain NumPy code, compiled with Numba."""
from numbax import config, tree_util
from numbax.api import jit, source
from numbax.errors import (
    NumbaxError,
    NumbaxInternalError,
    NumbaxRecursionError,
    NumbaxSourceError,
    NumbaxSpecializationError,
    NumbaxStaticArgumentError,
    NumbaxSyntaxError,
    NumbaxTypingError,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "jit", "source", "config", "tree_util",
    "NumbaxError", "NumbaxInternalError", "NumbaxRecursionError", "NumbaxSourceError",
    "NumbaxSpecializationError", "NumbaxStaticArgumentError", "NumbaxSyntaxError", "NumbaxTypingError",
]
