"""statics: reading the compile-time values behind Numba argument types, for the runtime's overloads.

An overload sees types, not values: ``Literal[int](1)`` for a constant axis,
``omitted(default=False)`` for a missing keepdims, a tuple of literals for
``(0, 2)``. These helpers turn them back into Python values, check axes as
NumPy does, and ask NumPy which dtype a reduction returns, raising Numba's
``TypingError`` with a message that names the helper otherwise.
"""
from __future__ import annotations

import builtins
from typing import Any, Callable, Tuple

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.np.numpy_support import as_dtype

from numbax.runtime.loops import Plan


class _NotStatic:
    pass


NOT_STATIC = _NotStatic()


def static_value(value: Any) -> Any:
    """The compile-time value behind a Numba argument type (a literal, an omitted default), or ``NOT_STATIC``."""
    if isinstance(value, types.Omitted):
        return value.value
    if value is None or isinstance(value, types.NoneType):
        return None
    if isinstance(value, types.Literal):
        return value.literal_value
    if isinstance(value, types.BaseTuple):
        items = tuple(static_value(t) for t in value.types)
        return NOT_STATIC if NOT_STATIC in items else items
    if isinstance(value, (bool, int, float, str, tuple)):
        return value
    return NOT_STATIC


def static(fn: str, what: str, value: Any) -> Any:
    """``static_value``, or a TypingError saying that ``what`` must be a compile-time constant."""
    got = static_value(value)
    if got is NOT_STATIC:
        raise TypingError(f"numbax.runtime.{fn}: {what} must be a compile-time constant in compiled code "
                          f"(the result's ndim depends on it), got a run-time {value}")
    return got


def array_dtype(fn: str, a: Any) -> np.dtype:
    """The NumPy dtype of the array type ``a``; a TypingError for anything but an array."""
    if not isinstance(a, types.Array):
        raise TypingError(f"numbax.runtime.{fn}: expected an array, got {a}")
    return as_dtype(a.dtype)


def normalize_axes(fn: str, ndim: int, axis: Any, single: bool = False) -> Tuple[int, ...]:
    """Reduced axes, sorted and non-negative, checked as NumPy checks them (``None``: every axis)."""
    if axis is None:
        return tuple(range(ndim))
    items = (axis,) if isinstance(axis, int) else axis
    if (single and not isinstance(axis, int)) or not isinstance(items, tuple) or \
            not builtins.all(isinstance(i, int) and not isinstance(i, bool) for i in items):
        kinds = "an integer or None" if single else "None, an integer or a tuple of integers"
        raise TypingError(f"numbax.runtime.{fn}: axis must be {kinds}, got {axis!r}")
    for i in items:
        if not -ndim <= i < ndim:
            raise TypingError(f"numbax.runtime.{fn}: axis {i} is out of bounds for array of dimension {ndim}")
    normal = sorted(i % ndim for i in items)
    if len(set(normal)) != len(normal):
        raise TypingError(f"numbax.runtime.{fn}: repeated axis in {axis!r}")
    return tuple(normal)


def make_plan(fn: str, a: Any, axis: Any, keepdims: Any, single: bool = False) -> Plan:
    """The static shape of a reduction, from the Numba types of its arguments."""
    dtype = array_dtype(fn, a)
    if a.ndim == 0:
        return _zero_d_plan(fn, dtype, static(fn, "axis", axis), bool(static(fn, "keepdims", keepdims)))
    axes = normalize_axes(fn, a.ndim, static(fn, "axis", axis), single)
    return Plan(a.ndim, axes, bool(static(fn, "keepdims", keepdims)))


def _zero_d_plan(fn: str, dtype: np.dtype, axis: Any, keepdims: bool) -> Plan:
    """The reduction of a 0-d array, checked by NumPy itself: its ufunc reductions (sum, prod, max, ...)
    take ``axis=0`` or ``-1`` there and ``mean`` does not; with ``keepdims`` too the result is a scalar."""
    try:
        getattr(np, fn)(np.zeros((), dtype), axis=axis, keepdims=keepdims)
    except (ValueError, TypeError) as e:  # NumPy's AxisError is a ValueError
        raise TypingError(f"numbax.runtime.{fn}: {e}") from None
    return Plan(0, (), False)


def numpy_result(fn: str, numpy_fn: Callable, dtype: np.dtype) -> np.dtype:
    """The dtype NumPy's ``numpy_fn`` returns for a ``dtype`` input (NumPy's rules, asked of NumPy)."""
    try:
        return np.dtype(np.asarray(numpy_fn(np.ones(2, dtype))).dtype)
    except TypeError as e:
        raise TypingError(f"numbax.runtime.{fn}: {e}") from None
