"""``vmap``'s helpers: ``batch_size``, the size that every mapped axis shares, checked where generated code
runs; ``unbroadcast_rows``, a reverse-mode adjoint of a block of examples at once."""
from __future__ import annotations

import numpy as np
from numba import types

from numbax.runtime.cached import overload
from numbax.runtime.grad import unbroadcast

__all__ = ["batch_size", "unbroadcast_rows"]

INCONSISTENT = "vmap got inconsistent sizes for array axes to be mapped"
EMPTY = "numbax.vmap needs at least one example: the first one's outputs give the output shapes"


def batch_size(*sizes):
    """The common value of ``sizes`` (the lengths of the mapped axes); ``ValueError`` if they differ or are 0."""
    for size in sizes:
        if size != sizes[0]:
            raise ValueError(INCONSISTENT)
    if sizes[0] == 0:
        raise ValueError(EMPTY)
    return sizes[0]


overload(batch_size, numbers=True)(lambda *sizes: batch_size)  # compiled once per machine


def unbroadcast_rows(g, x):
    """``unbroadcast(g[k], x)`` for each row ``k`` of ``g``, stacked (``x`` is shared by the rows)."""
    if np.shape(g)[1:] == np.shape(x):
        return g
    return np.stack([unbroadcast(row, x) for row in g])


@overload(unbroadcast_rows)
def _unbroadcast_rows(g, x):
    x_ndim = x.ndim if isinstance(x, types.Array) else 0
    if not isinstance(g, types.Array) or g.ndim < x_ndim + 1:
        return None
    if g.ndim == x_ndim + 1 and g.layout == "C" and g.mutable:  # as ``unbroadcast`` returns a row of x's shape
        if x_ndim == 0:
            return lambda g, x: g

        def same(g, x):
            if g.shape[1:] == x.shape:
                return g
            out = np.empty((g.shape[0],) + x.shape, g.dtype)
            for k in range(g.shape[0]):
                out[k] = unbroadcast(g[k], x)
            return out

        return same

    def rows(g, x):
        first = unbroadcast(g[0], x)
        out = np.empty((g.shape[0],) + np.shape(first), g.dtype)
        for k in range(g.shape[0]):
            out[k] = unbroadcast(g[k], x)
        return out

    return rows
