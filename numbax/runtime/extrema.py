"""``minimum`` and ``maximum`` of two operands as NumPy computes them, signed zeros included.

Of two equal operands NumPy's ``np.minimum`` and ``np.maximum`` return the second (``np.minimum(0.0, -0.0)``
is ``-0.0``, ``np.minimum(-0.0, 0.0)`` is ``0.0``), and a NaN in either operand; Numba's own return the
first, so ``1 / np.maximum(x, y)`` changed the sign of an infinity. (JAX orders ``-0.0`` below ``0.0``.)
Complex operands, which NumPy orders lexicographically, keep Numba's own functions.

    >>> import numba
    >>> bool(np.signbit(numba.njit(lambda a, b: minimum(a, b))(0.0, -0.0)))
    True
"""
import numpy as np
from numba import types

from numbax.runtime.cached import overload
from numbax.runtime.loops import ufunc_implementation

__all__ = ["minimum", "maximum"]


def minimum(a, b):
    """``np.minimum(a, b)``; in compiled code, NumPy's operand where they are equal (the second)."""
    return np.minimum(a, b)


def maximum(a, b):
    """``np.maximum(a, b)``; in compiled code, NumPy's operand where they are equal (the second)."""
    return np.maximum(a, b)


def _minimum_of(a, b):
    return a if a < b or a != a else b


def _maximum_of(a, b):
    return a if a > b or a != a else b


def _complex(t) -> bool:
    return isinstance(getattr(t, "dtype", t), types.Complex)


def _register(helper, scalar, numba_own) -> None:
    loop = ufunc_implementation(scalar, "a, b")

    @overload(helper)
    def impl(a, b):
        if _complex(a) or _complex(b):
            return lambda a, b: numba_own(a, b)
        return loop()


_register(minimum, _minimum_of, np.minimum)
_register(maximum, _maximum_of, np.maximum)
