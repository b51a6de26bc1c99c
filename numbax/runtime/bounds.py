"""Bounds checks of the integer indices the user wrote (``bounds_checks`` emits the calls).

``check_index(x, i, axis, where)`` raises ``NumbaxIndexError`` (an
``IndexError``) with NumPy's message, "index 10 is out of bounds for axis 0
with size 4", at the user's ``where`` ("file:line:column"), unless ``i`` is a
valid index of ``x`` along ``axis`` (negative: counted from the end, as
NumPy counts both). It checks only an integer index into an array; anything
else (a tuple's or a list's index, an index array, a boolean) is left to the
indexing itself. In Numba that choice is made by type when compiling, so a
check costs two comparisons, and nothing where it does not apply.
"""
from __future__ import annotations

import numbers

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from numbax.errors import NumbaxIndexError

__all__ = ["check_index"]


def check_index(x, i, axis: int, where: str) -> None:
    """Raise ``NumbaxIndexError`` at ``where`` unless ``i`` indexes ``x`` along ``axis`` (negative: from the
    last axis)."""
    if isinstance(x, np.ndarray) and isinstance(i, numbers.Integral) and not isinstance(i, (bool, np.bool_)):
        axis = axis if axis >= 0 else x.ndim + axis
        if not -x.shape[axis] <= i < x.shape[axis]:
            _out_of_bounds(int(i), x.shape[axis], axis, where)


@register_jitable
def _out_of_bounds(i, n, axis, where):
    raise NumbaxIndexError("index " + str(i) + " is out of bounds for axis " + str(axis) + " with size " + str(n),
                           where)


@overload(check_index)
def _check_index(x, i, axis, where):
    if isinstance(x, types.Array) and isinstance(i, types.Integer):
        def impl(x, i, axis, where):
            a = axis if axis >= 0 else x.ndim + axis
            n = x.shape[a]
            if i >= n or i < -n:
                _out_of_bounds(i, n, a, where)
        return impl
    return lambda x, i, axis, where: None
