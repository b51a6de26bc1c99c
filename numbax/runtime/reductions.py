"""reductions: NumPy reductions with the ``axis=``/``keepdims=`` arguments Numba's nopython mode lacks.

Each helper is NumPy itself when called from Python (the ``python`` backend
agrees with NumPy bit for bit) and, inside ``numba.njit`` code, an ``overload``
that writes a loop nest for the array's ndim and the reduced axes
(``numbax.runtime.loops``). The output's ndim depends on the axes and on
``keepdims``, so both must be compile-time constants there (``legalize``
always writes them as literals); ``ddof`` and ``ord`` may be run-time values.
Result dtypes are NumPy's (asked of NumPy at typing time); float32 sums
accumulate in float64 and round once.

    >>> import numba
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> mean(x, 1, True)
    array([[1.],
           [4.]])
    >>> numba.njit(lambda x: mean(x, 1, True))(x)
    array([[1.],
           [4.]])
"""
from __future__ import annotations

from typing import Callable, Optional, Tuple, Union

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.np.numpy_support import as_dtype

from numbax.runtime.cached import overload
from numbax.runtime.loops import Accumulator, Map, Plan, Sweep, compile_source, numpy_type, reduction_source, \
    scan_source
from numbax.runtime.norms import norm
from numbax.runtime.vector_math import add_unordered, maximum, minimum
from numbax.runtime.statics import array_dtype, make_plan, normalize_axes, numpy_result, static, static_value

__all__ = ["sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "ptp", "argmax", "argmin",
           "any", "all", "cumsum", "cumprod", "median", "norm"]

# ---- in Python: NumPy itself ---------------------------------------------------------------


def _named(helper: Callable, numpy_fn: Callable, call: str) -> Callable:
    helper.__name__ = helper.__qualname__ = numpy_fn.__name__
    helper.__doc__ = f"``np.{numpy_fn.__name__}({call})``."
    return helper


def _numpy_reduction(numpy_fn: Callable) -> Callable:
    def helper(a, axis=None, keepdims=False):
        return numpy_fn(a, axis=axis, keepdims=keepdims)

    return _named(helper, numpy_fn, "a, axis=axis, keepdims=keepdims")


def _numpy_moment(numpy_fn: Callable) -> Callable:
    def helper(a, axis=None, ddof=0, keepdims=False):
        return numpy_fn(a, axis=axis, ddof=ddof, keepdims=keepdims)

    return _named(helper, numpy_fn, "a, axis=axis, ddof=ddof, keepdims=keepdims")


def _numpy_scan(numpy_fn: Callable) -> Callable:
    def helper(a, axis=None):
        return numpy_fn(a, axis=axis)

    return _named(helper, numpy_fn, "a, axis=axis")


sum, prod, mean = _numpy_reduction(np.sum), _numpy_reduction(np.prod), _numpy_reduction(np.mean)
var, std = _numpy_moment(np.var), _numpy_moment(np.std)
max, min, ptp = _numpy_reduction(np.max), _numpy_reduction(np.min), _numpy_reduction(np.ptp)
amax, amin = max, min
argmax, argmin = _numpy_reduction(np.argmax), _numpy_reduction(np.argmin)
any, all = _numpy_reduction(np.any), _numpy_reduction(np.all)
cumsum, cumprod = _numpy_scan(np.cumsum), _numpy_scan(np.cumprod)
median = _numpy_scan(np.median)  # over ``axis`` (Numba's np.median takes none)


# ---- source fragments ------------------------------------------------------------------------

# ``n``: the count as a divisor; an empty reduction divides by NaN (NumPy: 0 / 0, with a warning)
_DIVISOR = "n = float(count) if count > 0 else np.nan"


def _wide(dtype: np.dtype) -> np.dtype:
    """The accumulator of sums and products: float32 -> float64, complex64 -> complex128, ints unchanged."""
    return np.promote_types(dtype, np.float64) if dtype.kind in "fc" else dtype


def _result(value: str, reads: Tuple[str, ...], have: np.dtype, want: np.dtype) -> Union[Map, str]:
    """The step that fills ``result_`` with ``value`` per slot (just ``s_`` when it already is the answer)."""
    if value in reads and have == want:
        return f"result_ = {value}_"
    return Map("result", numpy_type(want), value, reads)


def _ordered(fn: str, dtype: np.dtype) -> None:
    if dtype.kind == "c":
        raise TypingError(f"numbax.runtime.{fn}: complex input is not supported in compiled code")


def _bound(dtype: np.dtype, upper: bool) -> str:
    """Source of the largest (``upper``) or smallest value of ``dtype``: where min or max starts."""
    if dtype.kind == "b":
        return repr(upper)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return repr(int(info.max if upper else info.min))
    return "np.inf" if upper else "-np.inf"


def _nonempty(name: str) -> str:
    return f"if count == 0:\n    raise ValueError('zero-size array to reduction operation {name} which has no identity')"


# ---- kernels: one builder per reduction, (plan, dtype) -> source ------------------------------

STANDARD = "a, axis=None, keepdims=False"
WITH_DDOF = "a, axis=None, ddof=0, keepdims=False"



