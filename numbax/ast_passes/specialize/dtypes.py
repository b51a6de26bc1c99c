"""dtypes: abstract values through operators and ufuncs, and weak Python numbers kept weak under Numba.

NumPy 2 treats a Python number as *weak* (NEP 50, as JAX does): it takes the
dtype of the array it meets, so ``float32 array * 0.5`` is float32 and
``int32 array + 1`` is int32. Numba types a Python float as float64 and an int
as int64, and so widens both results. The specializer knows every leaf's dtype
(an ``AVal``; Python scalar arguments are ``weak``) and carries it through
operators and ufuncs; where a weak number meets an operand whose dtype NumPy 2
keeps but Numba would widen, the number is spelled in that dtype:

    x * 0.5 + 1.0         (x float32)  ->  x * np.float32(0.5) + np.float32(1.0)
    x * s                 (s a Python float argument)  ->  x * np.float32(s)

float64 and int64 code is left as written, and so is an integer literal next
to a float array (Numba keeps the array's float type there). A NumPy integer
scalar is strong: next to a float32 array NumPy 2 computes in float64, so it is
spelled in float64 (``x + np.float64(k)``), which Numba then promotes to.
"""
from __future__ import annotations

import functools
import operator
import warnings
from typing import Any, List, Optional, Sequence, Tuple

import gast
import numpy as np

from numbax.ast_passes.specialize.values import AVal, Dyn, is_static_scalar

# The Python function of each operator, for folding at compile time and for probing NumPy's promotion.
BINOPS = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod,
    gast.Pow: operator.pow, gast.MatMult: operator.matmul, gast.BitAnd: operator.and_,
    gast.BitOr: operator.or_, gast.BitXor: operator.xor, gast.LShift: operator.lshift,
    gast.RShift: operator.rshift,
}
ORDERINGS = {gast.Lt: "<", gast.LtE: "<=", gast.Gt: ">", gast.GtE: ">="}
ORDERING_UFUNCS = frozenset({np.greater, np.greater_equal, np.less, np.less_equal, np.maximum, np.minimum,
                             np.fmax, np.fmin})
# NumPy functions that compute these operands (by position) in the result's dtype, which Numba does not:
# it keeps the array's dtype in ``np.clip``, ``np.outer`` and ``np.convolve`` (the first's), and types a Python
# number as int64 or float64 in ``np.where``
PROMOTED = {np.clip: (0, 1, 2), np.where: (1, 2), np.outer: (0, 1), np.convolve: (0, 1)}
# reductions that Numba accumulates in int64, float64 or complex128 whatever the operand's dtype
ACCUMULATING = frozenset({np.sum, np.prod, np.mean, np.cumsum, np.cumprod, np.var, np.std, np.nansum, np.nanprod,
                          np.nanmean})
WIDEST = frozenset(np.dtype(t) for t in (np.bool_, np.int64, np.float64, np.complex128))
UNARY = {gast.UAdd: operator.pos, gast.USub: operator.neg, gast.Not: operator.not_, gast.Invert: operator.invert}
# A weak Python number of each kind, as NumPy 2 sees it in a promotion.
_WEAK_PROBES = {"b": True, "i": 1, "f": 1.0, "c": 1.0j}
# What Numba types a Python number of each kind as.
_NUMBA_DEFAULTS = {"b": np.dtype(bool), "i": np.dtype(np.int64), "f": np.dtype(np.float64),
                   "c": np.dtype(np.complex128)}


def aval_of(value: Any) -> Optional[AVal]:
    """The abstract value of an operand: a ``Dyn``'s, a constant array's, or a static number's."""
    if isinstance(value, Dyn):
        return value.aval
    if isinstance(value, (np.ndarray, np.generic)) or is_static_scalar(value):
        return AVal.of(value)
    return None


def _probe(aval: AVal):
    if aval.weak:
        return _WEAK_PROBES[aval.dtype.kind]
    return np.ones((1,) * aval.ndim, aval.dtype) if aval.ndim else aval.dtype.type(1)


