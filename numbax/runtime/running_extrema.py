"""``jax.lax.cummax`` and ``cummin`` along one axis, and their derivatives with JAX's weights at ties.

JAX differentiates a cumulative maximum through the associative scan of ``lax.max`` (``jax.lax.
associative_scan``: the pairs of neighbours reduced, the half-length scan of those recursively, the even
entries made from it), and ``lax.max`` splits its tangent in halves where its operands tie. So where
elements share a running maximum, each gets the weight of its paths through that scan's tree, which a
running maximum does not reproduce. ``extremum_scan_jvp`` applies the tree's weights to a tangent and
``extremum_scan_vjp`` their transpose to a cotangent, level by level without recursion; a NaN gets
weight zero, as ``lax.max``'s equality tests give it. The weights are constant between ties, so each
helper is linear in its first operand and its derivative in ``x`` is zero, as JAX's is.

    >>> x = np.array([1.0, 3.0, 2.0, 3.0])
    >>> cummax(x), extremum_scan_jvp(np.ones(4), x, 0, False, True)
    (array([1., 3., 3., 3.]), array([1., 1., 1., 1.]))
    >>> extremum_scan_vjp(np.array([0.0, 0.0, 0.0, 1.0]), x, 0, False, True)
    array([0. , 0.5, 0. , 0.5])
"""
from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from numbax.runtime.cached import overload

__all__ = ["cummax", "cummin", "extremum_scan_jvp", "extremum_scan_vjp"]


@register_jitable
def _pick(a, b, largest):
    """``lax.max(a, b)`` (``lax.min`` unless ``largest``): a NaN wins, as XLA's does."""
    if a != a or b != b:
        return a + b
    return (a if a >= b else b) if largest else (a if a <= b else b)


@register_jitable
def _weight(a, b, c):
    """The weight of ``a``'s tangent in ``c = lax.max(a, b)``: 1 where ``a`` is ``c``, a half at a tie."""
    if a != c:
        return 0.0
    return 0.5 if b == c else 1.0


@register_jitable
def _levels(n):
    """The offsets of the scan's levels in one flat array: level ``l + 1`` holds ``n_l // 2`` entries, down to
    a level of fewer than two."""
    count = 1
    size = n
    while size >= 2:
        size //= 2
        count += 1
    offsets = np.empty(count + 1, np.int64)
    offsets[0] = 0
    size = n
    for level in range(count):
        offsets[level + 1] = offsets[level] + size
        size //= 2
    return offsets


