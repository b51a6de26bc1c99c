"""``unaliased`` for generated code: the operand of ``x op= y`` as NumPy reads it, before the update."""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import register_jitable

from numbax.runtime.cached import overload

__all__ = ["unaliased"]


def unaliased(y, x):
    """``y``, or a copy of it where its memory overlaps ``x``'s: NumPy reads the operand of ``x op= y`` as
    it was before the update (``y /= y[::-1]``), where Numba's in-place operators read it while they write
    ``x``. NumPy makes the copy itself, so here ``y`` is returned as it is."""
    return y


@register_jitable
def _span(a):
    """The first and one past the last byte address ``a``'s elements occupy; ``(0, 0)`` if it has none."""
    low = a.ctypes.data
    high = low
    for k in range(a.ndim):
        if a.shape[k] == 0:
            return 0, 0
        step = (a.shape[k] - 1) * a.strides[k]
        if step < 0:
            low += step
        else:
            high += step
    return low, high + a.itemsize


@overload(unaliased)
def _unaliased(y, x):
    if isinstance(y, types.Array) and isinstance(x, types.Array):
        def impl(y, x):
            y_low, y_high = _span(y)
            x_low, x_high = _span(x)
            if y_low < x_high and x_low < y_high:
                return np.copy(y)
            return y
        return impl
    return lambda y, x: y