@functools.lru_cache(maxsize=1024)
def _probed_call(fn, avals: Sequence[AVal]) -> Tuple[Optional[np.dtype], Optional[str]]:
    """``(dtype, None)``: the dtype NumPy 2 gives ``fn`` of operands like these; ``(None, message)`` where
    NumPy refuses their types with a TypeError; ``(None, None)`` where it raises otherwise."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = fn(*[_probe(a) for a in avals])
    except TypeError as error:
        return None, str(error)
    except Exception:  # noqa: BLE001 - another error on a probe (a value NumPy rejects) only means "unknown"
        return None, None
    return (np.asarray(out).dtype if isinstance(out, (np.ndarray, np.generic)) else None), None


def _result_dtype(fn, avals: Sequence[AVal]) -> Optional[np.dtype]:
    """The dtype NumPy 2 gives ``fn`` of operands like these, or None where it raises."""
    return _probed_call(fn, avals)[0]


def numpy_refusal(fn, avals: Sequence[Optional[AVal]]) -> Optional[str]:
    """NumPy's TypeError where it has no loop for ``fn`` of operands of these dtypes (``bool - bool``,
    ``-bool``, ``uint64 << int64``), which Numba computes anyway; None otherwise, or where an operand is
    unknown or every operand is a Python number (Python's own arithmetic)."""
    if any(a is None for a in avals) or all(a.weak for a in avals) or \
            any(a.weak and a.dtype.kind not in _WEAK_PROBES for a in avals):
        return None
    return _probed_call(fn, tuple(AVal(a.dtype, min(a.ndim, 1), a.weak) for a in avals))[1]


def _result(fn, avals, ndim: int, python: bool = True) -> Optional[AVal]:
    """``fn``'s abstract value; ``python``: Python numbers alone give a Python number (an operator's
    arithmetic), else a NumPy scalar (a ufunc: ``np.cos(1.0)`` is ``np.float64``, which divides by zero to inf)."""
    if any(a is None for a in avals) or any(a.weak and a.dtype.kind not in _WEAK_PROBES for a in avals):
        return None
    if python and all(a.weak for a in avals):  # Python numbers only: Python's own arithmetic, and a Python number
        try:
            kind = np.asarray(fn(*[_WEAK_PROBES[a.dtype.kind] for a in avals])).dtype.kind
        except Exception:  # noqa: BLE001 - Python's error on a probe only means "unknown"
            return None
        return AVal(_NUMBA_DEFAULTS[kind], 0, weak=True) if kind in _NUMBA_DEFAULTS and ndim == 0 else None
    dtype = _result_dtype(fn, tuple(AVal(a.dtype, min(a.ndim, 1), a.weak) for a in avals))
    return None if dtype is None else AVal(dtype, ndim)


def operator_symbol(op: gast.operator) -> str:
    """``*`` for ``gast.Mult``: how the user wrote an operator, for messages."""
    symbols = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.FloorDiv: "//", gast.Mod: "%",
               gast.Pow: "**", gast.MatMult: "@", gast.BitAnd: "&", gast.BitOr: "|", gast.BitXor: "^",
               gast.LShift: "<<", gast.RShift: ">>"}
    return symbols.get(type(op), type(op).__name__)


def weak_int(value: int, dtype: np.dtype, beyond: str) -> Any:
    """The Python int ``value`` in the integer ``dtype``, as NumPy 2 takes one outside its range: ``"raise"``
    (arithmetic: NumPy's ``OverflowError``), ``"keep"`` (comparisons: the int itself, which NumPy 2 compares
    exactly, as Numba's int64 comparison does), ``"clamp"`` (``np.clip``'s bounds: the nearest end of the range,
    which lets every value through), or ``"wrap"`` (``np.where``'s operands: cast as C casts, modulo 2**bits)."""
    info = np.iinfo(dtype)
    if info.min <= value <= info.max or beyond == "raise":
        return dtype.type(value)  # NumPy's OverflowError outside the range
    if beyond == "keep":
        return value
    if beyond == "clamp":
        return dtype.type(min(max(value, info.min), info.max))
    modulus = 1 << info.bits
    wrapped = value % modulus
    return dtype.type(wrapped - modulus if wrapped > info.max else wrapped)


def _matmul_ndim(a: int, b: int) -> int:
    if a == 1 and b == 1:
        return 0
    if a == 1 or b == 1:
        return max(a, b) - 1
    return max(a, b)


