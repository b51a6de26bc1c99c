"""legalize: send the NumPy calls Numba cannot compile to ``numbax.runtime``'s helpers.

Expects generated code after ``optimize``. Guarantees that every reduction
left in NumPy's spelling (``np.mean(x)``, ``x.max()``, ``np.sum(x, axis=k)``)
is one that Numba's nopython mode compiles, with no argument spelled at its
default (``axis=None``, ``keepdims=False``, ``ddof=0`` are dropped), and that
every other reduction (``keepdims=``, ``axis=`` where Numba lacks it, ``ddof=``,
``np.linalg.norm``, always: Numba's gives float64 of float32) is a call of the runtime helper
of the same name, with positional arguments in the helper's order. Calls with
arguments no helper takes (``dtype=``, ``out=``, ``where=``) stay as they are.
Shape functions and contractions Numba lacks (``np.einsum``, ``np.tensordot``,
``x.diagonal()``, ``np.pad``, ``np.flip(x, axis=1)``, ``x.reshape(...)``) go
to their helpers as ``legalize_arrays`` says. ``np.exp(x)`` and ``np.tanh(x)``,
which Numba compiles as a C library call per element, become the helpers of
``numbax.runtime.vector_math``, which vectorize; ``np.minimum`` and ``np.maximum``
those of ``numbax.runtime.extrema`` (NumPy's signed zeros). ``a @ b`` becomes
``rt.matmul(a, b)``, the same product, whose compiled form is loaded from the runtime's
disk cache: Numba's own ``@`` (its BLAS calls and their checks, for each pair of
layouts) took 2 s of compilation in every new process (the seed MLP's gradient, on a
busy two-core machine). ``x[...]`` read is ``x``, and ``x[...] += y`` is ``x += y`` (Numba types a read of
``x[...]`` but cannot lower it). ``imports`` names the import
line such calls need. Applying it twice changes nothing.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> module = gast.parse("def f(x):\\n    m = np.mean(x, axis=1, keepdims=True)\\n"
    ...                     "    return x.max(0) - m + np.sum(x, axis=None) + np.sum(x, 1) + np.sum(x, axis=k) @ w")
    >>> module = transform(module)
    >>> print(unparse(module))
    def f(x):
        m = rt.mean(x, 1, True)
        return rt.max(x, 0) - m + np.sum(x) + rt.sum(x, 1) + rt.matmul(np.sum(x, axis=k), w)
    >>> imports(module)
    ['from numbax import runtime as rt']
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Tuple

import gast
import numba

from numbax.ast_passes import legalize_arrays, resolve
from numbax.ast_passes.naming import Namer
from numbax.ast_passes.tree_copy import walk

_NUMBA = tuple(int(p) for p in numba.__version__.split(".")[:2])
_MODULE_NAMES = frozenset({"np", "math", "cmath"})


def _constant(node: gast.expr):
    """The value of a literal (``1``, ``-1``, ``None``, ``(0, 2)``), else the node itself."""
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and isinstance(node.operand, gast.Constant):
        return -node.operand.value
    if isinstance(node, gast.Tuple):
        items = tuple(_constant(e) for e in node.elts)
        return node if any(isinstance(i, gast.AST) for i in items) else items
    return node


def _one_axis(node: gast.expr) -> bool:
    """An integer axis, or a run-time value (Numba takes an integer that is not a constant)."""
    value = _constant(node)
    return isinstance(value, int) or (isinstance(value, gast.AST) and not isinstance(value, gast.Tuple))


def _run_time_axis(node: gast.expr) -> bool:
    """An axis that is no constant: Numba takes it; the helper needs the axes when compiling."""
    value = _constant(node)
    return isinstance(value, gast.AST) and not isinstance(value, gast.Tuple)


@dataclasses.dataclass(frozen=True)
class Reduction:
    """One reduction: NumPy's parameters after the array (positional order), the helper's, and Numba's."""

    numpy_params: Tuple[str, ...]
    helper_params: Tuple[str, ...]
    native: Dict[str, Callable[[gast.expr], bool]] = dataclasses.field(default_factory=dict)
    always: bool = False  # the helper even where Numba has it: faster to run and to compile


