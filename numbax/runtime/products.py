"""Products of the elements but one: the adjoints of ``np.prod`` and ``np.cumprod``, exact at zeros.

``np.prod(a, axis)``'s derivative in ``a[j]`` is the product of the other
elements that ``a[j]`` is reduced with. Dividing the product by ``a[j]`` is
nan at a zero; JAX multiplies instead, and so does ``prod_others``: the
product of the elements before ``a[j]`` times that of those after it (two
exclusive cumulative products). Its own adjoint, ``prod_others_vjp``, is the
second derivative, again without a division, so both are exact at one zero
and at several. Each moves the reduced axes last, works on the rows of a C
matrix (one row per output element), and puts the axes back.

``np.cumprod(a, axis)`` is the same along one axis (the flattened ``a`` for
None): its adjoint ``cumprod_grad`` is, at ``a[k]``, the product of the
elements before it times a sum that runs back from the end, ``S[k] = g[k] +
a[k+1] * S[k+1]``; its transpose in the cotangent is cumprod's JVP
(``cumprod_jvp``), and its derivative in ``a`` is ``cumprod_grad_vjp``.
Each is one or two passes along the rows, with no division.

    >>> prod_others(np.array([0.0, 2.0, 3.0]))
    array([6., 0., 0.])
    >>> prod_others_vjp(np.ones(3), np.array([0.0, 2.0, 3.0]))
    array([5., 3., 2.])
    >>> cumprod_grad(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.5, 0.0, 2.0, 3.0]))
    array([ 1., 16.,  0.,  0.])
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import register_jitable

from numbax.runtime.cached import overload
from numbax.runtime.grad import _is_none, inverse_axes
from numbax.runtime.statics import array_dtype

__all__ = ["prod_others", "prod_others_vjp", "cumprod_grad", "cumprod_jvp", "cumprod_grad_vjp"]


@register_jitable
def _products_before(rows):
    """The products of the elements before each one in its row (1 for the first)."""
    m, n = rows.shape
    before = np.ones((m, n), rows.dtype)
    for j in range(1, n):
        before[:, j] = before[:, j - 1] * rows[:, j - 1]
    return before


@register_jitable
def _exclusive_products(rows):
    """The products of the elements before each one in its row, and of those after it."""
    m, n = rows.shape
    before = _products_before(rows)
    after = np.ones((m, n), rows.dtype)
    for j in range(n - 2, -1, -1):
        after[:, j] = after[:, j + 1] * rows[:, j + 1]
    return before, after


@register_jitable
def _others_rows(rows):
    before, after = _exclusive_products(rows)
    return before * after


@register_jitable
def _others_vjp_rows(h, rows):
    """``out[:, j] = sum over i != j of h[:, i] * (the product of the row without i and j)``.

    The terms with ``i < j`` are ``after[j]`` times a sum ``s`` that moves right by ``s * rows[j] +
    h[j] * before[j]``; those with ``i > j`` mirror it from the right."""
    before, after = _exclusive_products(rows)
    out = np.zeros_like(h * before)
    s = np.zeros(rows.shape[0], out.dtype)
    for j in range(rows.shape[1]):
        out[:, j] = s * after[:, j]
        s = s * rows[:, j] + h[:, j] * before[:, j]
    s = np.zeros(rows.shape[0], out.dtype)
    for j in range(rows.shape[1] - 1, -1, -1):
        out[:, j] += s * before[:, j]
        s = s * rows[:, j] + h[:, j] * after[:, j]
    return out


@register_jitable
def _sums_from_the_end(g, rows):
    """``S[:, k] = g[:, k] + rows[:, k + 1] * S[:, k + 1]``: the sum over ``i >= k`` of ``g[:, i]`` times the
    product of the elements after ``k`` up to ``i``."""
    sums = np.empty_like(g * rows)
    s = np.zeros(rows.shape[0], sums.dtype)
    for k in range(rows.shape[1] - 1, -1, -1):
        s = s + g[:, k]
        sums[:, k] = s
        s = s * rows[:, k]
    return sums


@register_jitable
def _cumprod_grad_rows(g, rows):
    """``out[:, k] = sum over i >= k of g[:, i] * (the product of row[:i + 1] without k)``."""
    return _products_before(rows) * _sums_from_the_end(g, rows)


@register_jitable
def _cumprod_jvp_rows(h, rows):
    """``T[:, i] = rows[:, i] * T[:, i - 1] + before[:, i] * h[:, i]``: cumprod's change in the direction ``h``."""
    before = _products_before(rows)
    out = np.empty_like(h * before)
    t = np.zeros(rows.shape[0], out.dtype)
    for i in range(rows.shape[1]):
        t = t * rows[:, i] + before[:, i] * h[:, i]
        out[:, i] = t
    return out