def binop(op: gast.operator, left: Optional[AVal], right: Optional[AVal], right_value: Any = None) -> Optional[AVal]:
    """The abstract value of ``left op right``, or None when an operand's is unknown; ``right_value`` is
    the right operand itself (a static number or a ``Dyn``), which NumPy reads in ``array ** 2``."""
    if left is None or right is None:
        return None
    if isinstance(op, gast.Pow) and _squares(left, right_value):
        return ufunc_call(np.square, (left,))
    ndim = _matmul_ndim(left.ndim, right.ndim) if isinstance(op, gast.MatMult) else max(left.ndim, right.ndim)
    return _result(BINOPS[type(op)], (left, right), ndim)


def _squares(base: AVal, exponent: Any) -> bool:
    """Whether NumPy computes ``base ** exponent`` as ``np.square(base)``: an array (not a NumPy scalar) to
    the Python int 2 (NumPy's fast scalar power), whose loop for bools gives int8 where promotion with a
    weak 2 gives int64 (``bool array ** 3`` is int64)."""
    return base.ndim > 0 and not base.weak and type(exponent) is int and exponent == 2


def squared_at_run_time(left: Optional[AVal], right: Optional[AVal]) -> bool:
    """Whether the dtype of ``left ** right`` depends on the run-time value of ``right``, a Python int that
    a program holds: NumPy's ``np.square`` for 2 and promotion for the others give different dtypes there
    (int8 and int64 for a bool array)."""
    if left is None or right is None or left.ndim == 0 or left.weak or not right.weak or right.dtype.kind != "i":
        return False
    return ufunc_call(np.square, (left,)) != _result(operator.pow, (left, right), left.ndim)


def squared_0d_ambiguously(left: Optional[AVal], right_value: Any) -> bool:
    """Whether ``left ** 2`` has a dtype that depends on whether the 0-d ``left`` is a 0-d array
    (``np.square``: int8 for a bool) or a NumPy scalar (promotion: int64), which abstract values do not tell."""
    if left is None or left.ndim != 0 or left.weak or type(right_value) is not int or right_value != 2:
        return False
    return ufunc_call(np.square, (left,)) != _result(operator.pow, (left, AVal(np.dtype(int), 0, weak=True)), 0)


def unaryop(op: gast.unaryop, operand: Optional[AVal]) -> Optional[AVal]:
    """The abstract value of ``op operand`` (``not`` gives a bool)."""
    if operand is None:
        return None
    if isinstance(op, gast.Not):
        return AVal(np.dtype(bool), operand.ndim)
    return _result(UNARY[type(op)], (operand,), operand.ndim)


def ufunc_call(func: np.ufunc, avals: Sequence[Optional[AVal]]) -> Optional[AVal]:
    """The abstract value of a one-output ufunc applied to operands with these abstract values. Of a generalized
    ufunc (``np.matmul``, ``np.vecdot``), whose core dimensions are not elementwise: ``np.matmul``'s of vectors
    and matrices, else None."""
    if func.nout != 1 or len(avals) != func.nin or any(a is None for a in avals):
        return None
    if func.signature is not None:
        if func is not np.matmul or any(a.ndim == 0 for a in avals):
            return None
        return _result(func, tuple(avals), _matmul_ndim(avals[0].ndim, avals[1].ndim), python=False)
    return _result(func, tuple(avals), max(a.ndim for a in avals), python=False)


def _index_ndim(item: Any) -> Optional[int]:
    """How many dimensions one index item adds (-1 for an integer, 0 for a slice); None when unknown."""
    if isinstance(item, slice):
        return 0
    if item is None:
        return 1
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        return -1
    aval = item.aval if isinstance(item, Dyn) else None
    if aval is not None and aval.ndim == 0 and aval.dtype.kind in "iu":
        return -1
    return None


def index_array(item: Any) -> Any:
    """An index item, or the integer array or mask NumPy reads a list of numbers known now as (``[1, 1, 0]``)."""
    if not isinstance(item, list) or not item:
        return item
    try:
        array = np.asarray(item)
    except ValueError:  # ragged: NumPy refuses the index too, at run time
        return item
    return array if array.dtype.kind in "bi" else item


