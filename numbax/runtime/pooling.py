"""pooling: the maximum over windows of ``NHWC`` arrays (``stax.MaxPool``), and its derivatives as JAX's.

``max_pool(x, window, strides, same)`` is ``lax.reduce_window(x, -inf, lax.max, (1, *window, 1), (1, *strides,
1), padding)``, ``padding`` ``'SAME'`` if ``same`` else ``'VALID'``: each output element the maximum of a
window of the input padded with ``-inf`` as ``lax.padtype_to_pads`` pads it (a NaN in the window wins, as
``lax.max``'s does). JAX differentiates it by
XLA's select-and-scatter: the window's element is chosen by visiting the window in row-major order and
keeping the one chosen so far unless it is not ``>=`` the next, so a tie goes to its first element, and a
padding's element chosen takes no derivative. ``max_pool_jvp`` reads the chosen elements of a tangent,
``max_pool_vjp`` adds a cotangent into them: each is linear in its first operand and the other's
transpose, and the choice is constant between ties, so their derivative in ``x`` is zero.

    >>> x = np.array([[1.0, 2.0], [2.0, 0.0]]).reshape(1, 2, 2, 1)
    >>> max_pool(x, (2, 2), (1, 1), False).ravel()
    array([2.])
    >>> max_pool_vjp(np.ones((1, 1, 1, 1)), x, (2, 2), (1, 1), False).ravel()
    array([0., 1., 0., 0.])
"""
from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from numbax.runtime.cached import overload

__all__ = ["max_pool", "max_pool_jvp", "max_pool_vjp"]


@register_jitable
def _pads(size, window, stride, same):
    """``(low, high, out)``: the padding of a spatial dim (``lax.padtype_to_pads``: the lower side takes the
    smaller half) and its length after the window."""
    if not same:
        return 0, 0, (size - window) // stride + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2, out


@register_jitable
def _geometry(x, window, strides, same):
    """The output's shape and the padding ``(top, bottom, left, right)`` of ``x``'s spatial dims."""
    top, bottom, rows = _pads(x.shape[1], window[0], strides[0], same)
    left, right, cols = _pads(x.shape[2], window[1], strides[1], same)
    return (x.shape[0], rows, cols, x.shape[3]), (top, bottom, left, right)


@register_jitable
def _chosen(x, n, i, j, c, window, strides, pads):
    """The ``(row, column)`` of ``x`` that select-and-scatter chooses in output ``(n, i, j, c)``'s window; a row
    of -1 where it is the padding."""
    best, row, col = -np.inf, -1, -1
    for a in range(window[0]):
        r = i * strides[0] + a - pads[0]
        for b in range(window[1]):
            q = j * strides[1] + b - pads[2]
            inside = 0 <= r < x.shape[1] and 0 <= q < x.shape[2]
            v = x[n, r, q, c] if inside else -np.inf
            if (a == 0 and b == 0) or not best >= v:
                best, row, col = v, (r if inside else -1), q
    return row, col


@register_jitable
def _pooled(x, window, strides, same):
    n, h, w, c = x.shape
    shape, pads = _geometry(x, window, strides, same)
    out = np.empty(shape, x.dtype)
    for k in range(n):
        for i in range(out.shape[1]):
            for j in range(out.shape[2]):
                for d in range(c):
                    best = -np.inf
                    for a in range(window[0]):
                        r = i * strides[0] + a - pads[0]
                        for b in range(window[1]):
                            q = j * strides[1] + b - pads[2]
                            if 0 <= r < h and 0 <= q < w and (x[k, r, q, d] > best or x[k, r, q, d] != x[k, r, q, d]):
                                best = x[k, r, q, d]  # a NaN, once there, stays: no comparison with it holds
                    out[k, i, j, d] = best
    return out


@register_jitable
def _gathered(tangent, x, window, strides, same):
    shape, pads = _geometry(x, window, strides, same)
    out = np.zeros(shape, tangent.dtype)
    for k in range(shape[0]):
        for i in range(shape[1]):
            for j in range(shape[2]):
                for d in range(shape[3]):
                    r, q = _chosen(x, k, i, j, d, window, strides, pads)
                    if r >= 0:
                        out[k, i, j, d] = tangent[k, r, q, d]
    return out


@register_jitable
def _scattered(cotangent, x, window, strides, same):
    _, pads = _geometry(x, window, strides, same)
    out = np.zeros(x.shape, cotangent.dtype)
    for k in range(cotangent.shape[0]):
        for i in range(cotangent.shape[1]):
            for j in range(cotangent.shape[2]):
                for d in range(cotangent.shape[3]):
                    r, q = _chosen(x, k, i, j, d, window, strides, pads)
                    if r >= 0:
                        out[k, r, q, d] += cotangent[k, i, j, d]
    return out


def max_pool(x, window, strides, same):
    """The maximum of each ``window`` of ``x`` (``NHWC``, padded with ``-inf`` where ``same``) at ``strides``."""
    x = np.asarray(x)
    (_, rows, cols, _), pads = _geometry(x, window, strides, same)
    padded = np.pad(x, ((0, 0), (pads[0], pads[1]), (pads[2], pads[3]), (0, 0)), constant_values=-np.inf)
    out = None
    for a in range(window[0]):
        for b in range(window[1]):
            part = padded[:, a:a + (rows - 1) * strides[0] + 1:strides[0], b:b + (cols - 1) * strides[1] + 1:strides[1]]
            out = part if out is None else np.maximum(out, part)  # a NaN wins, as lax.max's
    return out.astype(x.dtype, copy=True)


def max_pool_jvp(tangent, x, window, strides, same):
    """The tangent of ``max_pool(x, ...)`` for ``x``'s ``tangent``: the chosen element's of each window."""
    return _gathered(np.asarray(tangent), np.asarray(x), window, strides, same)


def max_pool_vjp(cotangent, x, window, strides, same):
    """The cotangent of ``x`` for the ``cotangent`` of ``max_pool(x, ...)``: each added into its window's
    chosen element (the transpose of ``max_pool_jvp``)."""
    return _scattered(np.asarray(cotangent), np.asarray(x), window, strides, same)


@overload(max_pool)
def _max_pool(x, window, strides, same):
    return lambda x, window, strides, same: _pooled(x, window, strides, same)


@overload(max_pool_jvp)
def _max_pool_jvp(tangent, x, window, strides, same):
    return lambda tangent, x, window, strides, same: _gathered(tangent, x, window, strides, same)


@overload(max_pool_vjp)
def _max_pool_vjp(cotangent, x, window, strides, same):
    return lambda cotangent, x, window, strides, same: _scattered(cotangent, x, window, strides, same)
