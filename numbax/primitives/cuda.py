"""The GPU backend's lowering of each primitive it supports: a kernel expression, a block reduction or cuBLAS.

A primitive without a ``cuda`` field is refused by the GPU backend at the user's line
(``backends.cuda.lower``), never approximated. An ``Elementwise`` template is what one thread computes for
one element, ``{0}``, ``{1}``... standing for its operands' values, in NumPy's semantics: NaN propagates
through ``maximum``/``minimum`` as in NumPy (Python's ``max`` would drop it), so those call the device
functions of ``backends.cuda.runtime`` (``gr``). The same templates hold for numbers in the host driver,
where the original NumPy call runs on NumPy scalars instead. A ``Draw`` is a ``numbax.random`` kernel in one
example's body of a ``vmap``, drawn by one thread.
"""
from __future__ import annotations

import builtins
import dataclasses
import math
from typing import Any, Callable, Tuple

import gast
import numpy as np

from numbax import runtime as rt
from numbax.primitives.registry import define, method_key


@dataclasses.dataclass(frozen=True)
class Elementwise:
    """One element of the result: ``template`` formatted with the operands' expressions; ``arity`` operands,
    passed positionally (a keyword is refused). ``complex_numbers``: whether the template computes NumPy's
    result of complex operands too (arithmetic, ``abs``, ``np.real``, ``np.conj``); the others (``math``'s
    functions, ``gr``'s device functions, casts) are for real numbers, and the GPU lowering refuses them a
    complex operand. ``without``: the template of a call whose operands at these positions are ``None``."""

    template: str
    arity: int
    complex_numbers: bool = False
    without: Tuple[Tuple[Tuple[int, ...], str], ...] = ()


@dataclasses.dataclass(frozen=True)
class Reduction:
    """A reduction over all elements or over ``axis`` (``keepdims``): ``op`` is ``sum``, ``prod``, ``max``,
    ``min``, ``any`` or ``all``; ``mean`` divides the sum by the count; ``norm`` sums squares and takes the
    square root (``np.linalg.norm`` with ``ord=None``, of floating-point arrays)."""

    op: str
    mean: bool = False
    norm: bool = False


@dataclasses.dataclass(frozen=True)
class Moment:
    """``np.var`` (``root`` False) or ``np.std`` (True) over all elements or over ``axis`` (``ddof``,
    ``keepdims``): the sum of the squared deviations from the mean, divided by the count less ``ddof`` (and its
    square root), as reductions and elementwise kernels."""

    root: bool


@dataclasses.dataclass(frozen=True)
class Scan:
    """``np.cumsum`` (``op`` ``"sum"``) or ``np.cumprod`` (``"prod"``) of a 1-d or 2-d array, over ``axis`` or
    flattened: one thread per lane, in order (``gr.scan``)."""

    op: str


@dataclasses.dataclass(frozen=True)
class Sort:
    """``np.sort`` (``op`` ``"values"``) of a 1-d or 2-d array of real numbers, and the permutations that
    differentiate it: reverse mode's ``rt.sort_grad`` (``"scatter"``) and forward mode's ``rt.sort_gather``
    (``"gather"``). One thread per lane finds the stable order that sorts it (NaN last, as NumPy's) and moves
    the lane's values, or the cotangent's or tangent's, by it (``gr.sort``)."""

    op: str


@dataclasses.dataclass(frozen=True)
class Triangle:
    """``np.tril(m, k)`` (``lower``) or ``np.triu(m, k)`` of a matrix: a new matrix, the other side of diagonal
    ``k`` zeros (``gr.triangle``)."""

    lower: bool


@dataclasses.dataclass(frozen=True)
class ArgExtreme:
    """``np.argmax`` (``op`` ``"max"``) or ``np.argmin`` (``"min"``) of a whole array: its extreme by the block
    reduction, then the first position holding it (a NaN's, where the extreme is NaN) by ``gr.first_index``."""

    op: str


@dataclasses.dataclass(frozen=True)
class Cast:
    """``x.astype(t)``: the element converted by ``t``'s own lowering (``np.float32(x)``); ``t`` must name
    one of the NumPy types below."""