_AXIS_KEEPDIMS = ("axis", "keepdims")
_FOLD = Reduction(("axis", "dtype", "out", "keepdims"), _AXIS_KEEPDIMS)
_EXTREMUM = Reduction(("axis", "out", "keepdims"), _AXIS_KEEPDIMS)
_SELECT = dataclasses.replace(_EXTREMUM, always=True)
_MOMENT = Reduction(("axis", "dtype", "out", "ddof", "keepdims"), ("axis", "ddof", "keepdims"))
# Numba's argmax along an axis took 1.3 s of a cold start to compile (it permutes the axes and hashes a tuple)
_POSITION = Reduction(("axis", "out"), _AXIS_KEEPDIMS, always=True)
_SCAN = Reduction(("axis", "dtype", "out"), ("axis",))

# name -> what Numba compiles natively (numba 0.67 added cumsum's axis). A constant axis of sum goes to the
# helper: Numba's raises AxisError for axis 0 of a 0-d array, which NumPy's ufunc reductions take
REDUCTIONS: Dict[str, Reduction] = {
    "sum": dataclasses.replace(_FOLD, native={"axis": _run_time_axis}),
    "prod": _FOLD, "mean": _FOLD,
    "var": _MOMENT, "std": _MOMENT,
    # Numba's whole-array max walks an nditer with a branch per element: 0.4 s to compile, 2x slower
    "max": _SELECT, "min": _SELECT, "amax": _SELECT, "amin": _SELECT, "ptp": _EXTREMUM,
    "any": _EXTREMUM, "all": _EXTREMUM,
    "argmax": _POSITION, "argmin": _POSITION,
    "cumsum": dataclasses.replace(_SCAN, native={"axis": _one_axis} if _NUMBA >= (0, 67) else {}),
    "cumprod": _SCAN,
    # always the helper: Numba's norm of float32 is float64 (but the vector 2-norm's), NumPy's float32
    "norm": Reduction(("ord", "axis", "keepdims"), ("ord", "axis", "keepdims"), always=True),
}
# NumPy ufuncs whose helper computes what NumPy does better than Numba's own, by their number of operands:
# ``exp`` and ``tanh`` vectorize where Numba calls libm (``numbax.runtime.vector_math``), ``minimum`` and
# ``maximum`` return NumPy's operand of two equal ones (``numbax.runtime.extrema``), ``fmod`` of integers is
# NumPy's (``numbax.runtime.remainders``)
VECTORIZED = {"exp": 1, "tanh": 1, "minimum": 2, "maximum": 2, "fmod": 2}
METHODS = frozenset(REDUCTIONS) - {"amax", "amin", "ptp", "norm"}  # ndarray's methods of the same name
DEFAULTS = {"axis": None, "keepdims": False, "ddof": 0, "ord": None, "dtype": None, "out": None}


def _is_default(param: str, node: gast.expr) -> bool:
    value = _constant(node)
    return not isinstance(value, gast.AST) and value == DEFAULTS[param]


def _vectorized(node: gast.Call) -> bool:
    """``np.exp(x)``, ``np.maximum(x, y)``: its operands, positional, and no ``out=`` or ``dtype=``."""
    path = legalize_arrays.callee(node.func)
    return bool(path) and len(path) == 2 and path[0] == "np" and path[1] in VECTORIZED and \
        len(node.args) == VECTORIZED[path[1]] and not node.keywords and \
        not any(isinstance(a, gast.Starred) for a in node.args)


