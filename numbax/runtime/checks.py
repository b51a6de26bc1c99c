"""Run-time checks of what the user wrote (``run_time_checks`` emits the calls): each raises NumPy's or
Python's error, as a numbax error at the user's ``where`` ("file:line:column").

- ``check_index(x, i, axis, where)``: ``i`` indexes ``x`` along ``axis`` (``IndexError``, NumPy's "index 10
  is out of bounds for axis 0 with size 4"). Only an integer into an array is checked; anything else (a
  tuple's index, an index array, a boolean) is left to the indexing itself. Numba makes that choice by type
  when compiling, so a check costs two comparisons, and nothing where it does not apply.
- ``check_extent(i, n, axis, where)``: ``check_index`` of an array of size ``n`` along ``axis`` that the code no
  longer makes (fusion computes its elements where they are read), for an integer ``i``.
- ``check_span(x, start, stop, scale, shift, axis, where)``: every ``scale * i + shift`` for ``i`` in
  ``range(start, stop)`` indexes ``x`` along ``axis`` (``scale`` 0 or 1), raising ``check_index``'s error for
  the first that does not: the checks of a loop's iterations, made once before the loop.
- ``check_divisor(d, message, where)``: a Python number's divisor is not zero (``ZeroDivisionError``).
- ``check_power(b, e, message, where)``: an integer's integer exponent is not negative (``ValueError``).
- ``check_item(x, where)``: ``x.item()`` of an array of one element (``ValueError``).
- ``check_bound(assigned, message, where)``: a variable only some paths assign was assigned on this one
  (``UnboundLocalError``).
- ``check_real(x, message, where)``: a value a derivative rule checked for real numbers only meets is not
  complex (numbax's refusal, where its dtype was not known when compiling).
- ``check_weak_int(k, low, high, message, where)``: a Python int lies in the range of the integer dtype NumPy 2
  computes it in (``OverflowError``).
- ``check_shift(k, bits, where)``: a shift count lies in ``0..bits - 1`` (NumPy's 0 or -1 beyond is refused).
- ``check_broadcast(a, b, where)``: two arrays broadcast together (``ValueError``).
- ``check_in_place(x, y, where)``: ``x op= y`` of arrays fits its result into ``x`` (``ValueError``).
- ``check_store(target, y, where)``: ``x[i:j] = y`` fits the array ``y`` into the part it writes (``ValueError``).
- ``check_where(condition, x, y, where)``: ``np.where``'s operands broadcast together (``ValueError``).
- ``check_concatenate(arrays, axis, where)``, ``check_hstack(arrays, where)``, ``check_vstack(arrays, where)``,
  ``check_stack(arrays, where)``: the arrays joined fit (``ValueError``).
- ``check_dot(a, b, where)``, ``check_matmul(a, b, where)``: the contracted dims agree (``ValueError``).
- ``check_reshape(x, shape, where)``: ``shape`` has ``x``'s size (``ValueError``).
- ``check_list_length(n, where)``: a list made at run time that starts empty gets an item (``ValueError``);
  ``check_list_item(items, item, where)``: its array ``item`` has the shape of the others (``ValueError``).
- ``check_row(rows, value, where)``: one example's output (``vmap``), or one step's (``lax.scan``), has the
  shape of the rows it is stacked into, where NumPy's assignment would broadcast it (``ValueError``).
- ``check_carried(x, length, where)``: the array of one dimension a loop carries has the ``length`` its body
  gives it (``ValueError``): where the code keeps that array's elements as numbers (``scalarize``).
- ``check_scatter(length, size, tiled, where)``: ``psum_scatter``'s scattered dimension has the axis's size
  (``tiled``: a multiple of it) (``ValueError``).
- ``check_key(key, where)``: a function of ``numbax.random`` got a key of two words (a ``uint32``
  array of one dimension, which the compiler knows, of length 2) (``ValueError``).
- ``check_devices(size, count, exact, where)``: ``pmap``'s mapped axis fits its devices: ``size`` equal to
  ``count`` (``exact``: the devices were passed) or at most ``count`` (``ValueError``, JAX's text).

The helpers are plain Python (the ``python`` backend calls them) and compile in Numba's nopython mode. An
error is raised with a constant template and the numbers it needs (ints, shapes as tuples), and its message is
written in Python (``numbax.error_text``): text built in nopython mode would cost seconds of compilation on
every first call, as Numba compiles a function's error paths with it. The checks of numbers and of one index
(``check_index``, ``check_extent``, ``check_divisor``, ``check_power``, ``check_shift``, ...) are Numba's own
``overload``s: a few comparisons, often in a loop's body over elements, inlined into their caller, where code
loaded from the disk cache would be a call. The checks of arrays' shapes (``check_broadcast``,
``check_reshape``, ``check_concatenate``, ``check_row``, ``check_span``, ...) each cost 0.05 to 0.3 s to
compile per signature, in every process anew: their implementations for arrays are
``numbax.runtime.cached``'s, compiled once per machine. Those that stand before a reshape, a join, a
product, a row of ``vmap`` or a loop are called by symbol (``called``), their code not optimized again in
each caller; an elementwise operation's (``check_broadcast``, ``check_in_place``, ``check_store``,
``check_where``) is linked in to be inlined, as a loop over small arrays makes it in every iteration (called,
the Lotka-Volterra sensitivity's RK4 steps took 3% longer).
"""
from __future__ import annotations