@dataclasses.dataclass(frozen=True)
class Draw:
    """A ``numbax.random`` kernel in one example's body (``backends.cuda.lower.keys``): one thread's call of a
    ``numbax.runtime.random.numbers`` function, ``template`` formatted with ``key`` (the kernel text of the key
    it reads), ``args`` (each argument's text: run-time numbers at the positions ``values``, the others as
    written, such as a dtype) and ``wide`` (whether the dtype argument has 64 bits). ``result`` is ``"number"``
    (only a sample of shape ``()``: one thread draws numbers), ``"key"``, or ``"keys"`` (``split``'s rows, of a
    shape ``(n,)`` only: ``template`` gets ``row``); ``dtypes``, where given, the dtypes allowed."""

    template: str
    result: str
    values: tuple = ()
    takes_key: bool = True
    dtypes: tuple = ()


@dataclasses.dataclass(frozen=True)
class OnHost:
    """A call the host driver makes itself, as written, on device arrays and host numbers (``pmap``'s exchange
    between GPUs); ``stand_in`` gives its result's stand-in (``lower.probes``) from its arguments' stand-ins: a
    device array where it has dimensions, else a number."""

    stand_in: Callable[..., Any]


class _Matmul:
    def __repr__(self):
        return "MATMUL"


MATMUL = _Matmul()


@dataclasses.dataclass(frozen=True)
class Linalg:
    """A function of real matrices that ``gr.<helper>`` computes: ``solve`` (of a matrix and a vector or a
    matrix; cuSOLVER through CuPy, else a one-thread kernel), ``inverse``, ``determinant`` (a number on the
    host: ``result`` ``det``, ``sign`` or ``logabs`` of ``slogdet``), ``cholesky`` (cuSOLVER, or a one-thread
    kernel), or ``trace`` (the sum of the diagonal, a view)."""

    helper: str
    result: str = ""


def _unary(template: str, *keys, complex_numbers: bool = False) -> None:
    define(*keys, cuda=Elementwise(template, 1, complex_numbers))


def _binary(template: str, *keys, complex_numbers: bool = False) -> None:
    define(*keys, cuda=Elementwise(template, 2, complex_numbers))


_binary("({0} + {1})", gast.Add, np.add, complex_numbers=True)
_binary("({0} - {1})", gast.Sub, np.subtract, complex_numbers=True)
_binary("({0} * {1})", gast.Mult, np.multiply, complex_numbers=True)
_binary("({0} / {1})", gast.Div, np.divide, np.true_divide, complex_numbers=True)
_binary("({0} ** {1})", gast.Pow, np.power)
_binary("({0} // {1})", gast.FloorDiv)
_binary("({0} % {1})", gast.Mod)
_unary("(-{0})", gast.USub, np.negative, complex_numbers=True)
_unary("(+{0})", gast.UAdd, complex_numbers=True)
_unary("abs({0})", np.abs, np.absolute, abs, complex_numbers=True)  # of a complex number, its magnitude
_unary("abs({0})", math.fabs, np.fabs)
_unary("({0}).real", np.real, complex_numbers=True)  # of real numbers the operand itself (``launches``)
_unary("({0}).conjugate()", np.conj, np.conjugate, method_key("conj"), method_key("conjugate"),
       complex_numbers=True)
_binary("gr.maximum({0}, {1})", np.maximum)
_binary("gr.minimum({0}, {1})", np.minimum)
_unary("({0} * {0})", np.square, complex_numbers=True)
_unary("(not {0})", np.logical_not)
_binary("(bool({0}) and bool({1}))", np.logical_and)
_binary("(bool({0}) or bool({1}))", np.logical_or)
_binary("(bool({0}) != bool({1}))", np.logical_xor)
define(np.where, cuda=Elementwise("({1} if {0} else {2})", 3))
define(np.clip, method_key("clip"), cuda=Elementwise("gr.minimum(gr.maximum({0}, {1}), {2})", 3, without=(
    ((1,), "gr.minimum({0}, {2})"), ((2,), "gr.maximum({0}, {1})"), ((1, 2), "{0}"))))
_unary("float({0})", builtins.float)
_unary("bool({0})", np.bool_)
_unary("{0}", np.copy, method_key("copy"), complex_numbers=True)
for _type in (np.float32, np.float64, np.int32, np.int64):
    _unary(f"np.{_type.__name__}({{0}})", _type)
define(method_key("astype"), cuda=Cast())
for _name in ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "sinh", "cosh",
              "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"):
    _math = "a" + _name[3:] if _name.startswith("arc") else _name  # np.arcsin is math.asin
    _unary(f"math.{_math}({{0}})", getattr(np, _name), getattr(math, _math))