def _array_index(item: Any) -> Optional[AVal]:
    """The abstract value of an index item that is an integer or boolean array (fancy indexing), else None."""
    item = index_array(item)
    aval = item.aval if isinstance(item, Dyn) else AVal.of(item) if isinstance(item, np.ndarray) else None
    if aval is not None and aval.ndim > 0 and aval.dtype.kind in "iub":
        return aval
    return None


def index(base: Optional[AVal], index: Any) -> Optional[AVal]:
    """The abstract value of ``base[index]``: integers, slices, ``None``, ``...`` and integer or boolean
    arrays (NumPy's rank: the advanced indices' broadcast rank in place of the dims they consume; a boolean
    array of rank k consumes k dims and gives one). None where unknown."""
    if base is None or base.ndim == 0:
        return None
    items = index if isinstance(index, tuple) else (index,)
    change, consumed, broadcast = 0, 0, []
    for item in items:
        if item is Ellipsis:
            continue
        array = _array_index(item)
        if array is not None:
            consumed += array.ndim if array.dtype.kind == "b" else 1
            broadcast.append(1 if array.dtype.kind == "b" else array.ndim)
            continue
        step = _index_ndim(item)
        if step is None:
            return None
        change += step
    if broadcast and (len(broadcast) > 1 and any(b != broadcast[0] for b in broadcast)):
        return None  # arrays of different ranks broadcast: left to run time
    basic_consumed = sum(1 for item in items if item is not Ellipsis and _array_index(item) is None and
                         item is not None)
    if consumed + basic_consumed > base.ndim or sum(1 for item in items if item is Ellipsis) > 1:
        return None  # too many indices: NumPy's error at run time
    return AVal(base.dtype, base.ndim + change - consumed + (max(broadcast) if broadcast else 0))


_BITWISE = (operator.and_, operator.or_, operator.xor, operator.invert, np.bitwise_and, np.bitwise_or,
            np.bitwise_xor, np.invert)


def widened_scalar(func: Any, avals: Sequence[Optional[AVal]], result: Optional[AVal]) -> Optional[np.dtype]:
    """The dtype to cast a 0-d integer or bool result of ``func`` to, where Numba's scalar arithmetic computes
    integers in int64 (uint64 where every operand is unsigned) and bools as integers while NumPy keeps
    them narrow: ``int8 + int8`` is int8 and ``np.True_ + np.True_`` a bool (logical or) in NumPy, int64 in
    Numba. Casting the wide result wraps as NumPy's narrow arithmetic does (sums, products, powers and
    shifts agree modulo 2**bits; quotients and remainders fit). None where Numba gives NumPy's dtype."""
    if result is None or result.ndim or result.weak or result.dtype.kind not in "biu" or \
            any(a is None for a in avals) or all(a.weak for a in avals):
        return None
    if result.dtype.kind == "b" and func in _BITWISE:
        return None
    if result.dtype == np.int64 and not any(a.dtype.kind == "u" for a in avals):
        return None
    return result.dtype


def _scalar_promotion_differs(func: Any, avals: Sequence[AVal], result: AVal) -> bool:
    """Whether Numba's scalar arithmetic gives a 0-d float or complex ``result`` another dtype than NumPy:
    a signed integer with a uint64 (NumPy: float64, Numba: int64), a uint16 with a float32 or complex64
    (Numba: float64 or complex128), and a float32 to an integer power of more than 16 bits (NumPy: float64,
    Numba: float32)."""
    kinds = {a.dtype.kind for a in avals}
    if any(a.dtype == np.uint64 for a in avals) and "i" in kinds:
        return True
    if result.dtype in (np.float32, np.complex64) and any(a.dtype == np.uint16 for a in avals):
        return True
    return func in (operator.pow, np.power, np.float_power) and result.dtype == np.float64 and \
        any(a.dtype == np.float32 for a in avals)


