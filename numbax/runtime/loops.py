"""Loop nests over compile-time axes, written as Python source and compiled by Numba.

A reduction whose axes are known at typing time compiles best as plain nested
loops in the array's C order: the loops over reduced axes that end the nest
accumulate into a local scalar, the loops over kept axes pick the slot of a
flat accumulator array. ``reduction_source`` writes such a function for one
``Plan`` (ndim, reduced axes, keepdims) from steps: ``Sweep`` s (one pass over
the array each), ``Map`` s (one pass over the slots) and scalar statements;
``scan_source`` writes cumulative sums and products. Everything is an explicit
loop: a NumPy array expression would cost Numba more to compile than the whole
nest. ``compile_source`` turns the text into a function (one per text), which
Numba's ``overload`` then compiles into the caller.

    >>> plan = Plan(ndim=2, axes=(1,), keepdims=True)
    >>> sweep = Sweep((Accumulator("s", "np.float64", "0"),), ("s += v",))
    >>> print(reduction_source(plan, "a", [sweep, Map("result", "np.float64", "s / count", ("s",))]))
    def impl(a):
        n0 = a.shape[0]
        n1 = a.shape[1]
        count = n1
        m = n0
        s_ = np.full(m, 0, np.float64)
        for i0 in range(n0):
            s = s_[i0]
            for i1 in range(n1):
                v = a[i0, i1]
                s += v
            s_[i0] = s
        result_ = np.empty(m, np.float64)
        for j in range(m):
            s = s_[j]
            result_[j] = s / count
        return result_.reshape((n0, 1))
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numba
import numpy as np

from numbax.runtime.cached import describe_kernel

INDENT = "    "


@dataclasses.dataclass(frozen=True)
class Plan:
    """A reduction's static shape: the input's ndim, the reduced axes (sorted, >= 0), keepdims."""

    ndim: int
    axes: Tuple[int, ...]
    keepdims: bool

    @property
    def kept(self) -> Tuple[int, ...]:
        return tuple(d for d in range(self.ndim) if d not in self.axes)

    @property
    def inner(self) -> int:
        """The first axis of the run of reduced axes that ends the nest (``ndim`` if the last is kept)."""
        j = self.ndim
        while j > 0 and j - 1 in self.axes:
            j -= 1
        return j

    def slot(self) -> str:
        """The flat index of the current output element (C order over the kept axes)."""
        return _c_order(self.kept)

    def slots(self) -> str:
        """How many output elements there are."""
        return " * ".join(f"n{d}" for d in self.kept) or "1"

    def position(self) -> str:
        """The C-order position of the current element inside the reduced block (argmax's answer)."""
        return _c_order(self.axes)

    def shaped(self, flat: str) -> str:
        """The 1-D array ``flat`` of every slot, in the result's final shape (a scalar if no axis is left)."""
        if self.keepdims:
            sizes = ", ".join("1" if d in self.axes else f"n{d}" for d in range(self.ndim))
            return f"{flat}.reshape(({sizes}{',' if self.ndim == 1 else ''}))"
        if len(self.kept) == 1:
            return flat
        return f"{flat}.reshape(({', '.join(f'n{d}' for d in self.kept)}))" if self.kept else f"{flat}[0]"


def _c_order(axes: Sequence[int]) -> str:
    expr = ""
    for d in axes:
        expr = f"i{d}" if not expr else f"({expr}) * n{d} + i{d}"
    return expr or "0"


@dataclasses.dataclass(frozen=True)
class Accumulator:
    """A per-slot running value: a local ``name``, stored in the flat array ``name_``."""

    name: str
    dtype: str  # source of a NumPy scalar type, e.g. ``np.float64``
    init: str   # source of its initial value


@dataclasses.dataclass(frozen=True)
class Sweep:
    """One pass over the array: ``update`` runs for each element ``v`` (and its position ``k``)."""

    accumulators: Tuple[Accumulator, ...]
    update: Tuple[str, ...]
    reads: Tuple[str, ...] = ()  # per-slot values of an earlier step, read as locals (``mu`` from ``mu_``)
    uses_position: bool = False


@dataclasses.dataclass(frozen=True)
class Map:
    """One pass over the slots: ``target_[j] = value``, reading each of ``reads`` as a local."""

    target: str
    dtype: str
    value: str
    reads: Tuple[str, ...]


def numpy_type(dtype: np.dtype) -> str:
    """Source that names ``dtype``'s scalar type in generated code."""
    return "np.bool_" if dtype == np.bool_ else f"np.{np.dtype(dtype).name}"


def _shape_lines(ndim: int, array: str) -> List[str]:
    return [f"n{d} = {array}.shape[{d}]" for d in range(ndim)]


def element_source(ndim: int, array: str, shifted: Optional[int] = None) -> str:
    """``a[i0, i1]``; with ``shifted`` one index is the previous one (``a[i0, i1 - 1]``)."""
    index = [f"i{d} - 1" if d == shifted else f"i{d}" for d in range(ndim)]
    return f"{array}[{', '.join(index)}]" if ndim else f"{array}[()]"


def empty_like_source(ndim: int, array: str, float64: bool) -> str:
    """``np.empty`` of ``array``'s shape as generated code writes it for float64 (``np.empty(n)``,
    ``np.empty((n0, n1))``: the same Numba specializations), else in ``dtype``."""
    if not float64:
        return f"np.empty({array}.shape, dtype)"
    return f"np.empty({array}.shape[0])" if ndim == 1 else f"np.empty({array}.shape)"


def nest(ndim: int, array: str, inner: Sequence[str]) -> List[str]:
    """``inner`` inside ``for i0 in range(array.shape[0]):``, ``for i1 ...``: once per element of ``array``."""
    lines = [INDENT * d + f"for i{d} in range({array}.shape[{d}]):" for d in range(ndim)]
    return lines + [INDENT * ndim + line for line in inner]


def _sweep_lines(plan: Plan, array: str, sweep: Sweep, scalar: bool) -> List[str]:
    slot, inner = plan.slot(), plan.inner
    if scalar:  # one slot: accumulate in locals, no per-slot arrays to allocate
        lines = [f"{acc.name} = {acc.dtype}({acc.init})" for acc in sweep.accumulators]
        lines += [f"{name} = {name}_" for name in sweep.reads]
        loads, stores = [], []
    else:
        lines = [f"{acc.name}_ = np.full(m, {acc.init}, {acc.dtype})" for acc in sweep.accumulators]
        loads = [f"{name} = {name}_[{slot}]" for name in [acc.name for acc in sweep.accumulators] + list(sweep.reads)]
        stores = [f"{acc.name}_[{slot}] = {acc.name}" for acc in sweep.accumulators]
    for d in range(plan.ndim):
        if d == inner:
            lines += [INDENT * d + line for line in loads]
        lines.append(INDENT * d + f"for i{d} in range(n{d}):")
    body = [f"v = {element_source(plan.ndim, array)}"]
    body += [f"k = {plan.position()}"] if sweep.uses_position else []
    body += list(sweep.update)
    if inner == plan.ndim:
        body = loads + body + stores
    lines += [INDENT * plan.ndim + line for line in body]
    if inner < plan.ndim:
        lines += [INDENT * inner + line for line in stores]
    return lines + [f"{acc.name}_ = {acc.name}" for acc in sweep.accumulators] if scalar else lines


def _map_lines(step: Map, scalar: bool) -> List[str]:
    if scalar:
        return [f"{name} = {name}_" for name in step.reads] + [f"{step.target}_ = {step.dtype}({step.value})"]
    return [f"{step.target}_ = np.empty(m, {step.dtype})", "for j in range(m):"] + \
        [f"{INDENT}{name} = {name}_[j]" for name in step.reads] + [f"{INDENT}{step.target}_[j] = {step.value}"]


def function_source(signature: str, body: Sequence[str]) -> str:
    """The source of ``def impl(<signature>):`` with ``body`` (its lines, indented once) as its body."""
    return "\n".join([f"def impl({signature}):"] + [INDENT + line for line in body])


def reduction_source(plan: Plan, signature: str, steps: Sequence[Union[Sweep, Map, str]]) -> str:
    """A function of ``signature`` (its first parameter the array ``a``) reducing over ``plan``.

    ``steps`` are sweeps, maps and scalar statements (a string each); the last must leave the flat
    array ``result_``. ``count`` holds the number of elements reduced into each slot, ``m`` the
    number of slots. A reduction to one scalar keeps each ``name_`` as a scalar instead: no arrays are
    allocated, which is most of the time of a reduction of a short row.
    """
    scalar = not plan.kept and not plan.keepdims
    body = _shape_lines(plan.ndim, "a") + [f"count = {' * '.join(f'n{d}' for d in plan.axes) or '1'}",
                                           f"m = {plan.slots()}"]
    for step in steps:
        if isinstance(step, Sweep):
            body += _sweep_lines(plan, "a", step, scalar)
        elif isinstance(step, Map):
            body += _map_lines(step, scalar)
        else:
            body += step.splitlines()
    return function_source(signature, body + [f"return {'result_' if scalar else plan.shaped('result_')}"])


def scan_source(ndim: int, axis: Optional[int], signature: str, op: str, out: str) -> str:
    """A cumulative ``op`` (``+`` or ``*``) along ``axis`` (None: over the C-order flattening)."""
    body = _shape_lines(ndim, "a")
    element = element_source(ndim, "a")
    if axis is None:
        size = " * ".join(f"n{d}" for d in range(ndim)) or "1"
        body += [f"out = np.empty({size}, {out})", "c = 0", f"s = {out}({'0' if op == '+' else '1'})"]
        inner = [f"s = s {op} {element}", "out[c] = s", "c += 1"]
    else:
        shape = "(" + "".join(f"n{d}, " for d in range(ndim)).rstrip(" ") + ")"
        here, before = element_source(ndim, "out"), element_source(ndim, "out", shifted=axis)
        body += [f"out = np.empty({shape}, {out})"]
        inner = [f"if i{axis} == 0:", f"{INDENT}{here} = {element}",
                 "else:", f"{INDENT}{here} = {before} {op} {element}"]
    for d in range(ndim):
        body.append(INDENT * d + f"for i{d} in range(n{d}):")
    body += [INDENT * ndim + line for line in inner] + ["return out"]
    return function_source(signature, body)


def batch_source(plan: Plan, signature: str, per_item: Sequence[str], dtype: str) -> str:
    """A loop over the kept axes of ``plan``: ``per_item`` turns the sub-array ``mat`` into ``value``.

    ``mat`` is ``a`` indexed by the kept indices with ``:`` at the reduced axes (one matrix of a
    stack, say); the values, of ``dtype``, take the result's shape as ``plan`` says.
    """
    index = ", ".join(":" if d in plan.axes else f"i{d}" for d in range(plan.ndim))
    body = _shape_lines(plan.ndim, "a") + [f"result_ = np.empty({plan.slots()}, {dtype})"]
    for depth, d in enumerate(plan.kept):
        body.append(INDENT * depth + f"for i{d} in range(n{d}):")
    inner = [f"mat = a[{index}]"] + list(per_item) + [f"result_[{plan.slot()}] = value"]
    body += [INDENT * len(plan.kept) + line for line in inner]
    return function_source(signature, body + [f"return {plan.shaped('result_')}"])


_COMPILED: Dict[Tuple, Callable] = {}


def compile_source(source: str, **names: Any) -> Callable:
    """The function ``impl`` that ``source`` defines (seeing ``np`` and ``names``), memoized.

    Memoizing on the text keeps one function object per kernel, so Numba compiles each once. The namespace
    names this module: Numba's disk cache keeps a called function's environment only where its globals have
    a ``__name__``, and without one a cached caller cannot box the run-time arguments of an exception the
    kernel raises (Numba: "Error creating Python tuple from runtime exception arguments").
    """
    key = (source,) + tuple(sorted((k, id(v)) for k, v in names.items()))
    fn = _COMPILED.get(key)
    if fn is None:
        namespace = {"__name__": __name__, "np": np, **names}
        exec(compile(source, describe_kernel(source, names), "exec"), namespace)
        fn = _COMPILED[key] = namespace["impl"]
    return fn


_JITTED: Dict[str, Callable] = {}


def jit_source(source: str) -> Callable:
    """``compile_source(source)`` as a Numba dispatcher, for kernels that other kernels call."""
    if source not in _JITTED:
        _JITTED[source] = numba.njit(compile_source(source))
    return _JITTED[source]


def ufunc_implementation(scalar: Callable, params: str, **options: Any) -> Callable[[], Callable]:
    """A function giving an implementation ``impl(params)`` (the parameters of the overload's typer, which Numba
    requires) that applies the ufunc ``numba.vectorize(**options)(scalar)`` to them, both made on its first call
    (from an overload's typer, when a caller compiles): ``numba.vectorize`` imports Numba's ufunc machinery, a large
    part of its lowering, which ``import numbax`` and loading cached code (a warm start) do not need.

    The implementation names the ufunc as a global of its ``compile_source`` kernel, not as a closure variable:
    Numba keys its disk cache on a function's closure pickled, and a ufunc pickles with an identifier new in
    each process, so an implementation closing over one was compiled again in every process.

    ``implementation(result)`` spells the ufunc's value through ``result`` (``"np.int8({})"``, ``"{}.astype(np.int8)"``:
    the dtype NumPy gives where Numba's arithmetic in ``scalar`` widens)."""
    ufuncs: List[Callable] = []
    made: Dict[str, Callable] = {}

    def implementation(result: str = "{}") -> Callable:
        if result not in made:
            if not ufuncs:
                ufuncs.append(numba.vectorize(**options)(scalar))
            made[result] = compile_source(f"def impl({params}):\n    return {result.format(f'ufunc({params})')}\n",
                                          ufunc=ufuncs[0])
        return made[result]

    return implementation
