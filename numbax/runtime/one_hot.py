"""``one_hot_product``: a product ``basis @ b`` whose left factor is made of rows of an identity, as a selection
of rows of ``b`` (``optimizations.one_hot_products`` writes it where ``jacfwd`` sweeps its basis).

Row ``k`` of ``basis`` is column ``index[k]`` (wrapped as NumPy wraps a negative index) of an ``n``-column
identity, from which ``basis`` keeps the columns from ``start`` (a slice's start, normalized as NumPy's);
a row whose one falls outside them is zero. The product's row ``k`` is then row ``index[k] - start`` of
``b``, or zero. IEEE arithmetic gives the same numbers: ``1 * v`` plus zeros times the rest of a column is
``v + 0.0`` (a ``-0.0`` turns to ``0.0``), unless that rest holds an infinity or a nan, where ``0 * inf`` makes
a nan: where ``b`` holds one, the product is made as it is. Real floats of one dtype only: any other case, or
factors whose sizes disagree, is the product itself (its result or its error).

    >>> basis = np.eye(4)[[2, 0, 3]][:, 1:]
    >>> b = np.arange(6.0).reshape(3, 2)
    >>> one_hot_product(basis, b, np.array([2, 0, 3]), 4, 1)
    array([[2., 3.],
           [0., 0.],
           [4., 5.]])
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import register_jitable

from numbax.runtime.cached import overload

__all__ = ["one_hot_product"]


def one_hot_product(basis, b, index, n, start):
    """``basis @ b`` for ``basis`` the rows ``index`` of an ``n``-column identity, columns ``start`` on."""
    return basis @ b


@register_jitable
def _finite_rows(m):
    """Whether every entry of the matrix ``m`` is finite: ``0.0 * v`` is zero for each (summed per column, row
    after row, which vectorizes)."""
    zeros = np.zeros(m.shape[1])
    for j in range(m.shape[0]):
        for c in range(m.shape[1]):
            zeros[c] += m[j, c] * 0.0
    total = 0.0
    for c in range(m.shape[1]):
        total += zeros[c]
    return total == 0.0


@register_jitable
def _finite(b):
    """Whether every entry of the matrix ``b`` is finite, read in its memory's order."""
    if b.strides[0] < b.strides[1]:  # a transpose
        return _finite_rows(b.T)
    return _finite_rows(b)


@register_jitable
def _select(basis, b, index, n, start):
    """The rows of ``b`` that the rows of ``basis`` select, or zeros; ``b``'s entries finite."""
    first = start + n if start < 0 else start
    first = min(max(first, 0), n)
    out = np.empty((basis.shape[0], b.shape[1]), b.dtype)
    for k in range(basis.shape[0]):
        j = (index[k] + n if index[k] < 0 else index[k]) - first
        if 0 <= j < basis.shape[1]:
            for c in range(b.shape[1]):
                out[k, c] = b[j, c] + 0.0
        else:
            out[k, :] = 0.0
    return out


@overload(one_hot_product)
def _one_hot_product(basis, b, index, n, start):
    exact = (isinstance(basis, types.Array) and isinstance(b, types.Array) and basis.ndim == 2
             and b.ndim in (1, 2) and isinstance(b.dtype, types.Float) and basis.dtype == b.dtype)
    if not exact:
        return lambda basis, b, index, n, start: basis @ b
    if b.ndim == 1:
        def vector(basis, b, index, n, start):
            column = np.empty((b.shape[0], 1), b.dtype)
            column[:, 0] = b
            if basis.shape[1] != b.shape[0] or not _finite(column):
                return basis @ b
            return _select(basis, column, index, n, start)[:, 0].copy()

        return vector

    def matrix(basis, b, index, n, start):
        if basis.shape[1] != b.shape[0] or not _finite(b):
            return basis @ b
        return _select(basis, b, index, n, start)

    return matrix
