"""Helpers that generated adjoint code calls: zeros, copies, and undoing broadcasts and reductions.

Each helper is plain Python over NumPy, which is what ``backend="python"``
runs, and has a Numba implementation registered with ``overload``, chosen by
the argument types at compile time, so one generated source serves both
backends. Reverse mode needs them because Numba is strictly typed: a zero
adjoint must have its primal's type (scalar or array of that ndim), and the
shape a broadcast or a reduction came from is only known at run time.
"""
from __future__ import annotations

from typing import List

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import register_jitable
from numba.np.numpy_support import as_dtype

from numbax.runtime.cached import overload
from numbax.runtime.loops import INDENT, compile_source, element_source, empty_like_source, function_source, nest
from numbax.runtime.statics import static

__all__ = ["zeros_like", "ones_like", "widen", "primal_dtype", "cotangent_dtype", "ShapesDiffer", "assume_equal",
           "copy_of", "unbroadcast", "unreduce", "index_add", "index_added", "last_writes", "size_of",
           "matmul_grad_a", "matmul_grad_b", "reshape_like", "chooser_weights", "tie_share", "tie_shares", "var_grad",
           "cumsum_grad",
           "power_exponent", "dsinc", "d2sinc", "inverse_axes", "cholesky_grad",
           "solve_grad_a", "trace_grad",
           "diag_grad", "slogdet_sign", "slogdet_logabs",
           "abs_slope"]


def cotangent_dtype(dtype) -> np.dtype:
    """The dtype reverse mode computes a cotangent of ``dtype`` in: at least float64 (complex128 for
    complex), so that Numba, which widens a float32 array meeting a Python float, types each adjoint once.
    Gradients go back to their primal's dtype at the end (``primal_dtype``), as JAX returns them."""
    return np.result_type(dtype, np.float64)


def zeros_like(x):
    """A zero cotangent for ``x``: an array of its shape in ``cotangent_dtype``, or a scalar zero."""
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, cotangent_dtype(x.dtype))
    if isinstance(x, (list, tuple)):  # the results of np.split, np.linalg.slogdet, rt.concatenate_grad, indexed
        return [zeros_like(v) for v in x]
    return _scalar_cotangent(x, 0)


def _scalar_cotangent(x, value):
    """``value`` as a NumPy scalar of ``x``'s ``cotangent_dtype``: a Python float divided by zero raises in
    Python, where NumPy's scalar gives an infinity, as compiled code does."""
    try:
        return cotangent_dtype(np.result_type(x)).type(value)
    except TypeError:  # not a number: a plain zero, as before
        return np.float64(value)


def ones_like(x):
    """A one of ``x``'s shape in ``cotangent_dtype`` (the seed of a gradient)."""
    if isinstance(x, np.ndarray):
        return np.ones(x.shape, cotangent_dtype(x.dtype))
    return _scalar_cotangent(x, 1)


class ShapesDiffer(Exception):
    """Raised by generated code whose entry check of parameters' dims fails (``shapes.assumed_equal``):
    numbax catches it and runs the code it generates without taking those dims as equal."""


@register_jitable
def assume_equal(n, m):
    """Raise ``ShapesDiffer`` unless the lengths ``n`` and ``m`` are equal (generated code checks the dims it
    takes as equal first)."""
    if n != m:
        raise ShapesDiffer()


def widen(g):
    """A cotangent the caller passes (``vjp``), in ``cotangent_dtype``."""
    if isinstance(g, np.ndarray):
        return g.astype(cotangent_dtype(g.dtype), copy=False)
    return complex(g) if np.iscomplexobj(g) else float(g)


def primal_dtype(g, x):
    """The gradient ``g`` in its primal ``x``'s dtype (a float32 parameter gets a float32 gradient)."""
    if isinstance(x, np.ndarray):
        return np.asarray(g).astype(x.dtype, copy=False)
    return np.asarray(x).dtype.type(g)


def copy_of(x):
    """A copy of an array that nothing else references; scalars as they are."""
    return x.copy() if isinstance(x, np.ndarray) else x


def size_of(x):
    """The number of elements of an array, 1 for a scalar: a NumPy integer, so that a rule dividing by the size of
    an empty array gives NumPy's NaN (as compiled code does) where a Python int would raise ZeroDivisionError."""
    return np.intp(x.size if isinstance(x, np.ndarray) else 1)


def unbroadcast(g, x):
    """Sum ``g`` back to the shape of ``x``, undoing NumPy broadcasting (adjoint of a broadcast)."""
    shape = np.shape(x)
    gshape = np.shape(g)
    if not isinstance(x, np.ndarray) and isinstance(g, np.ndarray):
        return np.sum(g)  # a scalar's cotangent is a scalar, not a 0-d array (``np.where`` of scalars)
    if gshape == shape:
        return g
    if not shape:
        return np.sum(g)
    g = np.asarray(g)
    if g.ndim < len(shape):
        return np.broadcast_to(g, shape).copy()
    if g.ndim > len(shape):
        g = g.sum(axis=tuple(range(g.ndim - len(shape))))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    if g.shape != shape:
        g = np.broadcast_to(g, shape).copy()
    return g


def unreduce(g, a, axis=None, keepdims=False):
    """Broadcast the cotangent of a reduction of ``a`` over ``axis`` back to ``a``'s shape (a 0-d ``a``
    reduced over axis 0 or -1, which NumPy allows, loses no axis)."""
    shape = np.shape(a)
    if axis is not None and not keepdims and shape:
        g = np.expand_dims(g, axis)
    return np.broadcast_to(g, shape)


def index_add(a, index, g):
    """``a[index] += g`` with repeated integer indices accumulating (``np.add.at``); in place."""
    np.add.at(a, index, g)


def last_writes(g, a, index):
    """``g``, the cotangent of the values ``a[index] = v`` stored (``a[index]``'s shape), with each element that a
    later element of the same store writes again set to zero: NumPy keeps the last write (``a[[0, 0]] = v``
    stores ``v[1]``), so only that one has a derivative. The same code compiles (Numba writes repeated
    positions in order, as NumPy does)."""
    selected = a[index]
    ids = np.arange(selected.size).reshape(selected.shape)
    marker = np.full(a.shape, -1, np.int64)
    marker[index] = ids
    return np.where(marker[index] == ids, g, 0.0 * g)