@register_jitable
def _scan_values(row, offsets, largest):
    """The pairwise reductions ``red`` and the scans ``scan`` of every level, as JAX's recursion makes them."""
    levels = offsets.shape[0] - 1
    red = np.empty(offsets[levels], np.float64)
    scan = np.empty(offsets[levels], np.float64)
    red[:row.shape[0]] = row
    for level in range(levels - 1):
        here, up = offsets[level], offsets[level + 1]
        for k in range(offsets[level + 2] - up):
            red[up + k] = _pick(red[here + 2 * k], red[here + 2 * k + 1], largest)
    top = offsets[levels - 1]
    scan[top:] = red[top:]
    for level in range(levels - 2, -1, -1):
        here, up, size = offsets[level], offsets[level + 1], offsets[level + 1] - offsets[level]
        for k in range(offsets[level + 2] - up):
            scan[here + 2 * k + 1] = scan[up + k]
        scan[here] = red[here]
        for k in range(1, (size + 1) // 2):
            scan[here + 2 * k] = _pick(scan[up + k - 1], red[here + 2 * k], largest)
    return red, scan


@register_jitable
def _row_jvp(row, tangent, out, largest):
    offsets = _levels(row.shape[0])
    red, scan = _scan_values(row, offsets, largest)
    levels = offsets.shape[0] - 1
    dred = np.zeros(offsets[levels], np.float64)
    dscan = np.zeros(offsets[levels], np.float64)
    dred[:row.shape[0]] = tangent
    for level in range(levels - 1):
        here, up = offsets[level], offsets[level + 1]
        for k in range(offsets[level + 2] - up):
            a, b, c = red[here + 2 * k], red[here + 2 * k + 1], red[up + k]
            dred[up + k] = _weight(a, b, c) * dred[here + 2 * k] + _weight(b, a, c) * dred[here + 2 * k + 1]
    top = offsets[levels - 1]
    dscan[top:] = dred[top:]
    for level in range(levels - 2, -1, -1):
        here, up, size = offsets[level], offsets[level + 1], offsets[level + 1] - offsets[level]
        for k in range(offsets[level + 2] - up):
            dscan[here + 2 * k + 1] = dscan[up + k]
        dscan[here] = dred[here]
        for k in range(1, (size + 1) // 2):
            a, b, c = scan[up + k - 1], red[here + 2 * k], scan[here + 2 * k]
            dscan[here + 2 * k] = _weight(a, b, c) * dscan[up + k - 1] + _weight(b, a, c) * dred[here + 2 * k]
    out[:] = dscan[:row.shape[0]]


@register_jitable
def _row_vjp(row, cotangent, out, largest):
    """The transpose of ``_row_jvp``: its statements in reverse order, each sending back what it read."""
    offsets = _levels(row.shape[0])
    red, scan = _scan_values(row, offsets, largest)
    levels = offsets.shape[0] - 1
    gred = np.zeros(offsets[levels], np.float64)
    gscan = np.zeros(offsets[levels], np.float64)
    gscan[:row.shape[0]] = cotangent
    for level in range(levels - 1):
        here, up, size = offsets[level], offsets[level + 1], offsets[level + 1] - offsets[level]
        for k in range(1, (size + 1) // 2):
            a, b, c = scan[up + k - 1], red[here + 2 * k], scan[here + 2 * k]
            gscan[up + k - 1] += _weight(a, b, c) * gscan[here + 2 * k]
            gred[here + 2 * k] += _weight(b, a, c) * gscan[here + 2 * k]
        gred[here] += gscan[here]
        for k in range(offsets[level + 2] - up):
            gscan[up + k] += gscan[here + 2 * k + 1]
    top = offsets[levels - 1]
    gred[top:] += gscan[top:]
    for level in range(levels - 2, -1, -1):
        here, up = offsets[level], offsets[level + 1]
        for k in range(offsets[level + 2] - up):
            a, b, c = red[here + 2 * k], red[here + 2 * k + 1], red[up + k]
            gred[here + 2 * k] += _weight(a, b, c) * gred[up + k]
            gred[here + 2 * k + 1] += _weight(b, a, c) * gred[up + k]
    out[:] = gred[:row.shape[0]]


@register_jitable
def _along(x, t, axis, reverse, largest, transpose):
    """``_row_jvp`` (``_row_vjp`` if ``transpose``) of every row of ``x`` along ``axis`` (``reverse``: from
    its end), applied to ``t``, in ``t``'s dtype."""
    k = axis if axis >= 0 else x.ndim + axis
    xs = np.ascontiguousarray(np.swapaxes(x, k, x.ndim - 1))
    ts = np.ascontiguousarray(np.swapaxes(t, k, x.ndim - 1))
    n = xs.shape[-1]
    rows = xs.reshape((-1, n))
    tangents = ts.reshape((-1, n))
    out = np.empty(tangents.shape, np.float64)
    for r in range(rows.shape[0]):
        row, tangent = rows[r].astype(np.float64), tangents[r].astype(np.float64)
        if reverse:
            row, tangent = row[::-1].copy(), tangent[::-1].copy()
        done = np.empty(n, np.float64)
        if transpose:
            _row_vjp(row, tangent, done, largest)
        else:
            _row_jvp(row, tangent, done, largest)
        out[r] = done[::-1] if reverse else done
    return np.ascontiguousarray(np.swapaxes(out.reshape(xs.shape), k, x.ndim - 1)).astype(t.dtype)


@register_jitable
def _running(x, axis, reverse, largest):
    k = axis if axis >= 0 else x.ndim + axis
    xs = np.ascontiguousarray(np.swapaxes(x, k, x.ndim - 1))
    n = xs.shape[-1]
    rows = xs.reshape((-1, n))
    out = np.empty(rows.shape, x.dtype)
    for r in range(rows.shape[0]):
        for step in range(n):
            i = n - 1 - step if reverse else step
            out[r, i] = rows[r, i] if step == 0 else _pick(out[r, i + 1 if reverse else i - 1], rows[r, i], largest)
    return np.ascontiguousarray(np.swapaxes(out.reshape(xs.shape), k, x.ndim - 1))


def cummax(x, axis=0, reverse=False):
    """The running maximum of ``x`` along ``axis``, from its end if ``reverse`` (``jax.lax.cummax``)."""
    return _running(np.asarray(x), axis, reverse, True)


def cummin(x, axis=0, reverse=False):
    """The running minimum of ``x`` along ``axis``, from its end if ``reverse`` (``jax.lax.cummin``)."""
    return _running(np.asarray(x), axis, reverse, False)


def extremum_scan_jvp(tangent, x, axis, reverse, largest):
    """The tangent of ``cummax(x, axis, reverse)`` (``cummin`` unless ``largest``) for ``x``'s ``tangent``."""
    return _along(np.asarray(x), np.asarray(tangent), axis, reverse, largest, False)


def extremum_scan_vjp(cotangent, x, axis, reverse, largest):
    """The cotangent of ``x`` for the ``cotangent`` of ``cummax(x, axis, reverse)`` (``cummin`` unless
    ``largest``): the transpose of ``extremum_scan_jvp``."""
    return _along(np.asarray(x), np.asarray(cotangent), axis, reverse, largest, True)


@overload(cummax)
def _cummax(x, axis=0, reverse=False):
    return lambda x, axis=0, reverse=False: _running(x, axis, reverse, True)


@overload(cummin)
def _cummin(x, axis=0, reverse=False):
    return lambda x, axis=0, reverse=False: _running(x, axis, reverse, False)


@overload(extremum_scan_jvp)
def _extremum_scan_jvp(tangent, x, axis, reverse, largest):
    return lambda tangent, x, axis, reverse, largest: _along(x, tangent, axis, reverse, largest, False)


@overload(extremum_scan_vjp)
def _extremum_scan_vjp(cotangent, x, axis, reverse, largest):
    return lambda cotangent, x, axis, reverse, largest: _along(x, cotangent, axis, reverse, largest, True)
