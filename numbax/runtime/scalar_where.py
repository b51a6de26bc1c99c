"""scalar_where: ``np.where`` of three scalars, as the scalar it selects.

NumPy and Numba make a 0-d array of ``np.where(c, x, y)`` when all three are
numbers; generated code that carries the result through a loop started from a
number (``lax.while_loop`` of a bisection, ``lo = np.where(s, mid, lo)``) would
then need one variable of two Numba types. JAX has no such difference, and
numbax treats every 0-d value alike, so for numbers ``where`` is the number it
selects, in NumPy's dtype of ``x`` and ``y``. Arrays, 0-d arrays included, go
to NumPy's (Numba's) own ``np.where``.

    >>> import numba
    >>> numba.njit(lambda c, x, y: where(c, x, y))(True, 1, 2.5)
    1.0
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.np.numpy_support import as_dtype

from numbax.runtime.cached import overload
from numbax.runtime.loops import compile_source

__all__ = ["where"]

_NUMBER = (types.Number, types.Boolean)


def where(condition, x, y):
    """``np.where(condition, x, y)``; the scalar selected where all three are numbers (compiled)."""
    return np.where(condition, x, y)


@overload(where)
def _where(condition, x, y):
    if not all(isinstance(t, _NUMBER) for t in (condition, x, y)):
        return lambda condition, x, y: np.where(condition, x, y)
    scalar = np.result_type(as_dtype(x), as_dtype(y)).type
    return compile_source("def impl(condition, x, y):\n    return scalar(x) if condition else scalar(y)",
                          scalar=scalar)
