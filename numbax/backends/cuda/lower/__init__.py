"""The GPU backend's compiler half: the jitted function as ``numba.cuda`` kernels and a host driver."""
from numbax.backends.cuda.lower.driver import IMPORTS, transform

__all__ = ["IMPORTS", "transform"]
