"""``stack_buffer`` for ``lax.scan`` and ``vmap``: the uninitialised array that stacks one output leaf per step
(``stack_rows``: per block of steps)."""
from __future__ import annotations

import numpy as np
from numba import types

from numbax.runtime.cached import overload

__all__ = ["stack_buffer", "stack_rows"]


def stack_buffer(leaf, length):
    """An empty array of shape ``(length,) + np.shape(leaf)`` with ``leaf``'s dtype."""
    return np.empty((length,) + np.shape(leaf), np.asarray(leaf).dtype)


@overload(stack_buffer, numbers=True)  # a buffer for numbers too: compiled once, called
def _stack_buffer(leaf, length):
    if isinstance(leaf, types.Array):
        return lambda leaf, length: np.empty((length,) + leaf.shape, leaf.dtype)
    if isinstance(leaf, (types.Number, types.Boolean)):
        dtype = np.dtype(str(leaf)) if not isinstance(leaf, types.Boolean) else np.bool_
        return lambda leaf, length: np.empty(length, dtype)
    return None


def stack_rows(rows, length):
    """An empty array of shape ``(length,) + rows.shape[1:]`` with ``rows``' dtype: room for ``length`` rows like
    those of ``rows`` (the first block of a ``vmap`` loop written over blocks of examples)."""
    return np.empty((length,) + rows.shape[1:], rows.dtype)


@overload(stack_rows)
def _stack_rows(rows, length):
    if isinstance(rows, types.Array) and rows.ndim >= 1:
        return lambda rows, length: np.empty((length,) + rows.shape[1:], rows.dtype)
    return None
