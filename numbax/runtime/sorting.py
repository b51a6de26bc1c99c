"""The cotangent of a sort: the permutation that sorted the array scatters the cotangent back, and its transpose.

A sort along another axis than the last is the sort of the array with that axis swapped to the end, so the
permutation moves along that axis in the same way (``np.swapaxes`` there and back); ``sort`` is ``np.sort``
along any axis, which Numba's sorts only along the last (``legalize`` sends it here).
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import register_jitable

from numbax.runtime.cached import overload

__all__ = ["sort", "sort_grad", "sort_gather"]


def sort(a, axis=-1, kind=None):
    """``np.sort(a, axis, kind)``."""
    return np.sort(a, axis, kind)


@overload(sort)
def _sort(a, axis=-1, kind=None):
    if axis is None or isinstance(axis, types.NoneType):
        return lambda a, axis=-1, kind=None: np.sort(a.ravel())

    def along(a, axis=-1, kind=None):  # every kind sorts to the same values
        k = axis if axis >= 0 else a.ndim + axis
        return np.ascontiguousarray(np.swapaxes(np.sort(np.ascontiguousarray(np.swapaxes(a, k, a.ndim - 1))), k,
                                                a.ndim - 1))
    return along


def sort_grad(g, a, axis=-1):
    """Cotangent of ``a`` in ``np.sort(a, axis)``: ``g``'s ``i``-th element along ``axis`` goes back to where
    the ``i``-th smallest element came from (a stable sort, as JAX's, decides between ties)."""
    order = np.argsort(a, axis=axis, kind="stable")
    out = np.zeros(np.shape(a), dtype=np.result_type(g, np.float64))
    np.put_along_axis(out, order, g, axis=axis)
    return out


def sort_gather(g, a, axis=-1):
    """``g`` permuted along ``axis`` as sorting ``a`` permutes it: the transpose of ``sort_grad``, which
    makes the adjoint of a sort's adjoint (a second derivative through ``np.sort``)."""
    order = np.argsort(a, axis=axis, kind="stable")
    return np.take_along_axis(np.asarray(g, dtype=np.result_type(g, np.float64)), order, axis=axis)


@register_jitable
def _permute_rows(g, a, scatter):
    """``g`` moved along the last axis by the stable order that sorts each row of ``a``: scattered back to
    where each sorted element came from (``scatter``), or gathered into sorted order."""
    n = a.shape[-1]
    rows = np.ascontiguousarray(a).reshape((-1, n))
    cotangents = np.ascontiguousarray(g).reshape((-1, n))
    out = np.empty(rows.shape, dtype=np.float64)
    for r in range(rows.shape[0]):
        order = np.argsort(rows[r], kind="mergesort")
        for i in range(n):
            if scatter:
                out[r, order[i]] = cotangents[r, i]
            else:
                out[r, i] = cotangents[r, order[i]]
    return out.reshape(a.shape)


@register_jitable
def _permute(g, a, axis, scatter):
    """``_permute_rows`` along ``axis`` (negative: from the end)."""
    k = axis if axis >= 0 else a.ndim + axis
    if k == a.ndim - 1:
        return _permute_rows(g, a, scatter)
    moved = _permute_rows(np.swapaxes(g, k, a.ndim - 1), np.swapaxes(a, k, a.ndim - 1), scatter)
    return np.ascontiguousarray(np.swapaxes(moved, k, a.ndim - 1))


@overload(sort_grad)
def _sort_grad(g, a, axis=-1):
    return lambda g, a, axis=-1: _permute(g, a, axis, True)


@overload(sort_gather)
def _sort_gather(g, a, axis=-1):
    return lambda g, a, axis=-1: _permute(g, a, axis, False)
