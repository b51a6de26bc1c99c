"""remainders: ``np.fmod`` of integers as NumPy computes it, C's remainder with the dividend's sign.

Numba's own ``np.fmod`` of integer arrays is wrong (0.61: ``np.fmod(7, -2)`` gives 7 and ``np.fmod(-7, 2)`` 1,
where NumPy and C give 1 and -1), so compiled code calls ``fmod``, which computes integers as ``a - b * q``,
``q`` the quotient rounded toward zero (0 for a zero divisor, as NumPy), and floats with Numba's own.

    >>> import numba
    >>> numba.njit(lambda a, b: fmod(a, b))(np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2]))
    array([ 1, -1,  1, -1])
"""
import numpy as np
from numba import types
from numba.np.numpy_support import as_dtype

from numbax.runtime.cached import overload
from numbax.runtime.loops import compile_source, ufunc_implementation

__all__ = ["fmod"]


def fmod(a, b):
    """``np.fmod(a, b)``; in compiled code, NumPy's result for integers too."""
    return np.fmod(a, b)


def _integer_fmod_of(a, b):
    if b == 0:
        return 0 * a
    quotient = abs(a) // abs(b)
    return a - b * (quotient if (a < 0) == (b < 0) else -quotient)


_integer_fmod = ufunc_implementation(_integer_fmod_of, "a, b")


def _integer(t) -> bool:
    return isinstance(getattr(t, "dtype", t), types.Integer)


@overload(fmod)
def _fmod(a, b):
    """Integers' fmod in NumPy's result dtype (int8 for int8: Numba's arithmetic makes int64); where NumPy computes
    two integer dtypes in float64 (a signed integer with a uint64), NumPy's float fmod of them."""
    if not (_integer(a) and _integer(b)):
        return lambda a, b: np.fmod(a, b)
    dtype = np.result_type(*(as_dtype(getattr(t, "dtype", t)) for t in (a, b)))
    arrays = isinstance(a, types.Array) or isinstance(b, types.Array)
    if dtype.kind not in "iu":
        floats = [f"{n}.astype(np.float64)" if isinstance(t, types.Array) else f"np.float64({n})"
                  for n, t in (("a", a), ("b", b))]
        return compile_source(f"def impl(a, b):\n    return np.fmod({floats[0]}, {floats[1]})\n")
    return _integer_fmod(f"{{}}.astype(np.{dtype.name})" if arrays else f"np.{dtype.name}({{}})")
