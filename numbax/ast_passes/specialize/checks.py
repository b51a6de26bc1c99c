"""Which run-time check (``run_time_checks``) an operation the user wrote needs, from its operands' avals.

Each function returns ``(helper,)`` or ``(helper, message)`` of ``numbax.runtime.checks``, or None when
nothing needs checking: a Python number's divisor must not be zero (Python raises; NumPy's numbers and
arrays divide to inf or nan, as in NumPy); arrays must broadcast, contract (``np.dot``, ``@``) or keep their
size (``reshape``). An operand whose aval is unknown is not checked: the operation itself still raises
Numba's ``ValueError``.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import gast
import numpy as np

from numbax.ast_passes.specialize import dtypes
from numbax.ast_passes.specialize.values import AVal, Dyn
from numbax.primitives.registry import elementwise_ufunc

_DIVISIONS = (gast.Div, gast.FloorDiv, gast.Mod)
_ONES = {"b": 1, "i": 1, "u": 1, "f": 1.0, "c": 1j}  # a Python number of each kind, for Python's own message
_CONTRACTIONS = {np.dot: "check_dot", np.matmul: "check_matmul"}
CONTRACTION_CHECKS = frozenset(_CONTRACTIONS.values())
_AXIS_JOINS = {np.concatenate: "check_concatenate", np.stack: "check_stack"}
if hasattr(np, "concat"):  # NumPy 2
    _AXIS_JOINS[np.concat] = "check_concatenate"
_JOINS = {**_AXIS_JOINS, np.hstack: "check_hstack", np.vstack: "check_vstack"}


def _python_zero_division(op: gast.operator, left: AVal, right: AVal) -> Optional[str]:
    """Python's message for ``left op 0`` of these kinds of number (``None`` if Python raises nothing)."""
    one, other = _ONES.get(left.dtype.kind), _ONES.get(right.dtype.kind)
    try:
        dtypes.BINOPS[type(op)](one, other * 0)
    except ZeroDivisionError as exc:
        return str(exc)
    except TypeError:
        return None
    return None


_NEGATIVE_POWER = "Integers to negative integer powers are not allowed."  # NumPy's ValueError
_PYTHON_NEGATIVE_POWER = "a Python int to a negative int power is a float in Python, which compiled code cannot give"
_POWERS = (np.power, getattr(np, "pow", np.power))


def power(op_or_func: Any, base: Any, exponent: Any) -> Optional[Tuple[str, ...]]:
    """The check of ``base ** exponent`` (or ``np.power``) of integers: no negative exponent, which NumPy
    refuses and Python's ints turn into a float (compiled code would give an integer, silently)."""
    if not (isinstance(op_or_func, gast.Pow) or any(op_or_func is f for f in _POWERS)):
        return None
    avals = [dtypes.aval_of(base), dtypes.aval_of(exponent)]
    if None in avals or avals[0].dtype.kind not in "biu" or avals[1].dtype.kind != "i":
        return None
    if not isinstance(exponent, Dyn) and np.all(np.asarray(exponent) >= 0):
        return None
    python = isinstance(op_or_func, gast.Pow) and all(a.weak and a.ndim == 0 for a in avals)
    return ("check_power", _PYTHON_NEGATIVE_POWER if python else _NEGATIVE_POWER)


_SHIFTS = (gast.LShift, gast.RShift)


def shift(op_or_func: Any, value: Any, count: Any) -> Optional[Tuple[str, ...]]:
    """The check of ``value << count`` or ``>>`` (or ``np.left_shift``, ``np.right_shift``) of integers: a
    count in the result's bits, as LLVM's shifts are undefined beyond them (NumPy gives 0 or -1)."""
    if not (isinstance(op_or_func, _SHIFTS) or op_or_func is np.left_shift or op_or_func is np.right_shift):
        return None
    avals = [dtypes.aval_of(value), dtypes.aval_of(count)]
    if None in avals or avals[0].dtype.kind not in "biu" or avals[1].dtype.kind not in "biu":
        return None
    # numbers are shifted as 64-bit integers (Numba's, then cast to NumPy's dtype, which gives NumPy's 0 or -1
    # for a count of their bits or more); arrays in their own dtype
    bits = 64 if all(a.ndim == 0 for a in avals) else \
        8 * np.result_type(*(np.dtype(np.int64) if a.weak else a.dtype for a in avals)).itemsize
    if not isinstance(count, Dyn) and np.all((np.asarray(count) >= 0) & (np.asarray(count) < bits)):
        return None
    return ("check_shift", str(bits))