@register_jitable
def _cumprod_grad_vjp_rows(h, g, rows):
    """``out[:, j] = sum over k != j of h[:, k] * d out_k / d rows[:, j]`` for ``out = _cumprod_grad_rows(g, rows)``.

    The terms with ``k < j`` are ``T[j - 1] * S[j]`` (``T`` the JVP in ``h``, ``S`` the sums from the end); those
    with ``k > j`` are ``before[j] * R[j]``, where ``R[j - 1] = rows[j] * R[j] + h[j] * S[j]`` runs from the end."""
    before = _products_before(rows)
    sums = _sums_from_the_end(g, rows)
    out = np.empty_like(h * sums)
    t = np.zeros(rows.shape[0], out.dtype)
    for j in range(rows.shape[1]):
        out[:, j] = t * sums[:, j]
        t = t * rows[:, j] + before[:, j] * h[:, j]
    r = np.zeros(rows.shape[0], out.dtype)
    for j in range(rows.shape[1] - 1, -1, -1):
        out[:, j] += before[:, j] * r
        r = r * rows[:, j] + h[:, j] * sums[:, j]
    return out


def _reduced_last(ndim: int, axis) -> tuple:
    """The permutation of ``ndim`` axes that keeps the unreduced ones first, in order, and the reduced last,
    and how many are reduced."""
    reduced = set(range(ndim)) if axis is None else {int(k) % ndim for k in np.atleast_1d(axis)}
    return tuple(d for d in range(ndim) if d not in reduced) + tuple(sorted(reduced)), len(reduced)


def _along_rows(kernel, a, axis, *more):
    """``kernel`` applied to ``a`` (and the arrays ``more`` of its shape) seen as rows over ``axis``."""
    a = np.asarray(a)
    if a.ndim == 0:
        return kernel(*(np.reshape(x, (1, 1)) for x in more + (a,))).reshape(())
    perm, count = _reduced_last(a.ndim, axis)
    moved = a.transpose(perm)
    m, n = int(np.prod(moved.shape[:a.ndim - count])), int(np.prod(moved.shape[a.ndim - count:]))
    rows = [np.ascontiguousarray(np.asarray(x).transpose(perm)).reshape(m, n) for x in more + (a,)]
    return np.ascontiguousarray(kernel(*rows).reshape(moved.shape).transpose(inverse_axes(perm)))


def prod_others(a, axis=None):
    """For each element of ``a``, the product of the others it is reduced with in ``np.prod(a, axis)``."""
    if not isinstance(a, np.ndarray):
        return 1.0 + 0.0 * a
    return _along_rows(_others_rows, a, axis)


def prod_others_vjp(h, a, axis=None):
    """The cotangent of ``a`` in ``prod_others(a, axis)`` for the cotangent ``h`` of its result."""
    if not isinstance(a, np.ndarray):
        return 0.0 * h * a
    return _along_rows(_others_vjp_rows, a, axis, np.broadcast_to(h, a.shape))


def _scan_rows(kernel, a, axis, *more):
    """``kernel`` applied to ``more`` and ``a`` along the axis that ``np.cumprod(a, axis)`` scans (the flattened
    ``a`` for None, where ``more`` may be flat too): a result of ``a``'s shape."""
    a = np.asarray(a)
    if axis is None:
        flat = [np.ravel(x if np.ndim(x) else np.broadcast_to(x, a.shape)) for x in more]
        return _along_rows(kernel, a.reshape(-1), 0, *flat).reshape(a.shape)
    return _along_rows(kernel, a, axis, *(np.broadcast_to(x, a.shape) for x in more))


def cumprod_grad(g, a, axis=None):
    """The cotangent of ``a`` in ``np.cumprod(a, axis)`` for the cotangent ``g`` of its result."""
    return _scan_rows(_cumprod_grad_rows, a, axis, g)


def cumprod_jvp(h, a, axis=None):
    """The change of ``np.cumprod(a, axis)`` in the direction ``h`` (of ``a``'s shape); ``cumprod_grad``'s
    transpose in ``g``."""
    out = _scan_rows(_cumprod_jvp_rows, a, axis, h)
    return out.reshape(-1) if axis is None else out


def cumprod_grad_vjp(h, g, a, axis=None):
    """The cotangent of ``a`` in ``cumprod_grad(g, a, axis)`` for the cotangent ``h`` of its result."""
    return _scan_rows(_cumprod_grad_vjp_rows, a, axis, h, g)


# ---------------------------------------------------------------------------
# Numba: the permutation is built from the axes' values by ``tuple_setitem``, the ndim being a type


@register_jitable
def _permutation(shape, reduced):
    """The axes of ``shape`` with ``reduced[d]`` false first, then the others, each group in order."""
    perm = shape
    k = 0
    for last in (False, True):
        for d in range(len(shape)):
            if reduced[d] == last:
                perm = tuple_setitem(perm, k, d)
                k += 1
    return perm