@overload(last_writes)
def _last_writes(g, a, index):
    return last_writes


@register_jitable
def index_added(a, index, g):
    """``index_add`` into a copy of ``a``, returned: the form reverse mode differentiates again."""
    out = a.copy()
    index_add(out, index, g)
    return out


# ---------------------------------------------------------------------------
# Numba implementations


def _is_scalar(t) -> bool:
    return isinstance(t, (types.Number, types.Boolean))


def _cotangent_type(t):
    return types.complex128 if isinstance(t, types.Complex) else types.float64


def _zeros_source(ndim: int, float64: bool) -> str:
    """Source of ``impl(x)``: a new array of ``x``'s shape, zeroed by a loop nest (Numba compiles
    ``np.zeros`` in about a tenth of a second for each ndim; the loops in a third of that)."""
    zero = nest(ndim, "out", [f"{element_source(ndim, 'out')} = 0"])
    body = [f"out = {empty_like_source(ndim, 'x', float64)}"] + zero
    return function_source("x", body + ["return out"])


@overload(zeros_like)
def _zeros_like(x):
    if isinstance(x, types.Array):
        dtype = _cotangent_type(x.dtype)
        return compile_source(_zeros_source(x.ndim, dtype == types.float64), dtype=dtype)
    if _is_scalar(x):  # in ``cotangent_dtype``, as the Python version: a complex number's zero is complex
        return (lambda x: 0j) if isinstance(x, types.Complex) else (lambda x: 0.0)
    if isinstance(x, types.List) and isinstance(x.dtype, types.Array):
        dtype = _cotangent_type(x.dtype.dtype)
        return lambda x: [np.zeros(v.shape, dtype) for v in x]
    if isinstance(x, types.UniTuple) and isinstance(x.dtype, types.Array):  # a tuple of cotangents, indexed
        dtype = _cotangent_type(x.dtype.dtype)
        return lambda x: [np.zeros(v.shape, dtype) for v in x]
    if isinstance(x, types.UniTuple) and _is_scalar(x.dtype):  # numbers stacked (``np.stack([a * b, c])``)
        return (lambda x: [0j for _ in x]) if isinstance(x.dtype, types.Complex) else (lambda x: [0.0 for _ in x])
    if isinstance(x, types.BaseTuple):
        raise TypingError("numbax: on cpu a tuple result (np.linalg.slogdet(a)[1]) cannot be indexed in a "
                          "differentiated function; unpack it: sign, logdet = np.linalg.slogdet(a)")
    raise TypingError(f"numbax: no zero for a value of type {x}")


@overload(ones_like)
def _ones_like(x):
    if isinstance(x, types.Array):
        dtype = _cotangent_type(x.dtype)
        return lambda x: np.ones(x.shape, dtype)
    if _is_scalar(x):
        return (lambda x: 1 + 0j) if isinstance(x, types.Complex) else (lambda x: 1.0)
    raise TypingError(f"numbax: no one for a value of type {x}")


@overload(widen)
def _widen(g):
    if isinstance(g, types.Array):
        dtype = _cotangent_type(g.dtype)
        return lambda g: g.astype(dtype)
    if isinstance(g, types.Complex):
        return lambda g: complex(g)
    return lambda g: float(g)


@overload(primal_dtype)
def _primal_dtype(g, x):
    if isinstance(x, types.Array):
        if isinstance(g, types.Array) and g.dtype == x.dtype:
            return lambda g, x: g
        dtype = x.dtype
        if isinstance(g, types.Array):
            return lambda g, x: g.astype(dtype)
        return lambda g, x: np.full(x.shape, g, dtype)
    cast = as_dtype(x).type
    return lambda g, x: cast(g)


