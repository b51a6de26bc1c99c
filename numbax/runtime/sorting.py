"""The cotangent of a sort: the permutation that sorted the array gathers the cotangent back."""
from __future__ import annotations

import numpy as np
from numba.extending import overload

__all__ = ["sort_grad"]


def sort_grad(g, a, axis=-1):
    """Cotangent of ``a`` in ``np.sort(a, axis)`` along the last axis: ``g[..., i]`` goes back to where the
    ``i``-th smallest element came from (a stable sort, as JAX's, decides between ties)."""
    if axis not in (-1, np.ndim(a) - 1):
        raise ValueError("numbax differentiates np.sort along the last axis only")
    order = np.argsort(a, axis=-1, kind="stable")
    out = np.zeros(np.shape(a), dtype=np.result_type(g, np.float64))
    np.put_along_axis(out, order, g, axis=-1)
    return out


@overload(sort_grad)
def _sort_grad(g, a, axis=-1):
    def gather(g, a, axis=-1):
        if axis != -1 and axis != a.ndim - 1:
            raise ValueError("numbax differentiates np.sort along the last axis only")
        n = a.shape[-1]
        rows = np.ascontiguousarray(a).reshape((-1, n))
        cotangents = np.ascontiguousarray(g).reshape((-1, n))
        out = np.zeros(rows.shape, dtype=np.float64)
        for r in range(rows.shape[0]):
            order = np.argsort(rows[r], kind="mergesort")
            for i in range(n):
                out[r, order[i]] = cotangents[r, i]
        return out.reshape(a.shape)
    return gather
