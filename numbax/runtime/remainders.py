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

from numbax.runtime.cached import overload
from numbax.runtime.loops import ufunc_implementation

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
    if _integer(a) and _integer(b):
        return _integer_fmod()
    return lambda a, b: np.fmod(a, b)