def _fold(name: str, init: str, step: str, numpy_fn: Callable):
    """Sums and products: accumulate wide, round once to NumPy's dtype."""
    def build(plan: Plan, dtype: np.dtype) -> str:
        out = numpy_result(name, numpy_fn, dtype)
        acc = _wide(out)
        sweep = Sweep((Accumulator("s", numpy_type(acc), init),), (step,))
        return reduction_source(plan, STANDARD, [sweep, _result("s", ("s",), acc, out)])

    return build


def _mean(plan: Plan, dtype: np.dtype) -> str:
    out = numpy_result("mean", np.mean, dtype)
    acc = np.promote_types(out, np.float64)
    sweep = Sweep((Accumulator("s", numpy_type(acc), "0"),), ("s = add_unordered(s, v)",))
    return reduction_source(plan, STANDARD, [sweep, _DIVISOR, _result("s / n", ("s",), acc, out)])


def _moments(name: str, numpy_fn: Callable, root: bool):
    """Variance (and its root): the mean first, then the squared deviations from it, as NumPy does."""
    def build(plan: Plan, dtype: np.dtype) -> str:
        out = numpy_result(name, numpy_fn, dtype)
        acc = np.promote_types(dtype, np.float64)
        total = Sweep((Accumulator("s", numpy_type(acc), "0"),), ("s += v",))
        mean = Map("mu", numpy_type(acc), "s / n", ("s",))
        square = "q += d.real * d.real + d.imag * d.imag" if acc.kind == "c" else "q += d * d"
        spread = Sweep((Accumulator("q", "np.float64", "0"),), ("d = v - mu", square), reads=("mu",))
        value = f"{'np.sqrt' if root else ''}(q / div if div > 0 else q * np.inf)"  # NumPy: q / 0
        return reduction_source(plan, WITH_DDOF, [total, _DIVISOR, mean, spread, "div = max(count - ddof, 0)",
                                                  Map("result", numpy_type(out), value, ("q",))])

    return build


def _select(dtype: np.dtype, largest: bool, best: str) -> Tuple[str, ...]:
    """The update that keeps the extremum in ``best`` without a branch (so a short row is fast): for floats
    LLVM's ``maximum``/``minimum``, which a loop vectorizes and where a NaN wins, as in NumPy."""
    if dtype.kind == "f":
        return (f"{best} = {'maximum' if largest else 'minimum'}({best}, v)",)
    return (f"{best} = v if v {'>' if largest else '<'} {best} else {best}",)


def _extremum(name: str, largest: bool):
    def build(plan: Plan, dtype: np.dtype) -> str:
        _ordered(name, dtype)
        sweep = Sweep((Accumulator("s", numpy_type(dtype), _bound(dtype, upper=not largest)),),
                      _select(dtype, largest, "s"))
        return reduction_source(plan, STANDARD, [_nonempty("maximum" if largest else "minimum"), sweep,
                                                 Map("result", numpy_type(dtype), "s", ("s",))])

    return build


def _ptp(plan: Plan, dtype: np.dtype) -> str:
    out = numpy_result("ptp", np.ptp, dtype)
    _ordered("ptp", dtype)
    sweep = Sweep((Accumulator("hi", numpy_type(dtype), _bound(dtype, upper=False)),
                   Accumulator("lo", numpy_type(dtype), _bound(dtype, upper=True))),
                  _select(dtype, True, "hi") + _select(dtype, False, "lo"))
    return reduction_source(plan, STANDARD, [_nonempty("maximum"), sweep,
                                             Map("result", numpy_type(out), "hi - lo", ("hi", "lo"))])


def _position(name: str, largest: bool):
    """argmax/argmin: the first position of the extremum (of the first NaN, if any)."""
    def build(plan: Plan, dtype: np.dtype) -> str:
        _ordered(name, dtype)
        nan = " or (v != v and b == b)" if dtype.kind == "f" else ""
        sweep = Sweep((Accumulator("b", numpy_type(dtype), "0"), Accumulator("bi", "np.intp", "-1")),
                      (f"if bi < 0 or v {'>' if largest else '<'} b{nan}:", "    b = v", "    bi = k"),
                      uses_position=True)
        empty = f"if count == 0:\n    raise ValueError('attempt to get {name} of an empty sequence')"
        return reduction_source(plan, STANDARD, [empty, sweep, "result_ = bi_"])

    return build


def _truth(every: bool):
    def build(plan: Plan, dtype: np.dtype) -> str:
        step = ("if v == 0:", "    s = False") if every else ("if v != 0:", "    s = True")
        sweep = Sweep((Accumulator("s", "np.bool_", repr(every)),), step)
        return reduction_source(plan, STANDARD, [sweep, "result_ = s_"])

    return build


# ---- registration -------------------------------------------------------------------------------


def _is_number(a) -> bool:
    """A Python or NumPy number: NumPy reduces it as the 0-d array it makes of it."""
    return isinstance(a, (types.Number, types.Boolean))


def _whole(axis, keepdims) -> bool:
    """A reduction of the whole array to a scalar, spelled with the defaults."""
    return static_value(axis) is None and static_value(keepdims) is False