def narrowed_operands(func: Any, avals: Sequence[Optional[AVal]], result: Optional[AVal]) -> List[int]:
    """The operands of ``func`` to spell in ``result``'s dtype where Numba computes it in a narrower dtype
    than NumPy. Two cases: NumPy's ``true_divide`` of integers (or bools) is always float64, while Numba takes
    the first loop that holds them, float32 for integer arrays of 8 and 16 bits (``int16 array / int16
    array``: the dividend is cast); and an integer (int32, int64, uint64) next to a float32 or complex64 makes
    float64 or complex128 in NumPy, float32 or complex64 in Numba's loops when an operand is an array
    (``x32 + i64``: the float operand is cast). Of 0-d operands alone, Numba's scalar promotion decides for an
    operator (``_scalar_promotion_differs``), and each operand not in ``result``'s dtype is cast, as NumPy casts it;
    a binary ufunc's call (``np.divide(int32, float32)``) takes its loops' promotion there too.
    Not for ``@``, which takes its own path."""
    if result is None or result.dtype.kind not in "fc" or func in (operator.matmul, np.matmul) or \
            any(a is None for a in avals):
        return []
    if not any(a.ndim for a in avals):
        strong = [k for k, a in enumerate(avals) if not a.weak and a.dtype != result.dtype]
        # a NumPy ufunc's call of two operands takes its loops' promotion, as of arrays, where the loop's
        # operands are in the result's dtype (``np.divide(int32, float32)``: float64), not ``np.abs`` of complex
        looped = isinstance(func, np.ufunc) and func.nin == 2 and \
            np.result_type(*(a.dtype for a in avals)) == result.dtype
        return strong if strong and (looped or _scalar_promotion_differs(func, avals, result)) else []
    if any(a.weak for a in avals):
        return []
    if func in (operator.truediv, np.true_divide) and result.dtype == np.float64 and \
            all(a.dtype.kind in "biu" and a.dtype.itemsize <= 2 for a in avals):
        return [0]
    if not any(a.dtype.kind in "biu" for a in avals):
        return []
    return [k for k, a in enumerate(avals) if a.dtype.kind in "fc" and a.dtype != result.dtype]


def changed_dtype(before: Any, after: Any) -> Optional[Tuple[np.dtype, np.dtype]]:
    """``(dtype before, dtype after)`` where a run-time value has two known dtypes on two paths into a join,
    neither a weak Python number (which takes the other's dtype, as ``acc = 0`` does in a loop summing
    floats); None where they agree or one is unknown."""
    a, b = (v.aval if isinstance(v, Dyn) else None for v in (before, after))
    if a is None or b is None or a.weak or b.weak or a.dtype == b.dtype:
        return None
    return a.dtype, b.dtype


def weak_cast(value: Any, aval: Optional[AVal], result: Optional[AVal], literal_kept: bool = True) \
        -> Optional[np.dtype]:
    """The dtype to spell a weak operand in so that Numba gives ``result``'s dtype; None to leave it.

    ``value`` is the operand (a static number or a ``Dyn``), ``aval`` its
    abstract value and ``result`` the operation's. ``literal_kept``: Numba keeps a float array's type next
    to an integer literal in this operation (its own operators and ufuncs; not numbax's vectorized helpers,
    ``rt.maximum(x, 3)`` of a float32 ``x``, which widen it).
    """
    if result is None or aval is None or result.dtype.kind not in "biufc":
        return None
    if not aval.weak:  # a NumPy integer scalar next to a float array: NumPy 2 promotes the array (int64 and
        # float32 make float64), Numba keeps the array's float type, as for an integer literal
        strong_integer = aval.ndim == 0 and aval.dtype.kind in "biu" and result.dtype.kind in "fc" and result.ndim
        return result.dtype if strong_integer and aval.dtype != result.dtype else None
    numba_dtype = np.promote_types(result.dtype, _NUMBA_DEFAULTS[aval.dtype.kind])
    if numba_dtype == result.dtype:
        return None
    if literal_kept and not isinstance(value, Dyn) and aval.dtype.kind in "bi" and result.dtype.kind in "fc" \
            and result.ndim:
        return None  # Numba keeps a float array's type next to an integer literal
    return result.dtype


# NumPy functions whose result's rank depends on run-time values, not on the operands' ranks.
_VALUE_DEPENDENT = {"squeeze", "nonzero", "argwhere", "flatnonzero", "where", "extract", "compress"}
_PROBE_EXTENT = 2  # every dim of a probe array: square, so products and broadcasts line up
_PROBE_INT = 3     # static integers above this are clamped (shapes), so probing allocates nothing big