@overload(copy_of)
def _copy_of(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    return lambda x: x


@overload(size_of)
def _size_of(x):
    if isinstance(x, types.Array):
        return lambda x: x.size
    return lambda x: 1


def _unbroadcast_source(g_ndim: int, x_ndim: int, alias: bool) -> str:
    """Source of ``impl(g, x)``: ``g`` summed into a new array shaped like ``x`` by one loop nest over ``g``.

    ``g``'s leading axes and the axes where ``x`` has length 1 are summed (NumPy's broadcasting rules
    reversed); with ``alias``, a ``g`` already of ``x``'s shape is returned as it is.
    """
    lead = g_ndim - x_ndim
    body = ["if g.shape == x.shape:", f"{INDENT}return g"] if alias else []
    body += ["out = np.zeros(x.shape, g.dtype)"] + [f"s{d} = 0 if x.shape[{d}] == 1 else 1" for d in range(x_ndim)]
    slot = ", ".join(f"i{lead + d} * s{d}" for d in range(x_ndim)) or "()"
    body += nest(g_ndim, "g", [f"out[{slot}] += {element_source(g_ndim, 'g')}"])
    return function_source("g, x", body + ["return out"])


def _total_source(ndim: int) -> str:
    """Source of ``impl(g, x)``: the sum of every element of ``g``, by a loop nest, as a ``dtype``."""
    body = ["total = dtype(0)"] + nest(ndim, "g", [f"total += {element_source(ndim, 'g')}"])
    return function_source("g, x", body + ["return total"])


@overload(unbroadcast)
def _unbroadcast(g, x):
    if _is_scalar(x):
        if isinstance(g, types.Array):
            return compile_source(_total_source(g.ndim), dtype=np.sum(np.zeros(1, as_dtype(g.dtype))).dtype.type)
        return lambda g, x: g
    if not isinstance(x, types.Array):
        raise TypingError(f"numbax: cannot unbroadcast to a value of type {x}")
    if _is_scalar(g):
        return lambda g, x: np.full(x.shape, g)
    if g.ndim < x.ndim:
        return lambda g, x: np.broadcast_to(g, x.shape).copy()
    alias = g.ndim == x.ndim and g.layout == "C" and g.mutable
    return compile_source(_unbroadcast_source(g.ndim, x.ndim, alias))


@overload(unreduce)
def _unreduce(g, a, axis=None, keepdims=False):
    if _is_scalar(a):
        return lambda g, a, axis=None, keepdims=False: g
    no_axis = axis is None or isinstance(axis, (types.NoneType, types.Omitted))
    if _is_scalar(g):
        return lambda g, a, axis=None, keepdims=False: np.full(a.shape, g)
    if no_axis or g.ndim == a.ndim:
        return lambda g, a, axis=None, keepdims=False: np.broadcast_to(g, a.shape)
    if isinstance(axis, types.BaseTuple) and all(isinstance(t, types.Integer) for t in axis):
        lines = ["def impl(g, a, axis=None, keepdims=False):", "    shape = a.shape"]
        for i in range(len(axis)):
            lines.append(f"    shape = tuple_setitem(shape, axis[{i}] if axis[{i}] >= 0 else axis[{i}] + a.ndim, 1)")
        lines.append("    return np.broadcast_to(np.ascontiguousarray(g).reshape(shape), a.shape)")
        return compile_source("\n".join(lines), tuple_setitem=tuple_setitem)
    if not isinstance(axis, types.Integer):
        raise TypingError("numbax: the adjoint of a reduction over several axes needs keepdims=True on cpu")

    def one_axis(g, a, axis=None, keepdims=False):
        ax = axis if axis >= 0 else axis + a.ndim
        shape = tuple_setitem(a.shape, ax, 1)
        return np.broadcast_to(np.ascontiguousarray(g).reshape(shape), a.shape)
    return one_axis


def _integer_array(t) -> bool:
    return isinstance(t, types.Array) and isinstance(t.dtype, types.Integer)


def _index_add_source(parts, ndim: int, g_scalar: bool) -> str:
    """``index_add`` of a tuple ``index`` with integer arrays among slices and integers, written out: one loop over
    the arrays' positions adding each position's part of ``g`` into ``a`` (a number, or a view added in place),
    so that repeated positions accumulate. The arrays are 1-d of one length: side by side, their dimension stands
    where they do in the result (NumPy's rule for adjacent advanced indices), else in front; an integer among them
    is an index of the array's kind, one position for all."""
    arrays = [k for k, t in enumerate(parts) if _integer_array(t)]
    advanced = [k for k, t in enumerate(parts) if _integer_array(t) or isinstance(t, types.Integer)]
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    kept = sum(isinstance(t, types.SliceType) for t in parts[:advanced[0]])  # result dims before the arrays'
    first = kept if adjacent else 0
    picked = ", ".join(f"index[{k}][k]" if k in arrays else f"index[{k}]" for k in range(len(parts)))
    lines = ["def impl(a, index, g):", f"{INDENT}n = index[{arrays[0]}].size"]
    lines += [f"{INDENT}if index[{k}].size != n:\n{INDENT * 2}raise IndexError('numbax: the integer arrays "
              f"of an index must have one length')" for k in arrays[1:]]
    lines.append(f"{INDENT}for k in range(n):")
    value = "g" if g_scalar else f"g[{', '.join([':'] * first + ['k'])}]"
    if len(parts) == ndim and not any(isinstance(t, types.SliceType) for t in parts):  # one element each
        lines.append(f"{INDENT * 2}a[{picked}] += {value}")
    else:
        lines += [f"{INDENT * 2}part = a[{picked}]", f"{INDENT * 2}part += {value}"]
    return "\n".join(lines)


@overload(index_add)
def _index_add(a, index, g):
    if _integer_array(index) and index.ndim > 1:  # rows at the positions of a flattened index
        if _is_scalar(g):
            return lambda a, index, g: index_add(a, index.ravel(), g)

        def flattened(a, index, g):
            rows = np.ascontiguousarray(np.broadcast_to(g, index.shape + a.shape[1:]))
            index_add(a, index.ravel(), rows.reshape((index.size,) + a.shape[1:]))
        return flattened
    if isinstance(index, types.BaseTuple) and any(_integer_array(t) for t in index):
        parts = list(index)
        if not all(isinstance(t, (types.SliceType, types.Integer)) or _integer_array(t) and t.ndim == 1
                   for t in parts):
            raise TypingError("numbax: the derivative of indexing with integer arrays supports 1-d arrays among "
                              "slices and integers; index one axis at a time")
        if len(parts) > a.ndim:
            raise TypingError("numbax: too many indices for the array")
        return compile_source(_index_add_source(parts, a.ndim, _is_scalar(g)))
    if isinstance(index, types.Array) and isinstance(index.dtype, types.Integer) and index.ndim == 1:
        if _is_scalar(g):
            def scalar_at(a, index, g):
                for k in range(index.size):
                    a[index[k]] += g
            return scalar_at

        if a.ndim == 1:
            def elements_at(a, index, g):
                for k in range(index.size):
                    a[index[k]] += g[k]
            return elements_at

        def rows_at(a, index, g):  # through a view: a row assignment would compile broadcast error messages
            for k in range(index.size):
                row = a[index[k]]
                row += g[k]
        return rows_at

    def basic(a, index, g):
        a[index] += g
    return basic



# ---------------------------------------------------------------------------
# Adjoints of whole primitives too irregular for a one-line template


def matmul_grad_a(g, a, b):
    """Cotangent of ``a`` in ``a @ b`` (1-D and 2-D operands, as ``np.dot`` and ``np.matmul``)."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 0 or b_nd == 0:
        return unbroadcast(g * b, a)
    if a_nd > 2 or b_nd > 2:
        gb = g[..., None] * b if b_nd == 1 else g @ np.swapaxes(b, -1, -2)
        return unbroadcast(gb if a_nd > 1 else np.sum(gb, axis=tuple(range(gb.ndim - 1))), a)
    if b_nd == 1:
        return np.outer(g, b) if a_nd == 2 else g * b
    return g @ b.T if a_nd == 2 else b @ g


def matmul_grad_b(g, a, b):
    """Cotangent of ``b`` in ``a @ b``."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 0 or b_nd == 0:
        return unbroadcast(g * a, b)
    if a_nd > 2 or b_nd > 2:
        ag = a[..., :, None] * g[..., None, :] if a_nd == 1 else np.swapaxes(a, -1, -2) @ (
            g[..., None] if b_nd == 1 else g)
        if b_nd == 1:
            ag = ag[..., 0] if a_nd > 1 else ag
            return unbroadcast(ag, b)
        return unbroadcast(ag, b)
    if a_nd == 1:
        return np.outer(a, g) if b_nd == 2 else g * a
    return a.T @ g if b_nd == 2 else g @ a


def reshape_like(g, a):
    """``g`` with ``a``'s shape (adjoint of reshape, ravel, squeeze, expand_dims)."""
    if np.ndim(a) == 0:
        return np.sum(g)
    return np.ascontiguousarray(g).reshape(np.shape(a))


def chooser_weights(a, ans, axis=None, keepdims=False):
    """Where ``a`` attains its max/min ``ans``, ties sharing equally (adjoint weights of max and min)."""
    mask = (a == unreduce(ans, a, axis, keepdims)).astype(np.float64)
    count = np.sum(mask) if axis is None else np.sum(mask, axis=axis)
    return mask / unreduce(count, a, axis, False)


def tie_share(a, ans):
    """``1 / (how many elements of a equal ans)``: each maximum's (or minimum's) share of the adjoint."""
    return 1.0 / np.count_nonzero(np.asarray(a) == ans)


def tie_shares(a, ans, axis, keepdims=False):
    """``tie_share`` of each lane of ``a`` along ``axis`` (``ans`` its extremes, ``axis`` kept in it with
    ``keepdims``), the axis dropped: ``1 / count``, inf where no element equals ``ans`` (a NaN)."""
    with np.errstate(divide="ignore"):
        return 1.0 / np.sum(a == unreduce(ans, a, axis, keepdims), axis=axis)


def var_grad(g, a, axis=None, ddof=0, keepdims=False):
    """Cotangent of ``a`` in ``np.var(a, axis, ddof=ddof, keepdims=keepdims)``."""
    n = size_of(a) if axis is None else int(np.prod(np.take(np.shape(a), axis)))  # per result, of an empty a too
    centre = np.mean(a) if axis is None else np.sum(a, axis=axis) / n
    return unreduce(g, a, axis, keepdims) * 2.0 * (a - unreduce(centre, a, axis, False)) / (n - ddof)


def cumsum_grad(g, a, axis=None):
    """Cotangent of ``a`` in ``np.cumsum(a, axis)``: a reversed cumulative sum."""
    if axis is None:
        return reshape_like(np.cumsum(np.ascontiguousarray(g).reshape(-1)[::-1])[::-1], a)
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


def _integer(x) -> bool:
    return np.result_type(x).kind in "iub"


def power_exponent(x2):
    """The exponent of ``x1 ** x2``'s derivative ``x2 * x1 ** power_exponent(x2)``: ``x2 - 1``, and 1 where an
    integer ``x2`` is 0, so that ``x1 ** 0`` has derivative 0 at ``x1 == 0`` too (JAX's ``integer_pow``; a
    float 0.0 gives JAX's NaN there). A float scalar comes back as ``np.float64``, so that ``0.0 ** -0.5`` is
    NumPy's infinity (as in compiled code), not Python's ZeroDivisionError."""
    if not _integer(x2):
        return x2 - 1 if isinstance(x2, np.ndarray) else np.float64(x2 - 1)
    return np.where(x2 == 0, 1, x2 - 1) if isinstance(x2, np.ndarray) else (1 if x2 == 0 else x2 - 1)


def dsinc(x):
    """The derivative of ``np.sinc``."""
    px = np.pi * x
    safe = np.where(x == 0.0, 1.0, x)
    return np.where(x == 0.0, 0.0, (np.cos(px) - np.sinc(x)) / safe)


def d2sinc(x):
    """The second derivative of ``np.sinc``: ``-pi**2 sinc(x) - 2 dsinc(x) / x``, ``-pi**2 / 3`` at 0."""
    safe = np.where(x == 0.0, 1.0, x)
    return np.where(x == 0.0, -np.pi ** 2 / 3.0, -np.pi ** 2 * np.sinc(x) - 2.0 * dsinc(x) / safe)


def inverse_axes(axes):
    """The permutation that undoes ``np.transpose(a, axes)``."""
    return tuple(int(i) for i in np.argsort(axes))


def cholesky_grad(g, L):
    """Cotangent of ``a`` in ``L = np.linalg.cholesky(a)`` (symmetric, as in JAX)."""
    phi = L.T @ g
    phi = np.tril(phi) - 0.5 * np.diag(np.diag(phi))
    Linv = np.linalg.inv(L)
    s = Linv.T @ phi @ Linv
    return 0.5 * (s + s.T)


def solve_grad_a(gb, x):
    """Cotangent of ``a`` in ``x = np.linalg.solve(a, b)``, given ``gb = solve(a.T, g)``."""
    return -np.outer(gb, x) if np.ndim(x) == 1 else -gb @ x.T


def trace_grad(g, a, offset=0, axis1=0, axis2=1):
    """Cotangent of ``a`` in ``np.trace(a, offset, axis1, axis2)``."""
    if np.ndim(a) == 2:
        return g * np.eye(a.shape[0], a.shape[1], offset)
    shape = np.shape(np.diagonal(a, offset, axis1, axis2))
    return diagonal_grad(np.broadcast_to(np.expand_dims(g, -1), shape), a, offset, axis1, axis2)


@overload(matmul_grad_a)
def _matmul_grad_a(g, a, b):
    if _is_scalar(a) or _is_scalar(b):
        return lambda g, a, b: unbroadcast(g * b, a)
    if b.ndim == 1:
        if a.ndim == 2:
            return lambda g, a, b: np.outer(g, b)
        return lambda g, a, b: g * b
    if a.ndim == 2:
        return lambda g, a, b: g @ np.ascontiguousarray(b.T)
    return lambda g, a, b: b @ g


@overload(matmul_grad_b)
def _matmul_grad_b(g, a, b):
    if _is_scalar(a) or _is_scalar(b):
        return lambda g, a, b: unbroadcast(g * a, b)
    if a.ndim == 1:
        if b.ndim == 2:
            return lambda g, a, b: np.outer(a, g)
        return lambda g, a, b: g * a
    if b.ndim == 2:
        return lambda g, a, b: np.ascontiguousarray(a.T) @ g
    return lambda g, a, b: g @ a


@overload(reshape_like)
def _reshape_like(g, a):
    if _is_scalar(a):
        return lambda g, a: np.sum(g)
    if _is_scalar(g):
        return lambda g, a: np.full(a.shape, g)
    return lambda g, a: np.ascontiguousarray(g).reshape(a.shape)


def _ties_source(ndim: int) -> str:
    """Source of ``chooser_weights`` over a whole array: ``1 / count`` where ``a == ans``, by loop nests."""
    item, slot = element_source(ndim, "a"), element_source(ndim, "out")
    body = ["count = 0"] + nest(ndim, "a", [f"if {item} == ans:", f"{INDENT}count += 1"])
    body += ["share = 1.0 / count", "out = np.zeros(a.shape, np.float64)"]
    body += nest(ndim, "a", [f"if {item} == ans:", f"{INDENT}{slot} = share"])
    return function_source("a, ans, axis=None, keepdims=False", body + ["return out"])


@overload(chooser_weights)
def _chooser_weights(a, ans, axis=None, keepdims=False):
    if _is_scalar(a):
        return lambda a, ans, axis=None, keepdims=False: 1.0
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        return compile_source(_ties_source(a.ndim))

    def along(a, ans, axis=None, keepdims=False):
        mask = (a == unreduce(ans, a, axis, keepdims)) * 1.0
        return mask / unreduce(np.sum(mask, axis=axis), a, axis, False)
    return along


def _share_source(ndim: int) -> str:
    """Source of ``tie_share``: one pass counting the elements equal to ``ans``."""
    body = ["count = 0"] + nest(ndim, "a", [f"if {element_source(ndim, 'a')} == ans:", f"{INDENT}count += 1"])
    return function_source("a, ans", body + ["return 1.0 / count"])


@overload(tie_share)
def _tie_share(a, ans):
    return compile_source(_share_source(a.ndim))


def _shares_source(ndim: int, axis: int, keepdims: bool) -> str:
    """Source of ``tie_shares`` of an ``ndim``-dimensional ``a`` along the constant ``axis``: one pass counting
    each lane's elements equal to its extreme."""
    lane = [f"i{d}" for d in range(ndim) if d != axis]
    extreme = [f"i{d}" if d != axis else "0" for d in range(ndim) if d != axis or keepdims]
    body = [f"counts = np.zeros(({''.join(f'a.shape[{d}], ' for d in range(ndim) if d != axis)}))"]
    body += nest(ndim, "a", [f"if {element_source(ndim, 'a')} == ans[{', '.join(extreme)}]:",
                             f"{INDENT}counts[{', '.join(lane)}] += 1.0"])
    return function_source("a, ans, axis, keepdims=False", body + ["return 1.0 / counts"])


@overload(tie_shares)
def _tie_shares(a, ans, axis, keepdims=False):
    ndim = a.ndim if isinstance(a, types.Array) else 0
    along, kept = static("tie_shares", "axis", axis), static("tie_shares", "keepdims", keepdims)
    if ndim < 2 or not isinstance(along, int) or not -ndim <= along < ndim:
        raise TypingError("numbax.runtime.tie_shares: expects an array of two or more dims and a constant axis")
    return compile_source(_shares_source(ndim, along % ndim, bool(kept)))


@overload(var_grad)
def _var_grad(g, a, axis=None, ddof=0, keepdims=False):
    if _is_scalar(a):  # the variance of one number is 0 whatever the number
        return lambda g, a, axis=None, ddof=0, keepdims=False: g * 0.0
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        def whole(g, a, axis=None, ddof=0, keepdims=False):
            return unreduce(g, a, axis, keepdims) * 2.0 * (a - np.mean(a)) / (a.size - ddof)
        return whole

    def along(g, a, axis=None, ddof=0, keepdims=False):
        n = a.shape[axis]
        centre = np.sum(a, axis=axis) / n
        return unreduce(g, a, axis, keepdims) * 2.0 * (a - unreduce(centre, a, axis, False)) / (n - ddof)
    return along


@overload(cumsum_grad)
def _cumsum_grad(g, a, axis=None):
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        return lambda g, a, axis=None: reshape_like(np.cumsum(np.ascontiguousarray(g).reshape(-1)[::-1])[::-1], a)
    if a.ndim == 1:
        return lambda g, a, axis=None: np.cumsum(g[::-1])[::-1]
    return lambda g, a, axis=None: _reverse_cumsum_jit(g, axis if axis >= 0 else axis + a.ndim).reshape(a.shape)


@overload(power_exponent)
def _power_exponent(x2):
    if isinstance(x2, types.Array) and isinstance(x2.dtype, (types.Integer, types.Boolean)):
        return lambda x2: np.where(x2 == 0, 1, x2 - 1)
    if isinstance(x2, (types.Integer, types.Boolean)):
        return lambda x2: 1 if x2 == 0 else x2 - 1
    return lambda x2: x2 - 1


@overload(dsinc)
def _dsinc(x):
    if _is_scalar(x):
        def scalar(x):
            if x == 0.0:
                return 0.0
            return (np.cos(np.pi * x) - np.sin(np.pi * x) / (np.pi * x)) / x
        return scalar

    def array(x):
        out = np.zeros(x.shape)
        flat = np.ascontiguousarray(x).reshape(-1)
        res = out.reshape(-1)
        for i in range(flat.size):
            v = flat[i]
            if v != 0.0:
                res[i] = (np.cos(np.pi * v) - np.sin(np.pi * v) / (np.pi * v)) / v
        return out
    return array


@register_jitable
def _d2sinc_at(v):
    """``d2sinc`` of one float (for Numba)."""
    if v == 0.0:
        return -np.pi ** 2 / 3.0
    px = np.pi * v
    s = np.sin(px) / px
    return -np.pi ** 2 * s - 2.0 * (np.cos(px) - s) / (v * v)


@overload(d2sinc)
def _d2sinc(x):
    if _is_scalar(x):
        return lambda x: _d2sinc_at(x)

    def array(x):
        out = np.empty(x.shape)
        flat = np.ascontiguousarray(x).reshape(-1)
        res = out.reshape(-1)
        for i in range(flat.size):
            res[i] = _d2sinc_at(flat[i])
        return out
    return array


@overload(cholesky_grad)
def _cholesky_grad(g, L):
    def impl(g, L):
        phi = np.ascontiguousarray(L.T) @ g
        phi = np.tril(phi) - 0.5 * np.diag(np.diag(phi))
        Linv = np.linalg.inv(L)
        s = np.ascontiguousarray(Linv.T) @ phi @ Linv
        return 0.5 * (s + s.T)
    return impl


@overload(solve_grad_a)
def _solve_grad_a(gb, x):
    if x.ndim == 1:
        return lambda gb, x: -np.outer(gb, x)
    return lambda gb, x: -(gb @ np.ascontiguousarray(x.T))


@overload(inverse_axes)
def _inverse_axes(axes):
    def impl(axes):
        out = axes
        for i in range(len(axes)):
            out = tuple_setitem(out, axes[i], i)
        return out
    return impl


def diag_grad(g, v, k=0):
    """Cotangent of ``v`` in ``np.diag(v, k)``: a diagonal taken out, or put back in place."""
    if np.ndim(v) == 1:
        return np.diagonal(g, k).copy()
    out = np.zeros(np.shape(v), dtype=np.result_type(g, np.float64))
    n = np.size(g)
    rows = np.arange(n) + max(-k, 0)
    cols = np.arange(n) + max(k, 0)
    out[rows, cols] = g
    return out


@overload(diag_grad)
def _diag_grad(g, v, k=0):
    if v.ndim == 1:
        def take(g, v, k=0):
            n = v.shape[0]
            out = np.empty(n, g.dtype)
            r, c = max(-k, 0), max(k, 0)
            for i in range(n):
                out[i] = g[r + i, c + i]
            return out
        return take

    def place(g, v, k=0):
        out = np.zeros(v.shape)
        r, c = max(-k, 0), max(k, 0)
        for i in range(g.shape[0]):
            out[r + i, c + i] = g[i]
        return out
    return place


def slogdet_sign(a):
    """The sign of ``det(a)``, the first result of ``np.linalg.slogdet``."""
    return np.linalg.slogdet(a)[0]


def slogdet_logabs(a):
    """``log|det(a)|``, the second result of ``np.linalg.slogdet``."""
    return np.linalg.slogdet(a)[1]


@overload(slogdet_sign)
def _slogdet_sign(a):
    return lambda a: np.linalg.slogdet(a)[0]


@overload(slogdet_logabs)
def _slogdet_logabs(a):
    return lambda a: np.linalg.slogdet(a)[1]


@register_jitable
def abs_slope(x):
    """The derivative of ``np.abs`` at real ``x``: ``np.sign(x)``, and 1 at 0 (JAX's ``select(x >= 0, 1, -1)``)."""
    return np.sign(x) + (x == 0)


def _is_none(t) -> bool:
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


# ---------------------------------------------------------------------------
# Adjoints of shape functions: selections put back in place, copies summed back

__all__ += ["split_grad", "slogdet_grad", "concatenate_grad", "stack_grad", "hstack_grad", "vstack_grad", "diagonal_grad", "tile_grad",
            "repeat_grad", "pad_grad", "sequence_join"]


def concatenate_grad(g, arrays, axis=0):
    """Cotangents of each of ``arrays`` in ``np.concatenate(arrays, axis)``, as a tuple."""
    if axis is None:
        sizes = [np.size(a) for a in arrays]
        parts = np.split(np.ravel(g), np.cumsum(sizes)[:-1])
    else:
        sizes = [np.shape(a)[axis] for a in arrays]
        parts = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
    return tuple(reshape_like(p, a) for p, a in zip(parts, arrays))


def stack_grad(g, arrays, axis=0):
    """Cotangents of each of ``arrays`` in ``np.stack(arrays, axis)``, as a tuple."""
    return tuple(reshape_like(np.take(g, i, axis=axis), a) for i, a in enumerate(arrays))


def hstack_grad(g, tup):
    """Cotangents of each of ``tup`` in ``np.hstack(tup)``, as a tuple."""
    axis = 0 if np.ndim(tup[0]) <= 1 else 1
    parts = concatenate_grad(g, tuple(np.atleast_1d(a) for a in tup), axis)
    return tuple(reshape_like(p, a) for p, a in zip(parts, tup))


def vstack_grad(g, tup):
    """Cotangents of each of ``tup`` in ``np.vstack(tup)``, as a tuple."""
    parts = concatenate_grad(g, tuple(np.atleast_2d(a) for a in tup), 0)
    return tuple(reshape_like(p, a) for p, a in zip(parts, tup))


def _take_range(g, ax, start, stop, shape):
    """``g``'s indices ``start:stop`` along axis ``ax``, as a new C array of ``shape`` (for Numba)."""
    gc = np.ascontiguousarray(g)
    g3 = gc.reshape(_around_jit(gc.shape, ax))
    return np.ascontiguousarray(g3[:, start:stop, :]).reshape(shape)


def _around(shape, ax):
    """``shape`` as three dimensions: those before axis ``ax`` flattened, ``ax``, those after (for Numba)."""
    pre = 1
    for k in range(ax):
        pre *= shape[k]
    post = 1
    for k in range(ax + 1, len(shape)):
        post *= shape[k]
    return (pre, shape[ax], post)


def _jit_sequence_helpers():
    import numba

    return numba.njit(_around), numba.njit(_take_range)


_around_jit, _take_range_jit = _jit_sequence_helpers()


def _sequence_impl(arrays, params: str, axis: str, count, seq: str = "arrays") -> object:
    """A Numba implementation returning one ``_take_range`` per element of the tuple ``arrays``.

    ``axis`` is the source of the (normalized) axis along which the elements sit in ``g``;
    ``count(i, t)`` the source of how many indices element ``i`` of type ``t`` takes there; ``seq``
    the parameter holding the tuple.
    """
    if not isinstance(arrays, types.BaseTuple) or not all(isinstance(t, types.Array) for t in arrays):
        raise TypingError("numbax: the adjoint of a sequence of arrays needs a tuple of arrays on cpu")
    lines = [f"def impl({params}):", f"    ax = {axis}", "    o = 0"]
    for i, t in enumerate(arrays):
        lines += [f"    c = {count(i, t)}", f"    p{i} = take(g, ax, o, o + c, {seq}[{i}].shape)", "    o += c"]
    lines.append(f"    return ({', '.join(f'p{i}' for i in range(len(arrays)))},)")
    return compile_source("\n".join(lines), take=_take_range_jit)


@overload(concatenate_grad)
def _concatenate_grad(g, arrays, axis=0):
    if isinstance(axis, types.NoneType):
        raise TypingError("numbax: the adjoint of np.concatenate(axis=None) is not available on cpu")
    axis_source = "0" if isinstance(axis, (types.Omitted, int)) else "axis if axis >= 0 else axis + g.ndim"
    return _sequence_impl(arrays, "g, arrays, axis=0", axis_source, lambda i, t: f"arrays[{i}].shape[ax]")


def all_scalars(items) -> bool:
    """Whether the Numba types ``items`` are all numbers or 0-d arrays (what ``np.stack`` lays along one axis)."""
    return all(isinstance(t, (types.Number, types.Boolean)) or (isinstance(t, types.Array) and t.ndim == 0)
               for t in items)


@overload(stack_grad)
def _stack_grad(g, arrays, axis=0):
    if isinstance(arrays, types.BaseTuple) and len(arrays) and all_scalars(arrays):  # a scalar's cotangent: one
        parts = "".join(f"g[{i}], " for i in range(len(arrays)))
        return compile_source(f"def impl(g, arrays, axis=0):\n{INDENT}return ({parts})")
    axis_source = "0" if isinstance(axis, (types.Omitted, int)) else "axis if axis >= 0 else axis + g.ndim"
    return _sequence_impl(arrays, "g, arrays, axis=0", axis_source, lambda i, t: "1")


@overload(hstack_grad)
def _hstack_grad(g, tup):
    if isinstance(tup, types.BaseTuple) and len(tup) and isinstance(tup[0], types.Array) and tup[0].ndim == 1:
        impl = _sequence_impl(tup, "g, tup", "0", lambda i, t: f"tup[{i}].shape[0]", "tup")
    else:
        impl = _sequence_impl(tup, "g, tup", "1", lambda i, t: f"tup[{i}].shape[1]", "tup")
    return impl


@overload(vstack_grad)
def _vstack_grad(g, tup):
    return _sequence_impl(tup, "g, tup", "0", lambda i, t: "1" if t.ndim == 1 else f"tup[{i}].shape[0]", "tup")


def diagonal_grad(g, a, offset=0, axis1=0, axis2=1):
    """Cotangent of ``a`` in ``np.diagonal(a, offset, axis1, axis2)``: ``g`` put back on that diagonal."""
    out = np.zeros(np.shape(a), dtype=np.result_type(g, np.float64))
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    n = np.shape(g)[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    view[..., rows, cols] = g
    return out


def tile_grad(g, A, reps):
    """Cotangent of ``A`` in ``np.tile(A, reps)``: the copies summed."""
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    shape = np.shape(A)
    n = max(len(shape), len(reps))
    shape_n = (1,) * (n - len(shape)) + tuple(shape)
    reps_n = (1,) * (n - len(reps)) + reps
    interleaved = tuple(v for pair in zip(reps_n, shape_n) for v in pair)
    summed = np.reshape(g, interleaved).sum(axis=tuple(range(0, 2 * n, 2)))
    return reshape_like(summed, A)


def repeat_grad(g, a, repeats, axis=None):
    """Cotangent of ``a`` in ``np.repeat(a, repeats, axis)``: each element's copies summed."""
    if axis is None:
        flat = np.zeros(np.size(a), dtype=np.result_type(g, np.float64))
        np.add.at(flat, np.repeat(np.arange(flat.size), repeats), np.ravel(g))
        return reshape_like(flat, a)
    n = np.shape(a)[axis]
    out = np.zeros(np.shape(a), dtype=np.result_type(g, np.float64))
    moved = np.moveaxis(out, axis, 0)
    np.add.at(moved, np.repeat(np.arange(n), repeats), np.moveaxis(g, axis, 0))
    return out


@overload(repeat_grad)
def _repeat_grad(g, a, repeats, axis=None):
    if not (axis is None or isinstance(axis, (types.NoneType, types.Omitted))) or \
            not isinstance(repeats, types.Integer):
        raise TypingError("numbax: on cpu the adjoint of np.repeat supports an integer count without axis")

    def impl(g, a, repeats, axis=None):
        flat = np.ascontiguousarray(g).reshape(-1)
        out = np.zeros(flat.size // repeats if repeats > 0 else np.asarray(a).size)  # no copies: no cotangent
        for i in range(out.size):
            out[i] = np.sum(flat[i * repeats:(i + 1) * repeats])
        return reshape_like(out, a)
    return impl


def pad_grad(g, array, pad_width, mode="constant"):
    """Cotangent of ``array`` in ``np.pad(array, pad_width)`` (constant mode): the middle of ``g``."""
    if mode != "constant":
        raise NotImplementedError(f"numbax: no derivative of np.pad with mode={mode!r}")
    shape = np.shape(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (len(shape), 2))
    index = tuple(slice(int(lo), int(lo) + n) for (lo, _), n in zip(widths, shape))
    return reshape_like(np.asarray(g)[index].copy(), array)


def split_grad(g, ary, indices_or_sections, axis=0):
    """Cotangent of ``ary`` in ``np.split(ary, indices_or_sections, axis)``, ``g`` a list of cotangents."""
    return np.concatenate([np.asarray(p, dtype=np.float64) for p in g], axis=axis)


def sequence_join(g, like, axis=0):
    """The arrays of the list ``g`` laid one after another along ``axis`` into an array of ``like``'s shape.

    The adjoint of ``concatenate_grad``, ``stack_grad``, ``hstack_grad`` and ``vstack_grad`` (each element
    fills as many indices along ``axis`` as its size gives: a stacked one, one); ``axis=None`` joins the
    flattened elements, as ``np.concatenate`` does.
    """
    shape = np.shape(like)
    if axis is None:
        return np.reshape(np.concatenate([np.ravel(p) for p in g]), shape)
    pre, _, post = _around(shape, axis % len(shape))
    return np.reshape(np.concatenate([np.reshape(p, (pre, -1, post)) for p in g], axis=1), shape)


@overload(sequence_join)
def _sequence_join(g, like, axis=0):
    if isinstance(g, (types.List, types.UniTuple)) and isinstance(g.dtype, types.Number) and \
            isinstance(like, types.Array) and like.ndim == 1:  # the cotangents of a stack of scalars

        dtype = np.result_type(as_dtype(like.dtype), as_dtype(g.dtype))  # a float32 stack's tangent is float32

        def join_scalars(g, like, axis=0):
            out = np.zeros(like.shape, dtype)
            for i, p in enumerate(g):
                out[i] = p
            return out
        return join_scalars
    if not (isinstance(g, (types.List, types.UniTuple)) and isinstance(g.dtype, types.Array)):
        raise TypingError("numbax: the adjoint of a sequence of arrays needs a list of arrays on cpu")
    if isinstance(axis, types.NoneType):
        raise TypingError("numbax: the adjoint of np.concatenate(axis=None) is not available on cpu")

    def impl(g, like, axis=0):
        ax = axis if axis >= 0 else axis + like.ndim
        out = np.zeros(like.shape)
        pre, _, post = _around_jit(like.shape, ax)
        out3 = out.reshape((pre, like.shape[ax], post))
        o = 0
        for p in g:
            c = p.size // (pre * post) if pre * post else 0
            out3[:, o:o + c, :] = np.ascontiguousarray(p).reshape((pre, c, post))
            o += c
        return out
    return impl


@overload(split_grad)
def _split_grad(g, ary, indices_or_sections, axis=0):
    if not (isinstance(g, types.List) and isinstance(g.dtype, types.Array)):
        raise TypingError("numbax: the adjoint of np.split needs a list of arrays")
    return lambda g, ary, indices_or_sections, axis=0: sequence_join(g, ary, axis)


def slogdet_grad(g, a):
    """Cotangent of ``a`` in ``np.linalg.slogdet(a)`` indexed: ``g`` holds the cotangents of (sign, logdet)."""
    return g[1] * np.linalg.inv(a).T


def _reverse_cumsum(g, ax):
    """The cumulative sum of ``g`` from the end along axis ``ax``, as a C array (for Numba)."""
    gc = np.ascontiguousarray(g)
    pre, n, post = _around_jit(gc.shape, ax)
    g3 = gc.reshape((pre, n, post))
    out = np.empty((pre, n, post), g3.dtype)
    for i in range(pre):
        for k in range(post):
            total = 0.0
            for j in range(n - 1, -1, -1):
                total += g3[i, j, k]
                out[i, j, k] = total
    return out


def _jit_reverse_cumsum():
    import numba

    return numba.njit(_reverse_cumsum)


_reverse_cumsum_jit = _jit_reverse_cumsum()


# ---------------------------------------------------------------------------
# Helpers of reverse mode's generated code that returns what the user receives


__all__ += ["scalar_output", "real_output", "grow_rows", "reserve_rows", "save_row"]  # noqa: F405


_NOT_SCALAR = ("Gradient only defined for scalar-output functions. Output had shape: {}.\nFor the derivative of a "
               "function with array output, use numbax.vjp, or numbax.jacrev/numbax.hessian.")


def scalar_output(out):
    """``out``, which must be a scalar: ``grad`` of a function with an array output raises JAX's TypeError."""
    if np.shape(out) != ():
        raise TypeError(_NOT_SCALAR.format(np.shape(out)))
    return out


_NOT_REAL = ("grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got {}. "
             "For the derivative of a function with complex, integer or bool output, use numbax.vjp directly.")


def real_output(out, where):
    """``out``, which must be real floating point: ``grad`` of a complex, integer or bool output raises JAX's
    TypeError at the user's line ``where`` (checked here where the output's dtype was not inferred)."""
    dtype = np.asarray(out).dtype
    if dtype.kind != "f":
        raise TypeError(f"{where}: " + _NOT_REAL.format(dtype))
    return out


@overload(real_output)
def _real_output(out, where):
    dtype = out.dtype if isinstance(out, types.Array) else out
    if isinstance(dtype, types.Float):
        return lambda out, where: out
    text = ": " + _NOT_REAL.format(np.dtype(str(dtype)) if isinstance(dtype, (types.Integer, types.Complex,
                                                                                types.Boolean)) else dtype)

    def impl(out, where):
        if len(text):  # always; a branch Numba cannot prune, so that the result is typed like ``out``
            raise TypeError(where + text)
        return out
    return impl


@overload(scalar_output)
def _scalar_output(out):
    if not isinstance(out, types.Array) or out.ndim == 0:
        return lambda out: out
    head, tail = _NOT_SCALAR.split("{}")
    head, tail = head + "(", ("," if out.ndim == 1 else "") + ")" + tail

    def impl(out):
        text = head
        for k in range(out.ndim):
            text += (", " if k else "") + str(out.shape[k])
        if len(text):  # always; a branch Numba cannot prune, so that the result is typed like ``out``
            raise TypeError(text + tail)
        return out
    return impl


def grow_rows(table):
    """A 2-D tape with twice the rows, holding ``table``'s (a ``while`` loop's table of saved scalars is full)."""
    grown = np.empty((2 * table.shape[0], table.shape[1]), table.dtype)
    grown[:table.shape[0]] = table
    return grown


def reserve_rows(table, rows):
    """``table`` if it has ``rows`` rows, else a copy with room for them (before a ``for`` loop)."""
    if rows <= table.shape[0]:
        return table
    grown = np.empty((max(rows, 2 * table.shape[0]), table.shape[1]), table.dtype)
    grown[:table.shape[0]] = table
    return grown


def _copied_rows(table, rows: str, check: List[str]):
    """A Numba implementation: after ``check``, ``table`` copied by loops into a new table of ``rows`` rows.

    A slice assignment would make Numba compile its broadcast error messages (seconds per process).
    """
    body = check + [f"grown = np.empty(({rows}, table.shape[1]), kind)", "for i in range(table.shape[0]):",
                    f"{INDENT}for j in range(table.shape[1]):", f"{INDENT}{INDENT}grown[i, j] = table[i, j]",
                    "return grown"]
    params = "table" if rows.startswith("2 *") else "table, rows"
    return compile_source(function_source(params, body), kind=as_dtype(table.dtype).type)


@overload(grow_rows)
def _grow_rows(table):
    return _copied_rows(table, "2 * table.shape[0]", [])


@overload(reserve_rows)
def _reserve_rows(table, rows):
    return _copied_rows(table, "max(rows, 2 * table.shape[0])", ["if rows <= table.shape[0]:", f"{INDENT}return table"])


_ROW_LENGTH = "a saved array's length changed between iterations of a loop"


def save_row(table, row, values):
    """Copy the 1-D array ``values`` into row ``row`` of ``table`` (a loop's tape of arrays of one length)."""
    if values.shape[0] != table.shape[1]:
        raise ValueError(_ROW_LENGTH)
    np.copyto(table[row], values)


@overload(save_row)
def _save_row(table, row, values):
    def impl(table, row, values):  # element by element: a slice assignment compiles broadcast errors
        if values.shape[0] != table.shape[1]:
            raise ValueError(_ROW_LENGTH)
        for k in range(values.shape[0]):
            table[row, k] = values[k]
    return impl
