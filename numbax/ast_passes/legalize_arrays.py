"""legalize_arrays: the shape functions and contractions that ``legalize`` sends to ``numbax.runtime``.

Numba lacks ``np.einsum``, ``np.inner``, ``np.vdot`` of matrices, ``np.polyval``,
``np.convolve`` in modes other than ``"full"``, ``np.tensordot``, ``np.matmul``,
``np.dot`` of integers, of two dtypes or of more than two dims,
``np.diagonal``, ``np.squeeze``, ``np.stack`` of scalars, ``np.where`` of scalars as a scalar,
``np.tile``, ``np.pad`` and the array methods
``diagonal``, ``trace``, ``squeeze``, ``swapaxes``; it has ``repeat``, ``flip``,
``roll``, ``sort`` and ``trace`` without ``axis=`` arguments, ``median`` without ``axis`` (at all), ``clip`` of
arrays only, with a bound, and no ``clip`` method of a number, ``atleast_1d``/``atleast_2d``
for arrays only, ``reshape`` of C-contiguous arrays only, and keeps the values
of flat constant tuples only (``axes=([1, 2], [0, 1])`` reaches an overload
as a tuple of run-time ints). ``rewrite`` turns one such call into the runtime
helper of the same name (``numbax.runtime.arrays``, ``.contractions``), its
arguments positional in NumPy's order, trailing defaults dropped and list
displays written as tuples; an einsum's subscripts, a literal, are parsed
here and written with their output explicit. It returns ``None`` for a call
Numba compiles as it is, or that no helper takes (``out=``, ``order=``, a
subscripts string known only at run time). ``np.diag`` of a matrix goes to ``rt.diag``, a view as
NumPy's (Numba's copies), and ``np.moveaxis``'s list displays are written as tuples, which Numba takes.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> call = gast.parse("np.tensordot(a, b, axes=([1, 2], [0, 1]))").body[0].value
    >>> unparse(rewrite(call, "rt"))
    'rt.tensordot(a, b, (1, 2), (0, 1))'
    >>> unparse(rewrite(gast.parse("x.reshape(2, -1)").body[0].value, "rt"))
    'rt.reshape(x, (2, -1))'
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Tuple

import gast

from numbax.ast_passes import resolve
from numbax.ast_passes.analyses.nodes import literal
from numbax.runtime.contractions import explicit_subscripts

_MODULES = frozenset({"np", "math", "cmath"})
_MISSING = object()


@dataclasses.dataclass(frozen=True)
class Route:
    """A NumPy function's parameters after the array, in order, and when its call goes to the helper.

    ``needs``: parameters that must be given and not at their default (``np.flip(m)`` is Numba's own);
    ``defaults``: the trailing values the helper call may leave out.
    """

    params: Tuple[str, ...]
    defaults: Dict[str, Any] = dataclasses.field(default_factory=dict)
    needs: Tuple[str, ...] = ()
    method: bool = False
    function: bool = True


_DIAGONAL = {"offset": 0, "axis1": 0, "axis2": 1}
ROUTES: Dict[str, Route] = {
    "diagonal": Route(("offset", "axis1", "axis2"), _DIAGONAL, method=True),
    "trace": Route(("offset", "axis1", "axis2"), _DIAGONAL, method=True, function=False),
    "squeeze": Route(("axis",), {"axis": None}, method=True),
    "atleast_1d": Route(()),
    "atleast_2d": Route(()),
    "tile": Route(("reps",)),
    "stack": Route(("axis",), {"axis": 0}),
    "where": Route(("x", "y"), needs=("x",)),
    "pad": Route(("pad_width", "mode", "constant_values"), {"mode": "constant", "constant_values": 0}),
    "repeat": Route(("repeats", "axis"), {"axis": None}, needs=("axis",), method=True),
    "flip": Route(("axis",), {"axis": None}, needs=("axis",)),
    "roll": Route(("shift", "axis"), {"axis": None}, needs=("axis",)),
    "sort": Route(("axis", "kind"), {"axis": -1, "kind": None}, needs=("axis",)),
    "median": Route(("axis",), {"axis": None}),
    "inner": Route(("b",)),
    "vdot": Route(("b",)),
    "polyval": Route(("x",)),
    "convolve": Route(("v", "mode"), {"mode": "full"}),
    "matmul": Route(("b",)),
    "dot": Route(("b",)),
    "tensordot": Route(("b", "axes"), {"axes": 2}),
}
_TRACE_AXES = Route(("offset", "axis1", "axis2"), _DIAGONAL, needs=("axis1", "axis2"))  # np.trace, 2 axes named


def _constant(node: gast.expr) -> Any:
    """The value of a literal (``1``, ``-1``, ``None``, ``'constant'``), else ``_MISSING``."""
    return literal(node, _MISSING)


def _tuples(node: gast.expr) -> gast.expr:
    """``node`` with list displays written as tuples, nested ones too (``[0, 1]`` -> ``(0, 1)``)."""
    if isinstance(node, (gast.List, gast.Tuple)):
        return gast.Tuple(elts=[_tuples(e) for e in node.elts], ctx=gast.Load())
    return node


def _bind(params: Tuple[str, ...], args: List[gast.expr], keywords: List[gast.keyword]) -> Optional[Dict]:
    """Parameter -> argument, or None where the call is not plain (``*args``, keywords no helper takes)."""
    if len(args) > len(params) or any(isinstance(a, gast.Starred) for a in args):
        return None
    bound = dict(zip(params, args))
    for k in keywords:
        if k.arg is None or k.arg in bound or k.arg not in params:
            return None
        bound[k.arg] = k.value
    return bound


def _call(alias: str, name: str, args: List[gast.expr]) -> gast.Call:
    return gast.Call(func=resolve.reference_node(f"{alias}.{name}"), args=args, keywords=[])


def _route(alias: str, name: str, route: Route, array: gast.expr, args, keywords) -> Optional[gast.Call]:
    bound = _bind(route.params, args, keywords)
    if bound is None:
        return None
    given = {p: v for p, v in bound.items()
             if _constant(v) is _MISSING or _constant(v) != route.defaults.get(p, _MISSING)}
    # a call that names a needed parameter, even at its default (``np.sort(x, axis=-1)``, which Numba's takes no
    # ``axis`` of), or another one that has a default (``kind='stable'``) goes to the helper
    named = [p for p in route.needs if p in bound]
    if route.needs and not named and not any(p in route.defaults for p in given):
        return None
    last = max([route.params.index(p) for p in list(given) + named] + [-1])
    values = [bound.get(p) or gast.Constant(value=route.defaults[p], kind=None) for p in route.params[:last + 1]]
    if name == "tensordot" and len(values) == 2:
        values = [values[0]] + _tensordot_axes(values[1])
    return _call(alias, name, [array] + [_tuples(v) for v in values])


def _tensordot_axes(axes: gast.expr) -> List[gast.expr]:
    """``axes`` as the helper takes it: an int, or the pair as two arguments."""
    if isinstance(axes, (gast.Tuple, gast.List)) and len(axes.elts) == 2:
        return [_tuples(e) for e in axes.elts]
    return [axes]


def callee(func: gast.expr) -> Optional[List[str]]:
    """``['np', 'linalg', 'norm']`` for ``np.linalg.norm``: the dotted path of a called name, else None."""
    parts = []
    while isinstance(func, gast.Attribute):
        parts.append(func.attr)
        func = func.value
    return [func.id] + parts[::-1] if isinstance(func, gast.Name) else None


def _einsum(alias: str, node: gast.Call) -> Optional[gast.Call]:
    subscripts = node.args[0] if node.args else None
    if node.keywords or not isinstance(subscripts, gast.Constant) or not isinstance(subscripts.value, str) or \
            any(isinstance(a, gast.Starred) for a in node.args):
        return None
    try:
        text = explicit_subscripts(subscripts.value)
    except ValueError:
        return None  # NumPy's own error, at run time
    return _call(alias, "einsum", [gast.Constant(value=text, kind=None)] + node.args[1:])


def _reshape(alias: str, array: gast.expr, args: List[gast.expr], keywords, method: bool) -> Optional[gast.Call]:
    if keywords or any(isinstance(a, gast.Starred) for a in args) or not args:
        return None
    if method and len(args) > 1:
        shape = gast.Tuple(elts=args, ctx=gast.Load())
    elif len(args) == 1:
        shape = _tuples(args[0])
    else:
        return None
    return _call(alias, "reshape", [array, shape])


_CLIP_BOUNDS = {"a_min": 0, "min": 0, "a_max": 1, "max": 1}  # np.clip's names, and NumPy 2's and the method's


def _clip(alias: str, array: gast.expr, args: List[gast.expr], keywords, method: bool) -> Optional[gast.Call]:
    """``np.clip(a, a_min, a_max)`` and ``a.clip(min, max)``, bounds by position or by keyword, as ``rt.clip(a, low,
    high)``: Numba's clips arrays only, with a bound, and has no method of a number. A function call without both
    bounds stays (NumPy's TypeError: ``np.clip(x, a_max=b)`` misses ``a_min``)."""
    if len(args) > 2 or any(isinstance(a, gast.Starred) for a in args):
        return None
    bounds: List[Optional[gast.expr]] = list(args) + [None] * (2 - len(args))
    for k in keywords:
        if k.arg not in _CLIP_BOUNDS or bounds[_CLIP_BOUNDS[k.arg]] is not None:
            return None  # ``out=``: Numba reports what it lacks
        bounds[_CLIP_BOUNDS[k.arg]] = k.value
    if not method and None in bounds:
        return None
    return _call(alias, "clip", [array] + [gast.Constant(value=None, kind=None) if b is None else b for b in bounds])


def _runtime(alias: str, name: str, node: gast.Call) -> Optional[gast.Call]:
    """Adjoint helpers whose arguments need the same care: ``rt.tensordot_vjp``, ``rt.matmul_grad_a``, and
    ``rt.einsum_vjp``, whose rule passes ``None`` for the operands an einsum does not have."""
    if name == "einsum_vjp" and node.args and _constant(node.args[-1]) is None:
        args = list(node.args)
        while _constant(args[-1]) is None:
            args.pop()
        return _call(alias, name, args)
    if name == "tensordot_vjp" and len(node.args) == 5 and not node.keywords:
        return _call(alias, name, node.args[:4] + _tensordot_axes(node.args[4]))
    if name in ("matmul_grad_a", "matmul_grad_b") and len(node.args) == 3:
        # left by the simplifier where the ndims are unknown: the helper of any ndim
        g, a, b = node.args
        return _call(alias, "matmul_vjp", [g, gast.Constant(value="ab".index(name[-1]), kind=None), a, b])
    return None


def rewrite(node: gast.Call, alias: str) -> Optional[gast.Call]:
    """The runtime helper call that replaces ``node``, or None where it stays as it is."""
    path = callee(node.func)
    if path and len(path) == 2 and path[0] == alias:
        return _runtime(alias, path[1], node)
    if path == ["np", "diag"] and node.args and not node.keywords and \
            not any(isinstance(a, gast.Starred) for a in node.args):  # a matrix's diagonal: a view, as NumPy's
        return _call(alias, "diag", node.args)
    if path == ["np", "moveaxis"] and any(isinstance(a, gast.List) for a in node.args[1:]):  # Numba's: tuples
        return gast.Call(func=node.func, args=node.args[:1] + [_tuples(a) for a in node.args[1:]],
                         keywords=node.keywords)
    if path and len(path) == 2 and path[0] == "np":
        name = path[1]
        if name == "einsum":
            return _einsum(alias, node)
        if not node.args:
            return None
        if name == "reshape":
            return _reshape(alias, node.args[0], node.args[1:], node.keywords, method=False)
        if name == "clip":
            return _clip(alias, node.args[0], node.args[1:], node.keywords, method=False)
        route = _TRACE_AXES if name == "trace" else ROUTES.get(name)
        if route is None or not route.function:
            return None
        return _route(alias, name, route, node.args[0], node.args[1:], node.keywords)
    func = node.func
    if not isinstance(func, gast.Attribute) or (path and path[0] in _MODULES | {alias}):
        return None
    if func.attr == "reshape":
        return _reshape(alias, func.value, node.args, node.keywords, method=True)
    if func.attr in ("conj", "conjugate", "view") and not node.args and not node.keywords:
        # NumPy's ``x.conj()`` of a real array is ``x`` itself and ``x.view()`` a view of it; Numba's
        # ``conj()`` copies, and its ``view()`` needs a dtype
        return _call(alias, "view_of" if func.attr == "view" else "conj", [func.value])
    if func.attr == "clip":
        return _clip(alias, func.value, node.args, node.keywords, method=True)
    if func.attr == "swapaxes" and len(node.args) == 2 and not node.keywords:
        return gast.Call(func=resolve.reference_node("np.swapaxes"), args=[func.value] + node.args, keywords=[])
    route = ROUTES.get(func.attr)
    if route is None or not route.method:
        return None
    return _route(alias, func.attr, route, func.value, node.args, node.keywords)