def _probe_argument(value: Any):
    """A small stand-in for an argument: arrays of the run-time value's dtype and rank, clamped integers."""
    if isinstance(value, (Dyn, np.ndarray)):  # a constant array too: of the others' small extents
        aval = value.aval if isinstance(value, Dyn) else AVal.of(value)
        if aval is None:
            raise LookupError
        if aval.weak:  # a Python number: one of its kind, as weak as the run-time one
            return _PROBE_EXTENT if aval.dtype.kind == "i" else _WEAK_PROBES[aval.dtype.kind]
        if aval.ndim >= 2 and aval.dtype.kind in "fc":  # ones plus the identity: invertible, positive definite
            return (np.ones((_PROBE_EXTENT,) * aval.ndim) + np.eye(_PROBE_EXTENT)).astype(aval.dtype)
        return np.ones((_PROBE_EXTENT,) * aval.ndim, aval.dtype) if aval.ndim else \
            aval.dtype.type(_PROBE_EXTENT if aval.dtype.kind in "iu" else 1)
    if isinstance(value, (list, tuple)):
        return type(value)(_probe_argument(v) for v in value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return min(int(value), _PROBE_INT)
    if isinstance(value, np.ndarray):
        return np.ones((_PROBE_EXTENT,) * value.ndim, value.dtype)
    return value


def numpy_call(func: Any, args: Sequence[Any], kwargs: dict) -> Optional[AVal]:
    """The abstract value of a call of a NumPy function left to run time, by calling it on small probes.

    Only NumPy's own functions are probed (not ``np.random``), and not those whose result's rank
    depends on the values; a probe that raises, or a result that is not one array, gives None.
    ``len`` gives a weak int.
    """
    if func is len:  # a Python int, weak as the others (``len(x) // 0`` raises as Python does)
        return AVal(np.dtype(np.int64), 0, weak=True)
    module = getattr(func, "__module__", None) or ""
    name = getattr(func, "__name__", "")
    if func in (np.squeeze, np.broadcast_to) and args:  # squeeze's rank depends on the values without ``axis``
        operand = aval_of(args[0])
        given = args[1] if len(args) > 1 else kwargs.get("axis" if func is np.squeeze else "shape")
        return None if operand is None else _counted_axes(func, operand, given)
    value_dependent = name in _VALUE_DEPENDENT and not (name == "where" and len(args) == 3)  # where(c, x, y)
    if not module.startswith("numpy") or module.startswith("numpy.random") or value_dependent:
        return None
    if func is np.reshape and len(args) == 2 and not kwargs and aval_of(args[0]) is not None:
        return reshaped(aval_of(args[0]), args[1:])
    return _probed(func, args, kwargs)


def _counted_axes(func: Any, operand: AVal, given: Any) -> Optional[AVal]:
    """``np.squeeze(x, axis)`` (an axis fewer per axis named) and ``np.broadcast_to(x, shape)`` (as many axes
    as the shape has): ``x``'s dtype, a rank counted from a static ``axis`` or ``shape`` (an int or a tuple;
    small probes could not take them). Without one: None (squeeze's rank then depends on the values)."""
    if isinstance(given, (int, np.integer)) and not isinstance(given, bool):
        count = 1
    elif isinstance(given, tuple) and all(isinstance(d, (int, np.integer)) or aval_of(d) is not None
                                          for d in given):
        count = len(given)
    else:
        return None
    ndim = operand.ndim - count if func is np.squeeze else count
    return AVal(operand.dtype, ndim) if ndim >= 0 else None


class AxisOutOfBounds(Exception):
    """NumPy's ``AxisError`` on probes of a call whose axes are all known while specializing: the probes have
    the operands' ranks, so NumPy raises it for the run-time operands too (the message is NumPy's)."""


def _run_time_numbers(values: Sequence[Any]) -> bool:
    """Whether any of ``values`` (or an item of a tuple or list of them) is a number known only at run time
    (an axis the probe cannot know)."""
    for value in values:
        if isinstance(value, (list, tuple)) and _run_time_numbers(value):
            return True
        if isinstance(value, Dyn) and (value.aval is None or value.aval.ndim == 0):
            return True
    return False


def _probe_output(func: Any, args: Sequence[Any], kwargs: dict, axes_checked: bool = False) -> Any:
    """``func`` called on probes of ``args`` and ``kwargs``; None where it raises (``axes_checked``:
    ``AxisOutOfBounds`` where NumPy's ``AxisError`` is the operands' own)."""
    try:
        probe_args = [_probe_argument(a) for a in args]
        probe_kwargs = {k: _probe_argument(v) for k, v in kwargs.items()}
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return func(*probe_args, **probe_kwargs)
    except np.exceptions.AxisError as exc:
        if axes_checked and not _run_time_numbers(list(args) + list(kwargs.values())):
            raise AxisOutOfBounds(str(exc)) from None
        return None
    except Exception:  # noqa: BLE001 - NumPy's error on a probe only means "unknown"
        return None


def _probed(func: Any, args: Sequence[Any], kwargs: dict) -> Optional[AVal]:
    """The abstract value of ``func`` called on probes of ``args`` and ``kwargs``; None where it raises or
    gives no array or NumPy scalar; ``AxisOutOfBounds`` where it names an axis the operands do not have."""
    out = _probe_output(func, args, kwargs, axes_checked=True)
    if isinstance(out, (np.ndarray, np.generic)):
        return AVal(out.dtype, out.ndim)
    return None


def numpy_call_items(func: Any, args: Sequence[Any], kwargs: dict) -> Optional[Tuple[AVal, ...]]:
    """The abstract values of the items of a NumPy function's tuple result (``np.linalg.eigh``'s ``(w, v)``,
    ``np.linalg.slogdet``'s ``(sign, logabsdet)``), by calling it on probes as ``numpy_call`` does; None
    where a probe raises or gives anything but a tuple of arrays and NumPy scalars."""
    module = getattr(func, "__module__", None) or ""
    if not module.startswith("numpy") or module.startswith("numpy.random") or \
            getattr(func, "__name__", "") in _VALUE_DEPENDENT:
        return None
    out = _probe_output(func, args, kwargs)
    if isinstance(out, tuple) and out and all(isinstance(o, (np.ndarray, np.generic)) for o in out):
        return tuple(AVal(o.dtype, o.ndim) for o in out)
    return None


# Array methods whose result's rank does not depend on the values; where Numba accumulates in another
# dtype than NumPy (``x.sum()`` of float32), the call is cast as the function's is (``ACCUMULATING``).
_PROBED_METHODS = {"copy", "astype", "ravel", "flatten", "transpose", "reshape", "conj", "conjugate", "swapaxes",
                   "sum", "prod", "mean", "min", "max", "std", "var", "cumsum", "cumprod", "argmin", "argmax",
                   "all", "any", "round", "clip", "dot", "trace", "diagonal"}


def reshaped(operand: AVal, shape_args: Sequence[Any]) -> Optional[AVal]:
    """The abstract value of ``x.reshape(*shape_args)``: ``x``'s dtype, the rank the length of the shape
    (a probe of small extents cannot take a shape whose size is not its own)."""
    dims = shape_args[0] if len(shape_args) == 1 and isinstance(shape_args[0], (tuple, list)) else shape_args
    if len(shape_args) == 1 and not isinstance(shape_args[0], (tuple, list)):
        dims = (shape_args[0],)
    for dim in dims:
        aval = aval_of(dim)
        if aval is None or aval.ndim != 0 or aval.dtype.kind not in "iu":
            return None
    return AVal(operand.dtype, len(dims))


def method_call(receiver: Optional[AVal], method: str, args: Sequence[Any], kwargs: dict) -> Optional[AVal]:
    """The abstract value of ``x.method(*args, **kwargs)`` for an ``x`` of abstract value ``receiver``, by
    calling it on a probe (``x.copy()`` keeps ``x``'s dtype, which a loop's dtype check needs); None for
    other methods, or where the probe raises."""
    if receiver is None or receiver.weak or (method not in _PROBED_METHODS and method != "squeeze"):
        return None
    if method == "reshape" and not kwargs:
        return reshaped(receiver, args)
    if method == "squeeze":
        return _counted_axes(np.squeeze, receiver, args[0] if args else kwargs.get("axis"))
    return _probed(getattr(_probe_argument(Dyn(None, receiver)), method), args, kwargs)