@register_jitable
def _rows_of(x, perm, m, n):
    """``x`` with its axes in the order ``perm``, as a C matrix of ``m`` rows of ``n`` elements."""
    return np.ascontiguousarray(x.transpose(perm)).reshape((m, n))


@register_jitable
def _rows_layout(a, reduced):
    """The permutation that moves the axes marked ``reduced`` last, the number of rows and their length."""
    m, n = 1, 1
    for d in range(a.ndim):
        if reduced[d]:
            n *= a.shape[d]
        else:
            m *= a.shape[d]
    return _permutation(a.shape, reduced), m, n


@register_jitable
def _from_rows(out, a, perm):
    """The rows ``out`` (of ``a`` laid out by ``perm``) back in ``a``'s shape, as a C array."""
    return np.ascontiguousarray(out.reshape(a.transpose(perm).shape).transpose(inverse_axes(perm)))


def _flags(axis):
    """A jitted function of ``(ndim, axis)`` marking the reduced axes, for the type of ``axis``."""
    if _is_none(axis):
        return register_jitable(lambda ndim, axis: np.ones(ndim, np.bool_))
    if isinstance(axis, types.Integer):
        def one(ndim, axis):
            reduced = np.zeros(ndim, np.bool_)
            reduced[axis % ndim] = True
            return reduced
        return register_jitable(one)

    def several(ndim, axis):
        reduced = np.zeros(ndim, np.bool_)
        for k in axis:
            reduced[k % ndim] = True
        return reduced
    return register_jitable(several)


@overload(prod_others)
def _prod_others(a, axis=None):
    if not isinstance(a, types.Array):
        return lambda a, axis=None: 1.0 + 0.0 * a
    if a.ndim == 0:
        return lambda a, axis=None: np.ones_like(a)
    flags = _flags(axis)

    def impl(a, axis=None):
        perm, m, n = _rows_layout(a, flags(a.ndim, axis))
        return _from_rows(_others_rows(_rows_of(a, perm, m, n)), a, perm)
    return impl


@overload(prod_others_vjp)
def _prod_others_vjp(h, a, axis=None):
    if not isinstance(a, types.Array):
        return lambda h, a, axis=None: 0.0 * h * a
    if a.ndim == 0:
        return lambda h, a, axis=None: 0.0 * h * a
    flags = _flags(axis)

    def impl(h, a, axis=None):
        perm, m, n = _rows_layout(a, flags(a.ndim, axis))
        rows = _rows_of(np.ascontiguousarray(np.broadcast_to(h, a.shape)), perm, m, n)
        return _from_rows(_others_vjp_rows(rows, _rows_of(a, perm, m, n)), a, perm)
    return impl


def _scan_layout(axis):
    """For the type of ``axis``, jitted functions of ``(x, a, axis)``: ``x`` (of ``a``'s size) as the rows that
    ``np.cumprod(a, axis)`` scans, and rows ``x`` back in ``a``'s shape and in that of ``np.cumprod``'s result."""
    if _is_none(axis):
        def rows(x, a, axis):
            return np.ascontiguousarray(x).reshape((1, a.size))
        return (register_jitable(rows), register_jitable(lambda x, a, axis: x.reshape(a.shape)),
                register_jitable(lambda x, a, axis: x.reshape(a.size)))
    flags = _flags(axis)

    def along(x, a, axis):
        perm, m, n = _rows_layout(a, flags(a.ndim, axis))
        return _rows_of(np.broadcast_to(x, a.shape), perm, m, n)

    def back(x, a, axis):
        return _from_rows(x, a, _rows_layout(a, flags(a.ndim, axis))[0])
    return register_jitable(along), register_jitable(back), register_jitable(back)


@overload(cumprod_grad)
def _cumprod_grad(g, a, axis=None):
    array_dtype("cumprod_grad", a)
    rows, shaped, _ = _scan_layout(axis)
    return lambda g, a, axis=None: shaped(_cumprod_grad_rows(rows(g, a, axis), rows(a, a, axis)), a, axis)


@overload(cumprod_jvp)
def _cumprod_jvp(h, a, axis=None):
    array_dtype("cumprod_jvp", a)
    rows, _, result = _scan_layout(axis)
    return lambda h, a, axis=None: result(_cumprod_jvp_rows(rows(h, a, axis), rows(a, a, axis)), a, axis)


@overload(cumprod_grad_vjp)
def _cumprod_grad_vjp(h, g, a, axis=None):
    array_dtype("cumprod_grad_vjp", a)
    rows, shaped, _ = _scan_layout(axis)

    def impl(h, g, a, axis=None):
        return shaped(_cumprod_grad_vjp_rows(rows(h, a, axis), rows(g, a, axis), rows(a, a, axis)), a, axis)
    return impl