import functools
import numbers
from typing import Callable

import numpy as np
from numba import literal_unroll, types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from numbax.errors import NumbaxComplexDerivativeError, NumbaxEmptyListError, NumbaxIndexError, \
    NumbaxIntegerPowerError, NumbaxMaskShapeError, NumbaxOverflowError, NumbaxShapeError, NumbaxUnboundLocalError, \
    NumbaxUnimplementedValueError, NumbaxZeroDivisionError
from numbax.runtime import cached

__all__ = ["check_index", "check_extent", "check_span", "check_divisor", "check_power", "check_shift", "check_item",
           "check_weak_int", "check_bound", "check_real", "check_broadcast", "check_in_place", "check_store",
           "check_where", "check_concatenate", "check_hstack", "check_vstack", "check_stack", "check_dot",
           "check_vdot", "check_matmul", "check_reshape", "check_list_length", "check_list_item",
           "check_row", "check_scatter", "check_devices", "check_key", "check_carried"]


def _compiled_once(called: bool) -> Callable[[Callable], Callable]:
    """A decorator that registers a check (plain Python that Numba compiles) as its own implementation in
    Numba, its compiled form for array arguments kept in the runtime's disk cache (``numbax.runtime.cached``).
    ``called``: generated code calls it by symbol; otherwise its code is linked into the caller, to be inlined
    (an elementwise operation's check, which a loop over small arrays makes in every iteration)."""
    def register(check: Callable) -> Callable:
        @functools.wraps(check)
        def implementation(*args, **kwargs):
            return check

        cached.overload(check, called=called)(implementation)
        return check

    return register


def check_index(x, i, axis: int, where: str) -> None:
    """Raise ``NumbaxIndexError`` at ``where`` unless ``i`` indexes ``x`` along ``axis`` (negative: from the
    last axis): an integer, every element of an integer array, or a boolean mask whose shape is that of the
    axes it stands for (NumPy's ``IndexError``s)."""
    if not isinstance(x, np.ndarray):
        return
    a = axis if axis >= 0 else x.ndim + axis
    if isinstance(i, numbers.Integral) and not isinstance(i, (bool, np.bool_)):
        if not -x.shape[a] <= i < x.shape[a]:
            _out_of_bounds(int(i), x.shape[a], a, where)
    elif isinstance(i, np.ndarray) and i.dtype.kind in "iu":
        outside = (i >= x.shape[a]) | (i < -x.shape[a])
        if outside.any():
            _out_of_bounds(int(i[outside].flat[0]), x.shape[a], a, where)
    elif isinstance(i, np.ndarray) and i.dtype == np.bool_:
        for d in range(i.ndim):
            if a + d >= x.ndim or i.shape[d] != x.shape[a + d]:
                _mask_mismatch(a + d, x.shape[a + d] if a + d < x.ndim else 0, i.shape[d], where)


@register_jitable
def _out_of_bounds(i, n, axis, where):
    raise NumbaxIndexError("index {} is out of bounds for axis {} with size {}", where, i, axis, n)


@register_jitable
def _mask_mismatch(axis, n, m, where):
    raise NumbaxMaskShapeError("boolean index did not match indexed array along axis {}; size of axis is {} but size of "
                           "corresponding boolean axis is {}", where, axis, n, m)


