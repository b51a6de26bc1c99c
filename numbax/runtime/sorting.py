"""The cotangent of a sort: the permutation that sorted the array scatters the cotangent back, and its transpose."""
from __future__ import annotations

import numpy as np
from numba.extending import overload, register_jitable

__all__ = ["sort_grad", "sort_gather"]

_LAST_AXIS = "numbax differentiates np.sort along the last axis only"


def sort_grad(g, a, axis=-1):
    """Cotangent of ``a`` in ``np.sort(a, axis)`` along the last axis: ``g[..., i]`` goes back to where the
    ``i``-th smallest element came from (a stable sort, as JAX's, decides between ties)."""
    if axis not in (-1, np.ndim(a) - 1):
        raise ValueError(_LAST_AXIS)
    order = np.argsort(a, axis=-1, kind="stable")
    out = np.zeros(np.shape(a), dtype=np.result_type(g, np.float64))
    np.put_along_axis(out, order, g, axis=-1)
    return out


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


@overload(sort_grad)
def _sort_grad(g, a, axis=-1):
    def scatter(g, a, axis=-1):
        if axis != -1 and axis != a.ndim - 1:
            raise ValueError(_LAST_AXIS)
        return _permute_rows(g, a, True)
    return scatter


def sort_gather(g, a):
    """``g`` permuted along the last axis as sorting ``a`` permutes it: the transpose of ``sort_grad``, which
    makes the adjoint of a sort's adjoint (a second derivative through ``np.sort``)."""
    order = np.argsort(a, axis=-1, kind="stable")
    return np.take_along_axis(np.asarray(g, dtype=np.result_type(g, np.float64)), order, axis=-1)


@overload(sort_gather)
def _sort_gather(g, a):
    return lambda g, a: _permute_rows(g, a, False)