def is_array(aval: Optional[AVal]) -> bool:
    """Whether ``aval`` is known to be an array's."""
    return aval is not None and aval.ndim >= 1


def _arrays(avals: Sequence[Optional[AVal]]) -> bool:
    return all(is_array(a) for a in avals)


def binop(op: gast.operator, left: Any, right: Any) -> Optional[Tuple[str, ...]]:
    """The check of ``left op right``."""
    avals = [dtypes.aval_of(left), dtypes.aval_of(right)]
    if any(a is None for a in avals):
        return None
    if isinstance(op, _DIVISIONS) and all(a.weak and a.ndim == 0 for a in avals) and \
            (isinstance(right, Dyn) or right == 0):  # ``dt / 6.0`` needs no check
        message = _python_zero_division(op, *avals)
        return None if message is None else ("check_divisor", message)
    if _arrays(avals) and not (isinstance(left, Dyn) and isinstance(right, Dyn) and left.name is not None
                               and left.name == right.name):  # ``w * w`` broadcasts
        return ("check_matmul",) if isinstance(op, gast.MatMult) else ("check_broadcast",)
    return None


def is_real_array(value: Any) -> bool:
    """Whether ``value`` is known to be an array of real numbers (or integers)."""
    aval = dtypes.aval_of(value)
    return aval is not None and aval.ndim >= 1 and aval.dtype.kind in "fiub"


def _is_dim(value: Any) -> bool:
    if isinstance(value, Dyn):
        return value.aval is not None and value.aval.ndim == 0 and value.aval.dtype.kind in "iu"
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_shape(args: Sequence[Any]) -> bool:
    """``reshape``'s shape: dims, or one tuple or list of dims."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return len(args) >= 1 and all(_is_dim(a) for a in args)


def _joined(func: Any, args: Sequence[Any], kwargs: dict) -> Optional[Tuple[str, ...]]:
    """The check of ``np.concatenate``, ``np.stack``, ``np.hstack`` or ``np.vstack`` of a tuple of arrays."""
    arrays = args[0] if args else None
    if not (isinstance(arrays, (tuple, list)) and arrays and _arrays([dtypes.aval_of(a) for a in arrays])):
        return None
    axis = args[1] if len(args) > 1 else kwargs.get("axis", 0)
    if func in _AXIS_JOINS and not (set(kwargs) <= {"axis"} and len(args) <= 2 and _is_dim(axis)):
        return None  # ``axis=None`` flattens; ``out=``, ``dtype=``
    return (_JOINS[func],) if func in _AXIS_JOINS or (len(args) == 1 and not kwargs) else None


def call(func: Any, args: Sequence[Any], kwargs: dict) -> Optional[Tuple[str, ...]]:
    """The check of a NumPy call ``func(*args)`` (a binary ufunc, ``np.where``, ``np.dot``, ``np.matmul``,
    ``np.vdot``, ``np.reshape``, the joins of arrays)."""
    if func in _JOINS:
        return _joined(func, args, kwargs)
    if func is np.where and len(args) == 3 and not kwargs:
        avals = [dtypes.aval_of(a) for a in args]
        return ("check_where",) if None not in avals and any(is_array(a) for a in avals) else None
    if kwargs or len(args) != 2:
        return None
    if func is np.reshape:
        return ("check_reshape",) if _arrays([dtypes.aval_of(args[0])]) and _is_shape(args[1:]) else None
    if not _arrays([dtypes.aval_of(a) for a in args]):
        return None
    if func in _CONTRACTIONS:
        return (_CONTRACTIONS[func],)
    if func is np.vdot:
        return ("check_vdot",)
    if elementwise_ufunc(func) and func.nin == 2:
        return ("check_broadcast",)
    return None


def method(name: str, args: Sequence[Any], kwargs: dict) -> Optional[Tuple[str, ...]]:
    """The check of an array method call ``x.name(*args)`` (``reshape``, ``item``)."""
    if name == "item" and not args and not kwargs:
        return ("check_item",)
    return ("check_reshape",) if name == "reshape" and not kwargs and _is_shape(args) else None
