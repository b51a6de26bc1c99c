"""The ``cpu`` backend: generated code compiled by Numba's ``njit`` with the disk cache on."""
from numbax.backends.numba_cpu.compile import compile_function, prepare, typing_errors

__all__ = ["compile_function", "prepare", "typing_errors"]