@cached.overload(check_index)
def _check_index(x, i, axis, where):
    if isinstance(x, types.Array) and isinstance(i, types.Integer):
        def impl(x, i, axis, where):
            a = axis if axis >= 0 else x.ndim + axis
            n = x.shape[a]
            if i >= n or i < -n:
                _out_of_bounds(i, n, a, where)
        return impl
    if isinstance(x, types.Array) and isinstance(i, types.Array) and isinstance(i.dtype, types.Integer):
        def every_element(x, i, axis, where):
            a = axis if axis >= 0 else x.ndim + axis
            n = x.shape[a]
            for k in i.flat:
                if k >= n or k < -n:
                    _out_of_bounds(k, n, a, where)
        return every_element
    if isinstance(x, types.Array) and isinstance(i, types.Array) and isinstance(i.dtype, types.Boolean):
        def mask_shape(x, i, axis, where):
            a = axis if axis >= 0 else x.ndim + axis
            for d in range(i.ndim):
                n = x.shape[a + d] if a + d < x.ndim else 0
                if a + d >= x.ndim or i.shape[d] != n:
                    _mask_mismatch(a + d, n, i.shape[d], where)
        return mask_shape
    return lambda x, i, axis, where: None


@register_jitable
def check_extent(i, n, axis, where):
    """Raise ``check_index``'s error at ``where`` unless the integer ``i`` indexes a size ``n`` along ``axis``."""
    if i >= n or i < -n:
        _out_of_bounds(i, n, axis, where)


def check_span(x, start, stop, scale, shift, axis: int, where: str) -> None:
    """Raise ``NumbaxIndexError`` at ``where`` unless every ``scale * i + shift``, ``i`` in
    ``range(start, stop)``, indexes ``x`` along ``axis``; the index named is the first out of bounds."""
    if isinstance(x, np.ndarray) and isinstance(shift, numbers.Integral) and not isinstance(shift, (bool, np.bool_)):
        axis = axis if axis >= 0 else x.ndim + axis
        _span(int(start), int(stop), int(scale), int(shift), x.shape[axis], axis, where)


@register_jitable
def _span(start, stop, scale, shift, n, axis, where):
    if start >= stop:
        return
    first, last = scale * start + shift, scale * (stop - 1) + shift
    if first < -n or first >= n:
        _out_of_bounds(first, n, axis, where)
    if last >= n:  # from ``first``, one step at a time: ``n`` is the first one out
        _out_of_bounds(n, n, axis, where)


@cached.overload(check_span, called=True)
def _check_span(x, start, stop, scale, shift, axis, where):
    if isinstance(x, types.Array) and isinstance(shift, types.Integer):
        def impl(x, start, stop, scale, shift, axis, where):
            a = axis if axis >= 0 else x.ndim + axis
            _span(start, stop, scale, shift, x.shape[a], a, where)
        return impl
    return lambda x, start, stop, scale, shift, axis, where: None


@register_jitable
def check_divisor(d, message, where):
    """Raise ``NumbaxZeroDivisionError(message)`` at ``where`` if the divisor ``d`` is zero."""
    if d == 0:
        raise NumbaxZeroDivisionError(message, where)


@register_jitable
def check_power(base, exponent, message, where):
    """Raise ``NumbaxIntegerPowerError(message)`` at ``where`` if the integer ``exponent`` (a number or an
    array) has a negative element (``base`` is an integer or integers too)."""
    exponents = np.asarray(exponent).ravel()
    for k in range(exponents.size):
        if exponents[k] < 0:
            raise NumbaxIntegerPowerError(message, where)


@register_jitable
def check_bound(assigned, message, where):
    """Raise ``NumbaxUnboundLocalError(message)`` at ``where`` unless ``assigned``: the flag of a variable that
    only some paths assign, read here."""
    if not assigned:
        raise NumbaxUnboundLocalError(message, where)


def check_real(x, message, where):
    """Raise ``NumbaxComplexDerivativeError(message)`` at ``where`` if ``x`` (an array, a number, or a list or
    tuple of them) is complex."""
    if any(np.iscomplexobj(part) for part in (x if isinstance(x, (list, tuple)) else [x])):
        raise NumbaxComplexDerivativeError(message, where)


def _holds_complex(ty) -> bool:
    if isinstance(ty, (types.List, types.UniTuple)):
        return _holds_complex(ty.dtype)
    if isinstance(ty, types.BaseTuple):
        return any(_holds_complex(t) for t in ty.types)
    return isinstance(ty.dtype if isinstance(ty, types.Array) else ty, types.Complex)