_STEPS = {"maximum": maximum, "minimum": minimum, "add_unordered": add_unordered}  # what the kernels' steps call


def _register_reduction(helper: Callable, build: Callable, single: bool = False,
                        numpy_fn: Optional[Callable] = None) -> None:
    """Give ``helper(a, axis=None, keepdims=False)`` a Numba implementation built for each plan; with
    ``numpy_fn``, a whole reduction of a scalar or a complex array is Numba's own (``legalize`` sends
    every ``np.max(x)`` here)."""
    name = helper.__name__

    @overload(helper, prefer_literal=True)
    def typer(a, axis=None, keepdims=False):
        if numpy_fn is not None and _whole(axis, keepdims) and \
                not (isinstance(a, types.Array) and not isinstance(a.dtype, types.Complex)):
            return lambda a, axis=None, keepdims=False: numpy_fn(a)
        if _is_number(a):
            return lambda a, axis=None, keepdims=False: helper(np.asarray(a), axis, keepdims)
        return compile_source(build(make_plan(name, a, axis, keepdims, single), as_dtype(a.dtype)), **_STEPS)


def _register_moments(helper: Callable, build: Callable) -> None:
    name = helper.__name__

    @overload(helper, prefer_literal=True)
    def typer(a, axis=None, ddof=0, keepdims=False):
        if _is_number(a):
            return lambda a, axis=None, ddof=0, keepdims=False: helper(np.asarray(a), axis, ddof, keepdims)
        return compile_source(build(make_plan(name, a, axis, keepdims), as_dtype(a.dtype)))


def _register_scan(helper: Callable, op: str, numpy_fn: Callable) -> None:
    name = helper.__name__

    @overload(helper, prefer_literal=True)
    def typer(a, axis=None):
        dtype = array_dtype(name, a)
        axis = static(name, "axis", axis)
        if axis is not None:
            axis = normalize_axes(name, a.ndim, axis, single=True)[0]
        out = numpy_type(numpy_result(name, numpy_fn, dtype))
        return compile_source(scan_source(a.ndim, axis, "a, axis=None", op, out))


_register_reduction(sum, _fold("sum", "0", "s = add_unordered(s, v)", np.sum))
_register_reduction(prod, _fold("prod", "1", "s *= v", np.prod))
_register_reduction(mean, _mean)
_register_moments(var, _moments("var", np.var, root=False))
_register_moments(std, _moments("std", np.std, root=True))
_register_reduction(max, _extremum("max", largest=True), numpy_fn=np.max)
_register_reduction(min, _extremum("min", largest=False), numpy_fn=np.min)
_register_reduction(ptp, _ptp)
_register_reduction(argmax, _position("argmax", largest=True), single=True)
_register_reduction(argmin, _position("argmin", largest=False), single=True)
_register_reduction(any, _truth(every=False))
_register_reduction(all, _truth(every=True))
_MEDIAN = """
def impl(a, axis=None):
    rows = np.ascontiguousarray({lanes}).reshape(({count}, {length}))
    out = np.empty({count}, dtype=np.{dtype})
    for r in range({count}):
        if {length} == 0{nan}:
            out[r] = np.nan
        else:
            lane = {lane}
            out[r] = {middle}
    return {result}
"""
# complex numbers' median as NumPy's: the middle of the lane sorted lexicographically (Numba's np.median takes
# real numbers only), the mean of the middle two for an even length
_COMPLEX_MIDDLE = "lane[{n} // 2] if {n} % 2 == 1 else (lane[{n} // 2 - 1] + lane[{n} // 2]) / 2"


@overload(median, prefer_literal=True)
def _median(a, axis=None):
    """The lanes along ``axis`` (moved to the end, merged where it is a tuple), each the median of Numba's (of
    complex numbers: the middle in lexicographic order, as NumPy's), NaN where the lane has a NaN or is empty (as
    NumPy's; Numba's sorts a NaN last and takes the middle)."""
    dtype = array_dtype("median", a)
    axes = normalize_axes("median", a.ndim, static("median", "axis", axis))
    kept = tuple(k for k in range(a.ndim) if k not in axes)
    order = kept + axes
    product = lambda dims: " * ".join([f"a.shape[{k}]" for k in dims] or ["1"])  # noqa: E731
    result = f"out.reshape(({''.join(f'a.shape[{k}], ' for k in kept)}))" if kept else "out[0]"
    return compile_source(_MEDIAN.format(
        lanes=f"np.transpose(a, {order})" if order != tuple(sorted(order)) else "a", count=product(kept),
        length=product(axes), dtype=numpy_result("median", np.median, dtype).name, result=result,
        lane="np.sort(rows[r])" if dtype.kind == "c" else "rows[r]",
        middle=_COMPLEX_MIDDLE.format(n=product(axes)) if dtype.kind == "c" else "np.median(lane)",
        nan=" or np.any(np.isnan(rows[r]))" if dtype.kind in "fc" else ""))


_register_scan(cumsum, "+", np.cumsum)
_register_scan(cumprod, "*", np.cumprod)
