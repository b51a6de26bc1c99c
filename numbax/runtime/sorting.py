"""The cotangent of a sort: the permutation that sorted the array scatters the cotangent back, and its transpose.

A sort along another axis than the last is the sort of the array with that axis swapped to the end, so the
permutation moves along that axis in the same way (``np.swapaxes`` there and back); ``sort`` is ``np.sort``
along any axis, which Numba's sorts only along the last (``legalize`` sends it here). ``median_weights`` are
the shares of the elements in ``np.median``, from the same stable order.
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import register_jitable

from numbax.runtime.cached import overload

__all__ = ["sort", "sort_grad", "sort_gather", "median_weights"]


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


def median_weights(a, axis=None):
    """The share of each element of ``a`` in ``np.median(a, axis)`` (``axis`` None: of the flattened ``a``):
    JAX's midpoint of the two middle elements of each lane's stable sort, one half each (one element with
    weight 1 where the lane's length is odd), scattered back to where they came from."""
    a = np.asarray(a)
    if axis is None:
        return np.reshape(median_weights(np.ravel(a), 0), np.shape(a))
    n = a.shape[axis]
    position = np.arange(n)
    middle = 0.5 * (position == (n - 1) // 2) + 0.5 * (position == n // 2)
    along = np.reshape(middle, [n if k == axis % a.ndim else 1 for k in range(a.ndim)])
    return sort_grad(np.broadcast_to(along, a.shape), a, axis)


@register_jitable
def _middle_of_rows(a):
    """``median_weights`` along the last axis of ``a``."""
    n = a.shape[-1]
    rows = np.ascontiguousarray(a).reshape((-1, n))
    out = np.zeros(rows.shape, dtype=np.float64)
    if n > 0:
        for r in range(rows.shape[0]):
            order = np.argsort(rows[r], kind="mergesort")
            out[r, order[(n - 1) // 2]] += 0.5
            out[r, order[n // 2]] += 0.5
    return out.reshape(a.shape)


@overload(median_weights)
def _median_weights(a, axis=None):
    if not isinstance(a, types.Array):
        return None
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        return lambda a, axis=None: _middle_of_rows(np.ascontiguousarray(a).reshape(-1)).reshape(a.shape)

    def along(a, axis=None):
        k = axis if axis >= 0 else a.ndim + axis
        if k == a.ndim - 1:
            return _middle_of_rows(a)
        return np.ascontiguousarray(np.swapaxes(_middle_of_rows(np.swapaxes(a, k, a.ndim - 1)), k, a.ndim - 1))
    return along