@overload(check_real, prefer_literal=True)
def _check_real(x, message, where):
    if not _holds_complex(x):  # decided by type when compiling: nothing is left to run
        return lambda x, message, where: None
    if isinstance(message, types.StringLiteral) and isinstance(where, types.StringLiteral):
        raise TypingError(f"numbax.check_real: {where.literal_value}: {message.literal_value}")
    raise TypingError("numbax.check_real: a complex value")  # refused when compiling, with the text above


@register_jitable
def check_weak_int(value, low, high, message, where):
    """Raise ``NumbaxOverflowError(message)`` (NumPy's text, the value left to fill in) at ``where`` if the Python
    int ``value`` is outside ``low..high``, the range of the integer dtype NumPy 2 computes it in."""
    if value < low or value > high:
        raise NumbaxOverflowError(message, where, value)


_SHIFT = ("a shift count of {} is outside 0..{} for {}-bit integers (NumPy gives 0, or -1 shifting a negative number "
          "right; compiled code's shift is undefined there)")


@register_jitable
def check_shift(count, bits, where):
    """Raise ``NumbaxUnimplementedValueError`` at ``where`` if a shift ``count`` (a number or an array) is
    negative or ``bits`` or more, where LLVM's shift is undefined."""
    counts = np.asarray(count).ravel()
    for k in range(counts.size):
        if counts[k] < 0 or counts[k] >= bits:
            raise NumbaxUnimplementedValueError(_SHIFT, where, counts[k], bits - 1, bits)