class _Legalizer(gast.NodeTransformer):
    def __init__(self, alias: str):
        self.alias = alias

    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        self.generic_visit(node)
        if not isinstance(node.op, gast.MatMult):
            return node
        return gast.copy_location(gast.Call(func=resolve.reference_node(f"{self.alias}.matmul"),
                                            args=[node.left, node.right], keywords=[]), node)

    def visit_Subscript(self, node: gast.Subscript) -> gast.expr:
        """``x[...]`` read: ``x`` itself (the same elements, the same memory), which Numba types but cannot
        lower."""
        self.generic_visit(node)
        if isinstance(node.ctx, gast.Load) and isinstance(node.slice, gast.Constant) and node.slice.value is Ellipsis:
            return node.value
        return node

    def visit_AugAssign(self, node: gast.AugAssign) -> gast.stmt:
        """``x[...] += y``: ``x += y``, the same update of the array in place (Numba would read ``x[...]``)."""
        self.generic_visit(node)
        target = node.target
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and \
                isinstance(target.slice, gast.Constant) and target.slice.value is Ellipsis:
            node.target = gast.Name(id=target.value.id, ctx=gast.Store(), annotation=None, type_comment=None)
        return node

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        if _vectorized(node):
            return gast.copy_location(gast.Call(func=resolve.reference_node(f"{self.alias}.{node.func.attr}"),
                                                args=node.args, keywords=[]), node)
        target = self._reduction(node)
        if target is None:
            routed = legalize_arrays.rewrite(node, self.alias)
            return node if routed is None else gast.copy_location(routed, node)
        name, array, args, method = target
        table = REDUCTIONS[name]
        bound = self._bind(table, args, node.keywords)
        if bound is None:
            return node
        given = {p: v for p, v in bound.items() if not _is_default(p, v)}
        if set(given) - set(table.helper_params):
            return node  # dtype=, out=, ...: nothing here takes them; Numba reports what it lacks
        if not table.always and all(p in table.native and table.native[p](v) for p, v in given.items()):
            return node if len(given) == len(bound) else self._numpy_call(node, array, given, method)
        return gast.copy_location(self._helper_call(name, table, array, given), node)

    def _reduction(self, node: gast.Call):
        """``(name, array, arguments after it, is_method)`` for a reduction call, else None."""
        path = legalize_arrays.callee(node.func)
        if path == ["np", "linalg", "norm"] or (path and len(path) == 2 and path[0] == "np" and path[1] in REDUCTIONS):
            return (path[-1], node.args[0], node.args[1:], False) if node.args else None
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr in METHODS and \
                not (path and path[0] in _MODULE_NAMES | {self.alias}):
            return func.attr, func.value, node.args, True
        return None

    @staticmethod
    def _bind(table: Reduction, args: List[gast.expr], keywords: List[gast.keyword]):
        """NumPy's parameter -> argument node, or None where the call is not plain (``*args``, unknown names)."""
        if len(args) > len(table.numpy_params) or any(isinstance(a, gast.Starred) for a in args):
            return None
        bound = dict(zip(table.numpy_params, args))
        for k in keywords:
            if k.arg is None or k.arg in bound or (k.arg not in table.numpy_params and k.arg != "keepdims"):
                return None
            bound[k.arg] = k.value
        return bound

    @staticmethod
    def _numpy_call(node: gast.Call, array: gast.expr, given, method: bool) -> gast.Call:
        keywords = [gast.keyword(arg=p, value=v) for p, v in given.items()]
        args = [] if method else [array]
        return gast.copy_location(gast.Call(func=node.func, args=args, keywords=keywords), node)

    def _helper_call(self, name: str, table: Reduction, array: gast.expr, given) -> gast.Call:
        last = max((table.helper_params.index(p) for p in given), default=-1)
        args = [given.get(p, gast.Constant(value=DEFAULTS[p], kind=None)) for p in table.helper_params[:last + 1]]
        return gast.Call(func=resolve.reference_node(f"{self.alias}.{name}"), args=[array] + args, keywords=[])


def _bound_names(module: gast.Module) -> List[str]:
    names = []
    for node in walk(module):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param, gast.Del)):
            names.append(node.id)
        elif isinstance(node, gast.FunctionDef):
            names.append(node.name)
    return names


def runtime_alias(module: gast.Module) -> str:
    """The name generated code gives ``numbax.runtime``: ``rt``, unless the code binds ``rt`` itself."""
    return Namer(_bound_names(module)).new("rt")


def transform(module: gast.Module) -> gast.Module:
    """Rewrite the calls of ``module`` that Numba cannot compile into runtime helper calls."""
    return _Legalizer(runtime_alias(module)).visit(module)


def imports(module: gast.Module) -> List[str]:
    """The import lines that the runtime helper calls in ``module`` need (none if it makes none)."""
    alias = runtime_alias(module)
    used = any(isinstance(n, gast.Name) and n.id == alias and isinstance(n.ctx, gast.Load) for n in walk(module))
    return [f"from numbax import runtime as {alias}"] if used else []