define(np.sum, cuda=Reduction("sum"))  # the methods (x.sum()) share these entries
define(np.mean, cuda=Reduction("sum", mean=True))
define(np.max, np.amax, cuda=Reduction("max"))
define(np.min, np.amin, cuda=Reduction("min"))
define(np.linalg.norm, cuda=Reduction("sum", norm=True))
define(np.prod, cuda=Reduction("prod"))
define(np.any, method_key("any"), cuda=Reduction("any"))
define(np.all, method_key("all"), cuda=Reduction("all"))
define(np.argmax, method_key("argmax"), cuda=ArgExtreme("max"))
define(np.argmin, method_key("argmin"), cuda=ArgExtreme("min"))
define(np.cumsum, method_key("cumsum"), cuda=Scan("sum"))
define(np.cumprod, method_key("cumprod"), cuda=Scan("prod"))
define(np.sort, rt.sort, cuda=Sort("values"))
define(rt.sort_grad, cuda=Sort("scatter"))
define(rt.sort_gather, cuda=Sort("gather"))
define(np.var, method_key("var"), cuda=Moment(root=False))
define(np.std, method_key("std"), cuda=Moment(root=True))
define(gast.MatMult, np.matmul, np.dot, cuda=MATMUL)  # np.dot of 1-d and 2-d arrays is their matmul
define(rt.matmul, rt.dot, cuda=MATMUL)
define(np.linalg.solve, cuda=Linalg("solve"))
define(np.linalg.inv, cuda=Linalg("inverse"))
define(np.linalg.det, cuda=Linalg("determinant", "det"))
define(rt.slogdet_sign, cuda=Linalg("determinant", "sign"))
define(rt.slogdet_logabs, cuda=Linalg("determinant", "logabs"))
define(np.trace, method_key("trace"), rt.trace, cuda=Linalg("trace"))
define(np.linalg.cholesky, cuda=Linalg("cholesky"))
define(np.tril, cuda=Triangle(lower=True))
define(np.triu, cuda=Triangle(lower=False))
_unary("gr.abs_slope({0})", rt.abs_slope)
_unary("gr.sign({0})", np.sign)
_unary("math.isnan({0})", np.isnan)
_unary("math.isinf({0})", np.isinf)
_unary("math.isfinite({0})", np.isfinite)
_unary("gr.sinc({0})", np.sinc)
_unary("gr.dsinc({0})", rt.dsinc)
_unary("math.exp2({0})", np.exp2)
_unary("gr.floor({0})", np.floor)
_unary("gr.ceil({0})", np.ceil)
_unary("gr.trunc({0})", np.trunc)
_unary("gr.rint({0})", np.rint, np.round, np.around)  # np.round with decimals: two operands, refused
_unary("gr.cbrt({0})", np.cbrt)
_unary("(1 / {0})", np.reciprocal)
_unary("math.erf({0})", rt.erf)
_unary("gr.expit({0})", rt.expit)
_binary("gr.logaddexp({0}, {1})", np.logaddexp)
_binary("gr.logaddexp2({0}, {1})", np.logaddexp2)
_binary("gr.fmax({0}, {1})", np.fmax)
_binary("gr.fmin({0}, {1})", np.fmin)
_binary("math.hypot({0}, {1})", np.hypot)
_binary("math.atan2({0}, {1})", np.arctan2)

# numbax.random's kernels by their ``rt.`` names (``numbax.random.lowering.attach`` puts these in their entries,
# where the kernels are imported); the samplers missing here are refused in one example's body
RANDOM = {
    "random_split": Draw("rt.random_key_at({key}, {row})", "keys"),
    "random_fold_in": Draw("rt.random_folded_key({key}, {args[1]})", "key", values=(1,)),
    "random_key": Draw("rt.random_seed_key({args[0]}, {args[1]})", "key", values=(0, 1), takes_key=False),
    "random_normal": Draw("{args[2]}(rt.random_normal_number({key}, {args[2]}(0)))", "number"),
    "random_exponential": Draw("{args[2]}(rt.random_exponential_number({key}, {args[2]}(0)))", "number"),
    "random_gumbel": Draw("{args[2]}(rt.random_gumbel_number({key}, {args[2]}(0)))", "number"),
    "random_uniform": Draw("{args[2]}(rt.random_uniform_number({key}, {args[3]}, {args[4]}))", "number",
                           values=(3, 4)),
    "random_bernoulli": Draw("rt.random_bernoulli_number({key}, {args[2]})", "number", values=(2,)),
    "random_bits": Draw("{args[2]}(rt.random_bits_number({key}, {wide}))", "number",
                        dtypes=(np.dtype(np.uint32), np.dtype(np.uint64))),
}