@_compiled_once(called=True)
def check_item(x, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``x.item()`` has one element to give (NumPy's
    ``ValueError``)."""
    if np.size(x) != 1:
        raise NumbaxShapeError("can only convert an array of size 1 to a Python scalar", where)


_UNBROADCASTABLE = "operands could not be broadcast together with shapes {:shape} {:shape} "
_UNBROADCASTABLE_INTO = "operands could not be broadcast together with shapes {0:shape} {1:shape} {0:shape} "
_UNBROADCASTABLE_3 = "operands could not be broadcast together with shapes {:shape} {:shape} {:shape} "


@_compiled_once(called=False)
def check_broadcast(a, b, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless the arrays ``a`` and ``b`` broadcast together (a number,
    which a variable may hold on another path of a loop, broadcasts with anything)."""
    a_shape, b_shape = np.shape(a), np.shape(b)
    for k in range(1, min(len(a_shape), len(b_shape)) + 1):
        m, n = a_shape[len(a_shape) - k], b_shape[len(b_shape) - k]
        if m != n and m != 1 and n != 1:
            raise NumbaxShapeError(_UNBROADCASTABLE, where, a_shape, b_shape)


@_compiled_once(called=False)
def check_in_place(x, y, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``x op= y`` of arrays can write its result into ``x``:
    ``y`` broadcasts to ``x``'s shape."""
    x_shape, y_shape = np.shape(x), np.shape(y)
    for k in range(1, min(len(x_shape), len(y_shape)) + 1):
        m, n = x_shape[len(x_shape) - k], y_shape[len(y_shape) - k]
        if m != n and n != 1:
            if m != 1:
                raise NumbaxShapeError(_UNBROADCASTABLE_INTO, where, x_shape, y_shape)
            _not_into(x, y, where)
    if len(y_shape) > len(x_shape):
        for k in range(len(y_shape) - len(x_shape)):
            if y_shape[k] != 1:
                _not_into(x, y, where)


@_compiled_once(called=False)
def check_store(target, y, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless the array ``y`` broadcasts into ``target``, the part of
    an array that ``x[i:j] = y`` writes (leading dims of length 1 of ``y`` go, as NumPy drops them)."""
    shape = np.shape(target)
    fits = True
    for k in range(1, y.ndim + 1):
        n = y.shape[y.ndim - k]
        if n != 1 and (k > len(shape) or n != shape[len(shape) - k]):
            fits = False
    if not fits:
        raise NumbaxShapeError("could not broadcast input array from shape {:shape} into shape {:shape}", where,
                               y.shape, shape)


@register_jitable
def _not_into(x, y, where):
    """``x op= y`` where the shapes broadcast to one larger than ``x``'s."""
    raise NumbaxShapeError("non-broadcastable output operand with shape {:shape} doesn't match the broadcast shape "
                           "{:broadcast}", where, np.shape(x), (np.shape(x), np.shape(y)))


@register_jitable
def _dim(shape, k):
    """The ``k``-th dim of ``shape`` from the right, 1 where it has fewer (NumPy's broadcasting)."""
    return 1 if k > len(shape) else shape[len(shape) - k]


@_compiled_once(called=False)
def check_where(condition, x, y, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``np.where``'s three operands (arrays or numbers)
    broadcast together."""
    shapes = (np.shape(condition), np.shape(x), np.shape(y))
    for k in range(1, max(len(shapes[0]), len(shapes[1]), len(shapes[2])) + 1):
        a, b, c = _dim(shapes[0], k), _dim(shapes[1], k), _dim(shapes[2], k)
        n = a if a != 1 else b if b != 1 else c  # the dim other than 1, which may be 0
        if not (a in (1, n) and b in (1, n) and c in (1, n)):
            raise NumbaxShapeError(_UNBROADCASTABLE_3, where, shapes[0], shapes[1], shapes[2])


@register_jitable
def _lifted(a, d, ndim):
    """Dim ``d`` of ``a`` seen with ``ndim`` dims, leading ones added (``np.atleast_2d``)."""
    lead = ndim - a.ndim
    return 1 if d < lead else a.shape[d - lead]


@register_jitable
def _joinable(first, a, k, axis, lift, where):
    """Raise at ``where`` unless ``a``, the ``k``-th array joined (as ``np.atleast_2d`` if ``lift``), fits
    ``first`` except along ``axis``."""
    m, n = (max(first.ndim, 2), max(a.ndim, 2)) if lift else (first.ndim, a.ndim)
    if m != n:
        raise NumbaxShapeError("all the input arrays must have same number of dimensions, but the array at index 0 "
                               "has {} dimension(s) and the array at index {} has {} dimension(s)", where, m, k, n)
    for d in range(n):
        if d != (axis if axis >= 0 else n + axis) and _lifted(a, d, n) != _lifted(first, d, n):
            raise NumbaxShapeError("all the input array dimensions except for the concatenation axis must match "
                                   "exactly, but along dimension {}, the array at index 0 has size {} and the array "
                                   "at index {} has size {}", where, d, _lifted(first, d, n), k, _lifted(a, d, n))


@register_jitable
def _join(arrays, axis, lift, where):
    k = 0
    for a in literal_unroll(arrays):  # a tuple of arrays of several dtypes too
        _joinable(arrays[0], a, k, axis, lift, where)
        k += 1


@_compiled_once(called=True)
def check_concatenate(arrays, axis, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``np.concatenate(arrays, axis)`` fits them."""
    _join(arrays, axis, False, where)


@_compiled_once(called=True)
def check_hstack(arrays, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``np.hstack(arrays)`` fits them (joined along the
    first axis of vectors, the second of anything else)."""
    _join(arrays, 0 if arrays[0].ndim == 1 else 1, False, where)


@_compiled_once(called=True)
def check_vstack(arrays, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``np.vstack(arrays)`` fits them (vectors as rows)."""
    _join(arrays, 0, True, where)


@_compiled_once(called=True)
def check_stack(arrays, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless the arrays that ``np.stack`` joins share one shape."""
    for a in literal_unroll(arrays):
        if a.shape != arrays[0].shape:
            raise NumbaxShapeError("all input arrays must have the same shape", where)


@register_jitable
def _contracted(a, b):
    """The axes ``np.dot`` and ``@`` contract: ``a``'s last, ``b``'s only or second to last."""
    return a.ndim - 1, (0 if b.ndim == 1 else b.ndim - 2)


@_compiled_once(called=True)
def check_dot(a, b, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``np.dot(a, b)`` of arrays contracts equal dims."""
    i, j = _contracted(a, b)
    if a.shape[i] != b.shape[j]:
        raise NumbaxShapeError("shapes {:shape} and {:shape} not aligned: {} (dim {}) != {} (dim {})", where,
                               a.shape, b.shape, a.shape[i], i, b.shape[j], j)


@_compiled_once(called=True)
def check_vdot(a, b, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``np.vdot(a, b)`` of arrays, which flattens both, has as
    many elements in each (Numba's takes a vector of one element against any)."""
    if a.size != b.size:
        raise NumbaxShapeError("np.vdot of arrays of {} and {} elements: vdot flattens both, their sizes must agree",
                               where, a.size, b.size)


@_compiled_once(called=True)
def check_matmul(a, b, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``a @ b`` of arrays contracts equal dims."""
    i, j = _contracted(a, b)
    if a.shape[i] != b.shape[j]:
        raise NumbaxShapeError("matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                               "signature (n?,k),(k,m?)->(n?,m?) (size {} is different from {})", where, b.shape[j],
                               a.shape[i])


@_compiled_once(called=True)
def check_reshape(x, shape, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``x`` (an array) can take ``shape`` (a tuple of ints,
    one of them ``-1`` at most)."""
    known, unknown = 1, 0
    for d in shape:
        if d == -1:
            unknown += 1
        else:
            known *= d
    if (unknown == 0 and known != x.size) or (unknown == 1 and (known == 0 or x.size % known != 0)):
        raise NumbaxShapeError("cannot reshape array of size {} into shape {:newshape}", where, x.size, shape)


@register_jitable
def check_list_length(n, where):
    """Raise ``NumbaxEmptyListError`` at ``where`` if a list made at run time, which takes the shape of its
    items from its first one, would get none (``numbax.ast_passes.specialize.run_time_lists``)."""
    if n <= 0:
        raise NumbaxEmptyListError("a list made at run time would be empty", where)


@_compiled_once(called=True)
def check_list_item(items, item, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless the array ``item`` has the shape of the rows of
    ``items``, the array that holds a list made at run time (NumPy's ``stack`` needs one shape)."""
    if item.shape != items.shape[1:]:
        raise NumbaxShapeError("all input arrays must have the same shape: an item of shape {:shape} in a list of "
                               "items of shape {:shape}", where, item.shape, items.shape[1:])


@_compiled_once(called=True)
def check_row(rows, value, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``value`` (an array or a number) has the shape of the rows of ``rows``,
    the array that stacks ``vmap``'s examples' outputs (or ``lax.scan``'s steps' ``ys``): JAX traces one shape
    for them all, where an assignment into a row would broadcast another."""
    if np.shape(value) != rows.shape[1:]:
        raise NumbaxShapeError("an output of shape {:shape} stacked with outputs of shape {:shape}: each example of "
                               "vmap (each step of lax.scan) must give one shape, as JAX traces one", where,
                               np.shape(value), rows.shape[1:])


@_compiled_once(called=False)
def check_carried(x, length, where):
    """Raise ``NumbaxShapeError`` at ``where`` (a loop) unless the array ``x`` it carries in has the ``length``
    its body gives it: a loop that changes the shape of what it carries (JAX's refuse it too)."""
    if x.shape[0] != length:
        raise NumbaxShapeError("the loop carries in an array of shape {:shape} that its body makes of shape "
                               "{:shape}: a loop must keep the shapes of the arrays it carries, as JAX's do; give "
                               "it its final shape before the loop", where, x.shape, (length,))


_SCATTERED = "psum_scatter: the scattered dimension has length {}, not the axis size {}"
_SCATTERED_TILED = "psum_scatter: the scattered dimension has length {}, not a multiple of the axis size {}"


@register_jitable
def check_scatter(length, size, tiled, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``psum_scatter``'s scattered dimension of ``length`` fits
    an axis of ``size``: equal to it, or (``tiled``) a multiple of it."""
    if tiled:
        if length % size != 0:
            raise NumbaxShapeError(_SCATTERED_TILED, where, length, size)
    elif length != size:
        raise NumbaxShapeError(_SCATTERED, where, length, size)


_DEVICES_PASSED = ("Leading axis size of input to pmapped function must equal the number of local devices passed "
                   "to pmap. Got axis_size={}, num_local_devices={}.")
_DEVICES_AVAILABLE = ("compiling computation that requires {0} logical devices, but only {1} XLA devices are "
                      "available (num_replicas={0})")


@register_jitable
def check_devices(size, count, exact, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``pmap``'s axis of ``size`` fits its ``count`` devices:
    equal to it where the devices were passed (``exact``), at most it otherwise (JAX's messages)."""
    if exact:
        if size != count:
            raise NumbaxShapeError(_DEVICES_PASSED, where, size, count)
    elif size > count:
        raise NumbaxShapeError(_DEVICES_AVAILABLE, where, size, count)


@_compiled_once(called=True)
def check_key(key, where):
    """Raise ``NumbaxShapeError`` at ``where`` unless ``key`` (a ``uint32`` array of one dimension) has the two
    words of a key: the random kernels read ``key[0]`` and ``key[1]`` unchecked."""
    if key.shape[0] != 2:
        raise NumbaxShapeError("numbax.random expects a key, a uint32 array of shape (2,); got shape {}", where,
                               key.shape)
