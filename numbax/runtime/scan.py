"""``stack_buffer`` for ``lax.scan`` and ``vmap``: the uninitialised array that stacks one output leaf per step."""
from __future__ import annotations

import numpy as np
from numba import types

from numbax.runtime.cached import overload

__all__ = ["stack_buffer"]


def stack_buffer(leaf, length):
    """An empty array of shape ``(length,) + np.shape(leaf)`` with ``leaf``'s dtype."""
    return np.empty((length,) + np.shape(leaf), np.asarray(leaf).dtype)


@overload(stack_buffer)
def _stack_buffer(leaf, length):
    if isinstance(leaf, types.Array):
        return lambda leaf, length: np.empty((length,) + leaf.shape, leaf.dtype)
    if isinstance(leaf, (types.Number, types.Boolean)):
        dtype = np.dtype(str(leaf)) if not isinstance(leaf, types.Boolean) else np.bool_
        return lambda leaf, length: np.empty(length, dtype)
    return None
