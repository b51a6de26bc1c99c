"""norm_grads: the cotangent of ``np.linalg.norm`` for every order, with JAX's choices where it has no derivative.

Over a vector (one axis, or a 1-D array): the 2-norm's ``x / norm``; the 1-norm's ``abs_slope(x)`` (1 at 0, as
JAX's ``abs``); ``inf``/``-inf``: shared equally by the elements whose magnitude is the norm (JAX's reduce
chooser); ``0`` (a count): zero; any other ``p``: ``norm**(1 - p) |x|**(p - 1) abs_slope(x)``, which is
``inf``/NaN at zeros exactly where JAX's ``sum(|x|**p)**(1/p)`` gives them. Over a 2-D array (the two axes
in either order): Frobenius as the 2-norm; ``1``/``-1`` (``inf``/``-inf``): the column (row) sums of
magnitudes whose largest (smallest) is the norm share it; ``2``/``-2``/``'nuc'``: ``u vᵀ`` of the largest or
smallest singular value (ties share) or of all of them. JAX takes the largest with ``initial=0``, so where that
norm is 0 the initial value takes half the share (``jnp.max``'s ties); the helpers do the same. Stacks of
matrices are refused when compiling (``primitives.reductions``), never reached here.
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import register_jitable

from numbax.runtime.cached import overload
from numbax.runtime.grad import abs_slope, unreduce
from numbax.runtime.loops import compile_source
from numbax.runtime.statics import static_value

__all__ = ["norm_grad"]


@register_jitable
def _share(values, largest):
    """The weights of the largest (smallest) of ``values``: ties share equally, and half goes to JAX's
    ``initial=0`` where the largest is 0."""
    extreme = np.max(values) if largest else np.min(values)
    hits = (values == extreme) * 1.0
    share = hits / np.sum(hits)
    return share * 0.5 if largest and extreme == 0 else share


@register_jitable
def _extreme_grad(g, ans, x, axis, keepdims, largest):
    """The ``inf``/``-inf`` vector norms' cotangent (``largest``: ``inf``), ties sharing per norm."""
    norm = unreduce(ans, x, axis, keepdims)
    hits = (np.abs(x) == norm) * 1.0
    count = np.sum(hits) if axis is None else unreduce(np.sum(hits, axis=axis), x, axis, False)
    share = hits / count
    if largest:
        share = share * (1.0 - 0.5 * (norm == 0))
    return unreduce(g, x, axis, keepdims) * abs_slope(x) * share


@register_jitable
def _vector_grad(g, ans, x, p, axis, keepdims):
    """The vector ``p``-norm's cotangent, ``p`` a float known at run time."""
    if p == 2:
        return unreduce(g / ans, x, axis, keepdims) * x
    if p == 1:
        return unreduce(g, x, axis, keepdims) * abs_slope(x)
    if p == np.inf or p == -np.inf:
        return _extreme_grad(g, ans, x, axis, keepdims, p > 0)
    if p == 0:
        return np.zeros_like(x * 1.0)
    return unreduce(g * ans ** (1.0 - p), x, axis, keepdims) * np.abs(x) ** (p - 1.0) * abs_slope(x)


@register_jitable
def _matrix_grad(g, x, p, nuclear):
    """The cotangent of a matrix norm of the 2-D ``x`` (rows first), ``g`` a number: ``'nuc'`` where
    ``nuclear``, else the order ``p`` (1, -1, inf, -inf, 2, -2)."""
    if nuclear or p == 2 or p == -2:
        u, s, vt = np.linalg.svd(np.ascontiguousarray(x * 1.0), full_matrices=False)
        weights = np.ones_like(s) if nuclear else _share(s, p > 0)
        return g * ((u * weights.reshape((1, -1))) @ vt)
    columns = p == 1 or p == -1
    sums = np.sum(np.abs(x), axis=0) if columns else np.sum(np.abs(x), axis=1)
    weights = _share(sums, p > 0)
    return abs_slope(x) * g * (weights.reshape((1, -1)) if columns else weights.reshape((-1, 1)))


def _matrix_axes(ndim: int, ord, axis):
    """The normalized (row, column) axes of a matrix norm, or None for a vector norm (or the flattened 2-norm
    of ``ord=None`` without an axis)."""
    if axis is None:
        return (0, 1) if ndim == 2 and ord is not None else None
    if isinstance(axis, tuple) and len(axis) == 2:
        return (axis[0] % ndim, axis[1] % ndim)
    return None


def norm_grad(g, ans, x, ord=None, axis=None, keepdims=False):
    """Cotangent of ``x`` in ``np.linalg.norm(x, ord, axis, keepdims)`` (``ans``), for every order NumPy takes;
    a matrix norm's ``x`` is 2-D."""
    matrix = _matrix_axes(np.ndim(x), ord, axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        if ord is None or ord == "fro" or (ord == 2 and matrix is None):
            return unreduce(g / ans, x, axis, keepdims) * x
        if matrix is None:
            return _vector_grad(g, ans, x, float(ord), axis, keepdims)
        a = x if matrix == (0, 1) else x.T
        out = _matrix_grad(np.sum(g), a, 0.0 if ord == "nuc" else float(ord), ord == "nuc")
        return out if matrix == (0, 1) else out.T


def _two_norm(g, ans, x, ord=None, axis=None, keepdims=False):
    return unreduce(g / ans, x, axis, keepdims) * x


def _one_norm(g, ans, x, ord=None, axis=None, keepdims=False):
    return unreduce(g, x, axis, keepdims) * abs_slope(x)


def _vector(g, ans, x, ord=None, axis=None, keepdims=False):
    return _vector_grad(g, ans, x, np.float64(ord), axis, keepdims)


@overload(norm_grad)
def _norm_grad(g, ans, x, ord=None, axis=None, keepdims=False):
    """The cases of ``norm_grad``, told apart by type: ``ord`` is None, a literal integer or string, or a
    number known at run time; a matrix norm's axes are literals."""
    order = static_value(ord)
    matrix = _matrix_axes(x.ndim, order, static_value(axis))
    if order is None or order == "fro" or (order == 2 and matrix is None):
        return _two_norm
    if matrix is None:
        return _one_norm if order == 1 else _vector
    if x.ndim != 2:
        raise TypingError("numbax.runtime.norm_grad: a matrix norm's derivative takes a 2-D array")
    nuclear = order == "nuc"
    first = "g" if isinstance(g, (types.Number, types.Boolean)) else "np.sum(g)"
    p = "0.0" if nuclear else "np.float64(ord)"
    body = (f"_matrix_grad({first}, x, {p}, {nuclear})" if matrix == (0, 1) else
            f"_matrix_grad({first}, np.ascontiguousarray(x.T), {p}, {nuclear}).T")
    return compile_source(f"def impl(g, ans, x, ord=None, axis=None, keepdims=False):\n    return {body}\n",
                          _matrix_grad=_matrix_grad)
