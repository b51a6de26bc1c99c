"""arrays: NumPy's shape functions where Numba lacks them, or lacks the arguments users pass.

``diagonal`` and ``trace`` over any two axes, ``squeeze`` of named axes,
``atleast_1d``/``atleast_2d`` of a scalar, ``stack`` of scalars, ``tile``, ``pad`` (constant),
``repeat``/``flip``/``roll`` along an axis, and ``reshape`` of an array that is
not C-contiguous (a transposed one). Each helper is NumPy itself when called
from Python; inside ``numba.njit`` code an ``overload`` writes one explicit
loop nest for the array's ndim and the (compile-time) axes, indexing element
by element: no slice assignment, whose broadcasting checks cost Numba more to
compile than the whole nest. Where NumPy returns a view (``diagonal``, ``diag``
of a matrix, ``flip``, ``conj()`` of a real array, ``view()``) so does the helper:
a later write into the array shows through it, as in NumPy. Axes must be
constants there (``legalize`` writes them as literals);
shifts, offsets, widths and counts may be run-time values.

The adjoints that generated gradients call for these functions
(``rt.diagonal_grad``, ``rt.trace_grad``, ``rt.tile_grad``, ``rt.pad_grad``, ``rt.repeat_grad``
along an axis) are NumPy code in ``numbax.runtime.grad``; their Numba
implementations are registered here, beside the loop nests they mirror.

    >>> import numba
    >>> a = np.arange(6.0).reshape(2, 3)
    >>> numba.njit(lambda a: pad(a, ((1, 0), (0, 2)), 'constant', -1.0))(a)
    array([[-1., -1., -1., -1., -1.],
           [ 0.,  1.,  2., -1., -1.],
           [ 3.,  4.,  5., -1., -1.]])
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np
from numba import types
from numba.extending import register_jitable
from numba.core.errors import TypingError
from numba.np.numpy_support import as_dtype
from numpy.lib.stride_tricks import as_strided

from numbax.runtime import grad as _grad
from numbax.runtime.cached import overload
from numbax.runtime.loops import INDENT, compile_source, numpy_type
from numbax.runtime.statics import array_dtype, normalize_axes, static, static_value

__all__ = ["conj", "view_of", "diagonal", "trace", "squeeze", "atleast_1d", "atleast_2d", "tile", "pad", "repeat",
           "flip", "roll", "reshape", "stack", "clip"]


def conj(a):
    """``a.conj()``: ``a`` itself where it is real (NumPy's method returns the array, not a copy), else its
    complex conjugate (compiled)."""
    return np.conj(a) if np.iscomplexobj(a) else a


def view_of(a):
    """``a.view()``: a view of all of ``a`` (compiled; Numba's ``view`` needs a dtype)."""
    return a.view()


def diagonal(a, offset=0, axis1=0, axis2=1):
    """``np.diagonal(a, offset, axis1, axis2)``."""
    return np.diagonal(a, offset, axis1, axis2)


def trace(a, offset=0, axis1=0, axis2=1):
    """``np.trace(a, offset, axis1, axis2)``."""
    return np.trace(a, offset, axis1, axis2)


def squeeze(a, axis=None):
    """``np.squeeze(a, axis)``."""
    return np.squeeze(a, axis)


def atleast_1d(a):
    """``np.atleast_1d(a)``."""
    return np.atleast_1d(a)


def atleast_2d(a):
    """``np.atleast_2d(a)``."""
    return np.atleast_2d(a)


def stack(arrays, axis=0):
    """``np.stack(arrays, axis)``: of scalars (``jnp.stack([x, y])``) too, which Numba's takes arrays only."""
    return np.stack(arrays, axis)


def tile(A, reps):
    """``np.tile(A, reps)``."""
    return np.tile(A, reps)


def pad(array, pad_width, mode="constant", constant_values=0):
    """``np.pad(array, pad_width, mode, constant_values=constant_values)`` (NumPy takes ``constant_values`` in
    constant mode only)."""
    if mode != "constant":
        return np.pad(array, pad_width, mode)
    return np.pad(array, pad_width, mode, constant_values=constant_values)


def repeat(a, repeats, axis=None):
    """``np.repeat(a, repeats, axis)``."""
    return np.repeat(a, repeats, axis)


def flip(m, axis=None):
    """``np.flip(m, axis)``."""
    return np.flip(m, axis)


def roll(a, shift, axis=None):
    """``np.roll(a, shift, axis)``."""
    return np.roll(a, shift, axis)


def reshape(a, shape):
    """``np.reshape(a, shape)``."""
    return np.reshape(a, shape)


def clip(a, a_min, a_max):
    """``np.clip(a, a_min, a_max)``."""
    return np.clip(a, a_min, a_max)


# ---- source ---------------------------------------------------------------------------------------


def _index(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "()"


def _lines(lines: Sequence[str]) -> List[str]:
    return [line for text in lines for line in text.split("\n")]


def _nest(sizes: Sequence[str], body: Sequence[str]) -> List[str]:
    """``for i<d> in range(<size>)`` for each size, around ``body``."""
    lines = [INDENT * d + f"for i{d} in range({n}):" for d, n in enumerate(sizes)]
    return lines + [INDENT * len(sizes) + line for line in _lines(body)]


def _function(signature: str, lines: Sequence[str]) -> str:
    return "\n".join([f"def impl({signature}):"] + [INDENT + line for line in _lines(lines)])


def _shape(ndim: int, array: str, prefix: str = "n") -> List[str]:
    return [f"{prefix}{d} = {array}.shape[{d}]" for d in range(ndim)]


def _tuple(items: Sequence[str]) -> str:
    return f"({', '.join(items)}{',' if len(items) == 1 else ''})"


def _copy(array: str, shape: str, dtype: np.dtype, near: str, far: str, back: bool) -> Tuple[str, str]:
    """(allocation, copy) of ``out[near] = array[far]`` over a new array of ``shape``; ``back``: its adjoint,
    ``out[far] += g[near]`` over zeros of ``array``'s shape."""
    if back:
        return f"out = np.zeros({array}.shape, {numpy_type(dtype)})", f"out[{far}] += g[{near}]"
    return f"out = np.empty({shape}, {numpy_type(dtype)})", f"out[{near}] = {array}[{far}]"


def _axis(fn: str, ndim: int, axis) -> int:
    return normalize_axes(fn, ndim, static(fn, "axis", axis), single=True)[0]


# ---- diagonal, trace --------------------------------------------------------------------------------


def _diagonal_plan(fn: str, a, axis1, axis2) -> Tuple[int, int, int, List[int]]:
    """(ndim, axis1, axis2, the other axes): the diagonal runs along ``axis1`` and ``axis2``."""
    array_dtype(fn, a)
    if a.ndim < 2:
        raise TypingError(f"numbax.runtime.{fn}: diag requires an array of at least two dimensions")
    first = _axis(fn, a.ndim, axis1)
    second = _axis(fn, a.ndim, axis2)
    if first == second:
        raise TypingError(f"numbax.runtime.{fn}: axis1 and axis2 cannot be the same")
    return a.ndim, first, second, [d for d in range(a.ndim) if d not in (first, second)]


def _diagonal_lines(ndim: int, first: int, second: int, rest: List[int]) -> Tuple[List[str], List[str]]:
    """Lines that set ``n`` (the diagonal's length) and the index of ``a`` at ``(rest..., t)``."""
    lines = _shape(ndim, "a") + ["r0 = -offset if offset < 0 else 0", "c0 = offset if offset > 0 else 0",
                                 f"n = min(n{first} - r0, n{second} - c0)", "n = n if n > 0 else 0"]
    index = []
    for d in range(ndim):
        index.append("t + r0" if d == first else "t + c0" if d == second else f"i{rest.index(d)}")
    return lines, index


def _diagonal_grad_source(ndim: int, first: int, second: int, rest: List[int], dtype: np.dtype) -> str:
    """The cotangent ``g`` of ``a``'s diagonal put back on an array of ``a``'s shape."""
    lines, index = _diagonal_lines(ndim, first, second, rest)
    diagonal = _index([f"i{k}" for k in range(len(rest))] + ["t"])
    alloc, copy = _copy("a", _tuple([f"n{d}" for d in rest] + ["n"]), dtype, diagonal, _index(index), True)
    lines.append(alloc)
    lines += _nest([f"n{d}" for d in rest], ["for t in range(n):", INDENT + copy])
    return _function("g, a, offset=0, axis1=0, axis2=1", lines + ["return out"])


def _trace_grad_source(ndim: int, first: int, second: int, rest: List[int], dtype: np.dtype, g_ndim: int) -> str:
    """The cotangent ``g`` of ``a``'s traces (one per index of the other axes) put on each diagonal."""
    lines, index = _diagonal_lines(ndim, first, second, rest)
    near = f"g[{_index([f'i{k}' for k in range(len(rest))])}]" if rest else "g[()]" if g_ndim == 0 else "g"
    lines.append(f"out = np.zeros(a.shape, {numpy_type(dtype)})")
    lines += _nest([f"n{d}" for d in rest], ["for t in range(n):", f"{INDENT}out[{_index(index)}] += {near}"])
    return _function("g, a, offset=0, axis1=0, axis2=1", lines + ["return out"])


def _diagonal_view_source(ndim: int, first: int, second: int, rest: List[int]) -> str:
    """The diagonal of ``a`` as a view of it (``as_strided``: one step along both axes at once)."""
    lines, _ = _diagonal_lines(ndim, first, second, rest)
    start = ", ".join("r0:" if d == first else "c0:" if d == second else ":" for d in range(ndim))
    shape = _tuple([f"n{d}" for d in rest] + ["n"])
    strides = _tuple([f"a.strides[{d}]" for d in rest] + [f"a.strides[{first}] + a.strides[{second}]"])
    return _function("a, offset=0, axis1=0, axis2=1",
                     lines + [f"return as_strided(a[{start}], shape={shape}, strides={strides})"])


def _trace_source(ndim: int, first: int, second: int, rest: List[int], dtype: np.dtype) -> str:
    lines, index = _diagonal_lines(ndim, first, second, rest)
    zero = f"{numpy_type(dtype)}(0)"
    kept = [f"i{k}" for k in range(len(rest))]
    body = [f"s = {zero}", "for t in range(n):", f"{INDENT}s += a[{_index(index)}]"]
    if not rest:
        return _function("a, offset=0, axis1=0, axis2=1", lines + body + ["return s"])
    lines.append(f"out = np.empty({_tuple([f'n{d}' for d in rest])}, {numpy_type(dtype)})")
    lines += _nest([f"n{d}" for d in rest], body + [f"out[{_index(kept)}] = s"])
    return _function("a, offset=0, axis1=0, axis2=1", lines + ["return out"])


@overload(conj)
def _conj(a):
    if isinstance(a, types.Array) and not isinstance(a.dtype, types.Complex) or isinstance(a, (types.Integer,
                                                                                              types.Float,
                                                                                              types.Boolean)):
        return lambda a: a
    return lambda a: np.conj(a)


@overload(view_of)
def _view_of(a):
    if isinstance(a, types.Array) and a.ndim > 0:
        return lambda a: a[:]
    return lambda a: a


@overload(diagonal, prefer_literal=True)
def _diagonal(a, offset=0, axis1=0, axis2=1):
    plan = _diagonal_plan("diagonal", a, axis1, axis2)
    return compile_source(_diagonal_view_source(*plan), as_strided=as_strided)



@overload(trace, prefer_literal=True)
def _trace(a, offset=0, axis1=0, axis2=1):
    plan = _diagonal_plan("trace", a, axis1, axis2)
    return compile_source(_trace_source(*plan, np.trace(np.ones((1, 1), as_dtype(a.dtype))).dtype))


@overload(_grad.diagonal_grad, prefer_literal=True)
def _diagonal_grad(g, a, offset=0, axis1=0, axis2=1):
    plan = _diagonal_plan("diagonal_grad", a, axis1, axis2)
    return compile_source(_diagonal_grad_source(*plan, _grad.cotangent_dtype(array_dtype("diagonal_grad", g))))


@overload(_grad.trace_grad, prefer_literal=True)
def _trace_grad(g, a, offset=0, axis1=0, axis2=1):
    plan = _diagonal_plan("trace_grad", a, axis1, axis2)
    g_dtype = array_dtype("trace_grad", g) if isinstance(g, types.Array) else as_dtype(g)
    g_ndim = g.ndim if isinstance(g, types.Array) else -1
    return compile_source(_trace_grad_source(*plan, _grad.cotangent_dtype(g_dtype), g_ndim))


# ---- squeeze, atleast_1d, atleast_2d, reshape ---------------------------------------------------------


@overload(squeeze, prefer_literal=True)
def _squeeze(a, axis=None):
    array_dtype("squeeze", a)
    value = static("squeeze", "axis", axis)
    if value is None:
        raise TypingError("numbax.runtime.squeeze: without axis, which axes go depends on the run-time shape, "
                          "and compiled code must know the result's ndim; name them: np.squeeze(a, axis=1)")
    axes = normalize_axes("squeeze", a.ndim, value)
    checks = [f"if a.shape[{d}] != 1:\n    raise ValueError('cannot select an axis to squeeze out which has size "
              f"not equal to one')" for d in axes]
    shape = _tuple([f"a.shape[{d}]" for d in range(a.ndim) if d not in axes])
    array = "a" if a.layout == "C" else "np.ascontiguousarray(a)"
    return compile_source(_function("a, axis=None", checks + [f"return {array}.reshape({shape})"]))


def _at_least(fn, ndim: int) -> None:
    """A scalar becomes an array of ``ndim`` dimensions; arrays go to Numba's own function."""
    @overload(fn)
    def impl(a):
        if isinstance(a, (types.Number, types.Boolean)):
            shape = (1,) * ndim
            return lambda a: np.full(shape, a)
        numpy_fn = getattr(np, fn.__name__)
        return lambda a: numpy_fn(a)


_at_least(atleast_1d, 1)
_at_least(atleast_2d, 2)


@overload(stack, prefer_literal=True, numbers=True)  # a stack of numbers too: compiled once per machine
def _stack(arrays, axis=0):
    """A tuple of scalars (numbers, 0-d arrays) becomes a 1-d array in NumPy's dtype of them, along axis 0 or -1,
    the only axes of one dimension; arrays go to Numba's own ``np.stack``."""
    items = list(arrays) if isinstance(arrays, types.BaseTuple) else None
    if not items or not _grad.all_scalars(items):
        return lambda arrays, axis=0: np.stack(arrays, axis)
    if static_value(axis) not in (0, -1):
        raise TypingError(f"numbax.runtime.stack: a stack of {len(items)} scalars has one axis, so `axis` must be "
                          f"the constant 0 or -1, got {axis}")
    dtype = np.result_type(*(as_dtype(t.dtype if isinstance(t, types.Array) else t) for t in items))
    reads = [f"arrays[{k}]" + ("[()]" if isinstance(t, types.Array) else "") for k, t in enumerate(items)]
    lines = [f"out = np.empty({len(items)}, np.{dtype.name})"] + \
        [f"out[{k}] = {read}" for k, read in enumerate(reads)] + ["return out"]
    return compile_source(_function("arrays, axis=0", lines))


@register_jitable
def view_strides(shape, strides, itemsize, new_shape):
    """NumPy's reshape without a copy (``_attempt_nocopy_reshape``, C order): ``(True, strides)`` of a view of
    ``new_shape`` over an array of ``shape`` and ``strides``, or ``(False, _)`` where a copy must be made."""
    old_dims, old_strides = [], []
    for d in range(len(shape)):  # axes of length 1: their strides do not matter
        if shape[d] != 1:
            old_dims.append(shape[d])
            old_strides.append(strides[d])
    new_strides = np.zeros(len(new_shape), np.int64)
    old_n, new_n = len(old_dims), len(new_shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < new_n and oi < old_n:
        np_, op = new_shape[ni], old_dims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new_shape[nj]
                nj += 1
            else:
                op *= old_dims[oj]
                oj += 1
        for ok in range(oi, oj - 1):  # the old axes merged must be contiguous with each other
            if old_strides[ok] != old_dims[ok + 1] * old_strides[ok + 1]:
                return False, new_strides
        new_strides[nj - 1] = old_strides[oj - 1]
        for nk in range(nj - 1, ni, -1):
            new_strides[nk - 1] = new_strides[nk] * new_shape[nk]
        ni, nj = nj, nj + 1
        oi, oj = oj, oj + 1
    last = new_strides[ni - 1] if ni >= 1 else itemsize
    for nk in range(ni, new_n):  # trailing axes of length 1
        new_strides[nk] = last
    return True, new_strides


def _reshape_source(ndim: int, given: List[str]) -> str:
    """A reshape to ``ndim`` axes given as ``given`` (one may be -1): NumPy's view where the strides allow
    one (``x[::2].reshape(-1)`` writes through to ``x``), else a copy."""
    dims = _tuple([f"new[{d}]" for d in range(ndim)])
    lines = [f"new = np.array({_tuple(given)}, np.int64)", "known, free = 1, -1",
             "for d in range(new.size):", INDENT + "if new[d] < 0:", 2 * INDENT + "free = d",
             INDENT + "else:", 2 * INDENT + "known *= new[d]",
             "if free >= 0:", INDENT + "new[free] = a.size // known if known else 0",
             "ok, strides = view_strides(a.shape, a.strides, a.itemsize, new)",
             "if not ok or a.size == 0:", INDENT + f"return np.ascontiguousarray(a).reshape({dims})",
             f"return as_strided(a, shape={dims}, strides={_tuple([f'strides[{d}]' for d in range(ndim)])})"]
    return _function("a, shape", lines)


@overload(reshape)
def _reshape(a, shape):
    if isinstance(a, types.Array) and a.layout == "C":
        return lambda a, shape: a.reshape(shape)
    if not isinstance(a, types.Array):
        return lambda a, shape: np.ascontiguousarray(a).reshape(shape)
    given = [f"shape[{d}]" for d in range(len(shape))] if isinstance(shape, types.BaseTuple) else ["shape"]
    return compile_source(_reshape_source(len(given), given), view_strides=view_strides, as_strided=as_strided)


# ---- tile --------------------------------------------------------------------------------------------


def _reps(fn: str, A, reps) -> Tuple[int, List[str]]:
    """(the result's ndim, the source of each axis's repetitions), ``reps`` an int or a tuple of ints."""
    array_dtype(fn, A)
    if isinstance(reps, types.Integer):
        given = ["reps"]
    elif isinstance(reps, types.BaseTuple) and all(isinstance(t, types.Integer) for t in reps.types):
        given = [f"reps[{i}]" for i in range(len(reps.types))]
    else:
        raise TypingError(f"numbax.runtime.{fn}: reps must be an integer or a tuple of integers, got {reps}")
    ndim = max(A.ndim, len(given))
    return ndim, ["1"] * (ndim - len(given)) + given


def _tile_source(fn: str, A, reps, dtype: np.dtype, back: bool) -> str:
    """``A`` copied to every tile of ``out``, or (``back``) every tile of the cotangent ``g`` summed into ``A``'s
    shape; ``s<d>`` is ``A``'s size on axis ``d`` of the result (1 where ``A`` has fewer axes)."""
    ndim, counts = _reps(fn, A, reps)
    pad = ndim - A.ndim
    lines = [f"s{d} = 1" if d < pad else f"s{d} = A.shape[{d - pad}]" for d in range(ndim)]
    lines += [f"r{d} = {r}" for d, r in enumerate(counts)]
    tile = _index([f"i{d}" for d in range(ndim)])
    source = _index([f"i{d} % s{d}" for d in range(pad, ndim)])
    alloc, copy = _copy("A", _tuple([f"s{d} * r{d}" for d in range(ndim)]), dtype, tile, source, back)
    lines.append(alloc)
    lines += _nest([f"s{d} * r{d}" for d in range(ndim)], [copy])
    return _function(f"{'g, ' if back else ''}A, reps", lines + ["return out"])


@overload(tile)
def _tile(A, reps):
    return compile_source(_tile_source("tile", A, reps, array_dtype("tile", A), back=False))


@overload(_grad.tile_grad)
def _tile_grad(g, A, reps):
    return compile_source(_tile_source("tile_grad", A, reps, _grad.cotangent_dtype(array_dtype("tile_grad", g)), back=True))


# ---- pad ---------------------------------------------------------------------------------------------


def _is_int_tuple(t, size=None) -> bool:
    return isinstance(t, types.BaseTuple) and all(isinstance(i, types.Integer) for i in t.types) and \
        (size is None or len(t.types) == size)


def _widths(fn: str, ndim: int, pad_width) -> List[Tuple[str, str]]:
    """The source of each axis's (before, after) widths, from NumPy's forms of ``pad_width``."""
    if isinstance(pad_width, types.Integer):
        return [("pad_width", "pad_width")] * ndim
    if _is_int_tuple(pad_width, 1):
        return [("pad_width[0]", "pad_width[0]")] * ndim
    if _is_int_tuple(pad_width, 2):
        return [("pad_width[0]", "pad_width[1]")] * ndim
    if isinstance(pad_width, types.BaseTuple) and all(_is_int_tuple(t) for t in pad_width.types):
        pairs = [(f"pad_width[{i}][0]", f"pad_width[{i}][{len(t.types) - 1}]") for i, t in enumerate(pad_width.types)]
        if len(pairs) == 1:
            return pairs * ndim
        if len(pairs) == ndim:
            return pairs
    raise TypingError(f"numbax.runtime.{fn}: pad_width must be an int, a pair, or one pair per axis "
                      f"of the {ndim}-d array, got {pad_width}")


def _constant_mode(fn: str, mode) -> None:
    if static(fn, "mode", mode) != "constant":
        raise TypingError(f"numbax.runtime.{fn}: only mode='constant' is supported in compiled code")


@overload(pad, prefer_literal=True)
def _pad(array, pad_width, mode="constant", constant_values=0):
    dtype = array_dtype("pad", array)
    _constant_mode("pad", mode)
    if not isinstance(constant_values, (types.Number, types.Boolean, types.Omitted, int, float)):
        raise TypingError("numbax.runtime.pad: constant_values must be one number in compiled code")
    widths = _widths("pad", array.ndim, pad_width)
    lines = [f"lo{d} = {lo}\nhi{d} = {hi}" for d, (lo, hi) in enumerate(widths)] + _shape(array.ndim, "array")
    shape = _tuple([f"lo{d} + n{d} + hi{d}" for d in range(array.ndim)])
    lines.append(f"out = np.full({shape}, constant_values, {numpy_type(dtype)})")
    target = [f"i{d} + lo{d}" for d in range(array.ndim)]
    lines += _nest([f"n{d}" for d in range(array.ndim)],
                   [f"out[{_index(target)}] = array[{_index([f'i{d}' for d in range(array.ndim)])}]"])
    return compile_source(_function("array, pad_width, mode='constant', constant_values=0", lines + ["return out"]))


@overload(_grad.pad_grad, prefer_literal=True)
def _pad_grad(g, array, pad_width, mode="constant"):
    dtype = _grad.cotangent_dtype(array_dtype("pad_grad", g))
    _constant_mode("pad_grad", mode)
    array_dtype("pad_grad", array)
    ndim = array.ndim
    lines = [f"lo{d} = {lo}" for d, (lo, _) in enumerate(_widths("pad_grad", ndim, pad_width))]
    lines += _shape(ndim, "array") + [f"out = np.empty(array.shape, {numpy_type(dtype)})"]
    source = [f"i{d} + lo{d}" for d in range(ndim)]
    lines += _nest([f"n{d}" for d in range(ndim)], [f"out[{_index([f'i{d}' for d in range(ndim)])}] = "
                                                     f"g[{_index(source)}]"])
    return compile_source(_function("g, array, pad_width, mode='constant'", lines + ["return out"]))


# ---- repeat, flip, roll along axes ------------------------------------------------------------------------


def _repeat_lines(fn: str, a, repeats, axis) -> Tuple[int, List[str]]:
    """(the axis, lines that set ``src``: for each index along it of the result, the index in ``a``)."""
    array_dtype(fn, a)
    ax = _axis(fn, a.ndim, axis)
    if isinstance(repeats, types.Integer):
        lines = ["if repeats < 0:\n    raise ValueError('negative dimensions are not allowed')",
                 f"src = np.empty(a.shape[{ax}] * repeats, np.intp)",
                 "for j in range(src.size):\n    src[j] = j // repeats"]
    elif isinstance(repeats, types.Array) and repeats.ndim == 1 and isinstance(repeats.dtype, types.Integer):
        lines = [f"if repeats.size != a.shape[{ax}]:\n    raise ValueError('operands could not be broadcast together')",
                 "src = np.empty(np.sum(repeats), np.intp)", "j = 0",
                 "for k in range(repeats.size):\n    for _ in range(repeats[k]):\n        src[j] = k\n        j += 1"]
    else:
        raise TypingError(f"numbax.runtime.{fn}: repeats must be an integer or a 1-d integer array, got {repeats}")
    return ax, lines


def _along(ndim: int, ax: int, value: str) -> List[str]:
    """An index: ``i<d>`` on each axis, ``value`` on axis ``ax``."""
    return [value if d == ax else f"i{d}" for d in range(ndim)]


@overload(repeat, prefer_literal=True)
def _repeat(a, repeats, axis=None):
    if static("repeat", "axis", axis) is None:
        return lambda a, repeats, axis=None: np.repeat(a, repeats)
    ax, lines = _repeat_lines("repeat", a, repeats, axis)
    sizes = ["src.size" if d == ax else f"a.shape[{d}]" for d in range(a.ndim)]
    lines.append(f"out = np.empty({_tuple(sizes)}, {numpy_type(as_dtype(a.dtype))})")
    copy = f"out[{_index(_along(a.ndim, ax, f'i{ax}'))}] = a[{_index(_along(a.ndim, ax, f'src[i{ax}]'))}]"
    lines += _nest(sizes, [copy])
    return compile_source(_function("a, repeats, axis=None", lines + ["return out"]))


@overload(_grad.repeat_grad, prefer_literal=True)
def _repeat_grad(g, a, repeats, axis=None):
    if static("repeat_grad", "axis", axis) is None:
        raise TypingError("numbax.runtime.repeat_grad: along an axis only here")
    ax, lines = _repeat_lines("repeat_grad", a, repeats, axis)
    lines.append(f"out = np.zeros(a.shape, {numpy_type(_grad.cotangent_dtype(array_dtype('repeat_grad', g)))})")
    lines += _nest([f"g.shape[{d}]" for d in range(a.ndim)],
                   [f"out[{_index(_along(a.ndim, ax, f'src[i{ax}]'))}] += g[{_index(_along(a.ndim, ax, f'i{ax}'))}]"])
    return compile_source(_function("g, a, repeats, axis=None", lines + ["return out"]))


@overload(flip, prefer_literal=True)
def _flip(m, axis=None):
    array_dtype("flip", m)
    axes = normalize_axes("flip", m.ndim, static("flip", "axis", axis))
    steps = ", ".join("::-1" if d in axes else ":" for d in range(m.ndim))
    return compile_source(_function("m, axis=None", [f"return m[{steps}]"]))  # a view, as NumPy's


@overload(clip)
def _clip(a, a_min, a_max):
    """NumPy's own definition, ``minimum(maximum(a, a_min), a_max)``: Numba's ``np.clip`` keeps ``a``'s shape where
    bounds of more dimensions broadcast it, ignores a NaN bound, takes no number to clip, and no call without
    bounds (which NumPy 2 copies)."""
    low, high = not _grad._is_none(a_min), not _grad._is_none(a_max)
    if low and high:
        return lambda a, a_min, a_max: np.minimum(np.maximum(a, a_min), a_max)
    if low:
        return lambda a, a_min, a_max: np.maximum(a, a_min)
    if high:
        return lambda a, a_min, a_max: np.minimum(a, a_max)
    if isinstance(a, types.Array):
        return lambda a, a_min, a_max: a.copy()
    return lambda a, a_min, a_max: a


@overload(roll, prefer_literal=True)
def _roll(a, shift, axis=None):
    dtype = array_dtype("roll", a)
    value = static("roll", "axis", axis)
    if value is None:
        return lambda a, shift, axis=None: np.roll(a, shift)
    axes = (value,) if isinstance(value, int) else value
    axes = [normalize_axes("roll", a.ndim, d, single=True)[0] for d in axes]
    if isinstance(shift, types.Integer):
        shifts = ["shift"] * len(axes)
    elif _is_int_tuple(shift, len(axes)):
        shifts = [f"shift[{i}]" for i in range(len(axes))]
    else:
        raise TypingError("numbax.runtime.roll: shift must be an integer, or a tuple with one per axis")
    lines = _shape(a.ndim, "a") + [f"k{d} = 0" for d in range(a.ndim)]
    lines += [f"k{d} = (k{d} + {s}) % n{d} if n{d} else 0" for d, s in zip(axes, shifts)]
    lines.append(f"out = np.empty(a.shape, {numpy_type(dtype)})")
    target = [f"(i{d} + k{d}) % n{d}" if d in axes else f"i{d}" for d in range(a.ndim)]
    lines += _nest([f"n{d}" for d in range(a.ndim)],
                   [f"out[{_index(target)}] = a[{_index([f'i{d}' for d in range(a.ndim)])}]"])
    return compile_source(_function("a, shift, axis=None", lines + ["return out"]))
