"""shapes: symbolic shapes, so that reverse mode can drop the broadcasting helpers it can prove idle.

An analysis beside ``avals``: it reads the canonical function and returns
``{name: shape}`` where a shape is a tuple of dims and a dim is ``(symbol,
offset)``: the length ``symbol + offset``, with the symbol ``"x.0"`` for the
first dim of parameter ``x`` (lengths are never negative, so ``x[1:]`` and
``x[:-1]`` of a 1-D ``x`` both have the dim ``("x.0", -1)``). Only shapes that
hold on every path are kept; a name it cannot work out is absent. Rules:
operators broadcast (a scalar keeps the array's shape, equal shapes stay),
basic slicing with constant bounds, ``@`` and ``.T``; a call's shape is its
primitive's ``shape`` rule in the registry (``numbax.primitives``: elementwise
functions broadcast, reductions over everything or one constant axis drop
it, ``np.dot`` contracts), and unknown without one. A value assigned once,
outside loops, whose shape the rules cannot work out (``a + b`` of unrelated
shapes) gets symbols of its own, ``"v.0"``, so what is computed from it
elementwise is known to share its shape.

``expr_shape`` applies the same rules to an expression, which is how a rule's
``rt.unbroadcast(g * x2, x1)`` becomes ``g * x2`` when both shapes agree::

    >>> import gast
    >>> fdef = gast.parse("def f(x):\\n    a = x[1:]\\n    b = x[:-1] ** 2\\n    return a - b").body[0]
    >>> infer(fdef, {"x": 1})["b"]
    (('x.0', -1),)
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import gast

from numbax.ast_passes.analyses.avals import _ELEMENTS, row_store, rule_arguments, tape_of
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.usage import count_names
from numbax.primitives import symbolic
from numbax.primitives.registry import entry
from numbax.primitives.symbolic import ONE, SCALAR, Dim, Shape, broadcast, matmul


def dim_length(dim: Dim, params) -> Optional[gast.expr]:
    """``dim`` written as code, ``x.shape[0] - 1``, when its symbol is a dim of one of ``params`` (names
    whose values do not change), ``1`` for ``ONE``; else None."""
    symbol, offset = dim
    if dim == ONE:
        return gast.Constant(value=1, kind=None)
    param, _, axis = symbol.rpartition(".")
    if param not in params or not axis.isdigit():
        return None
    return plus(axis_length(gast.Name(id=param, ctx=gast.Load(), annotation=None, type_comment=None), int(axis)),
                offset)


def axis_length(array: gast.expr, axis: int) -> gast.expr:
    """``array.shape[axis]``."""
    shape = gast.Attribute(value=array, attr="shape", ctx=gast.Load())
    return gast.Subscript(value=shape, slice=gast.Constant(value=axis, kind=None), ctx=gast.Load())


def plus(node: gast.expr, offset: int) -> gast.expr:
    """``node + offset`` (``node - 1`` for -1; ``node`` itself for 0)."""
    if not offset:
        return node
    op = gast.Add() if offset > 0 else gast.Sub()
    return gast.BinOp(left=node, op=op, right=gast.Constant(value=abs(offset), kind=None))


def _slice(dim: Dim, part: gast.Slice) -> Optional[Dim]:
    """The dim of ``x[lower:upper]`` along ``dim``, for constant bounds that stay inside it."""
    if part.step is not None:
        return None
    lower = part.lower.value if isinstance(part.lower, gast.Constant) else (0 if part.lower is None else None)
    upper = _negative_constant(part.upper) if part.upper is not None else 0
    if not isinstance(lower, int) or lower < 0 or upper is None:
        return None
    return (dim[0], dim[1] - lower + upper)


def _negative_constant(node: gast.expr) -> Optional[int]:
    """``-k`` for a negative integer bound ``-k`` (``x[:-1]``), else None."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and isinstance(node.operand, gast.Constant) \
            and isinstance(node.operand.value, int):
        return -node.operand.value
    if isinstance(node, gast.Constant) and isinstance(node.value, int) and node.value < 0:
        return node.value
    return None


def expr_shape(node: gast.expr, env: Dict[str, Optional[Shape]], avals: Dict[str, tuple] = None) -> Optional[Shape]:
    """The symbolic shape of ``node`` given the shapes of the names it reads (None: unknown)."""
    avals = avals or {}
    if isinstance(node, gast.Constant):
        return SCALAR if isinstance(node.value, (int, float, bool)) else None
    if isinstance(node, gast.Name):
        return env.get(node.id)
    if isinstance(node, (gast.BinOp, gast.Compare)) and not isinstance(getattr(node, "op", None), gast.MatMult):
        parts = [node.left, node.right] if isinstance(node, gast.BinOp) else [node.left] + node.comparators
        return broadcast(*(expr_shape(p, env, avals) for p in parts))
    if isinstance(node, gast.UnaryOp):
        return expr_shape(node.operand, env, avals)
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
            node.value.id + _ELEMENTS in env and isinstance(node.slice, gast.Name):
        return env[node.value.id + _ELEMENTS]  # a row of a row table (``t5_rows[row]``)
    if isinstance(node, gast.Subscript):
        return _subscript(node, env, avals)
    if isinstance(node, gast.Attribute) and node.attr in ("size", "ndim"):
        return SCALAR
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute) and node.value.attr == "shape" \
            and not isinstance(node.slice, (gast.Slice, gast.Tuple)):
        return SCALAR
    if isinstance(node, gast.Attribute) and node.attr == "T":
        base = expr_shape(node.value, env, avals)
        return None if base is None else tuple(reversed(base))
    if isinstance(node, gast.BinOp):  # a @ b
        return matmul(expr_shape(node.left, env, avals), expr_shape(node.right, env, avals))
    if tape_of(node, "pop"):
        return env.get(tape_of(node, "pop") + _ELEMENTS)
    app = application(node) if isinstance(node, gast.Call) else None
    return _call(app, env, avals) if app is not None else None


def _subscript(node: gast.Subscript, env, avals) -> Optional[Shape]:
    base = expr_shape(node.value, env, avals)
    if base is None:
        return None
    elts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
    if len(elts) > len(base):
        return None
    out = []
    for dim, elt in zip(base, elts):
        if isinstance(elt, gast.Slice):
            sliced = _slice(dim, elt)
            if sliced is None:
                return None
            out.append(sliced)
        elif not (isinstance(elt, gast.Constant) and isinstance(elt.value, int) or
                  isinstance(elt, gast.Name) and avals.get(elt.id) == ("i", 0)):
            return None
    return tuple(out) + base[len(elts):]


def _call(app, env, avals) -> Optional[Shape]:
    primitive = entry(app.key)
    if primitive is None or primitive.shape is None:
        return None
    return primitive.shape(app, rule_arguments(primitive.shape, app, lambda a: expr_shape(a, env, avals)))


class _Infer:
    def __init__(self, env: Dict[str, Optional[Shape]], avals: Dict[str, tuple], fresh: Set[str]):
        self.env = env
        self.avals = avals
        self.fresh = fresh  # names assigned once: an unknown shape of theirs gets symbols of its own
        self.depth = 0

    def set(self, name: str, shape: Optional[Shape]) -> None:
        self.env[name] = shape if self.env.get(name, shape) == shape else None

    def unpack(self, stmt: gast.Assign) -> None:
        """``a, b = (x, y)``: each name the shape of its value; any other target's names unknown."""
        target, value = stmt.targets[0], stmt.value
        if len(stmt.targets) == 1 and isinstance(target, gast.Tuple) and isinstance(value, gast.Tuple) and \
                len(target.elts) == len(value.elts) and all(isinstance(t, gast.Name) for t in target.elts):
            found = [expr_shape(v, self.env, self.avals) for v in value.elts]  # all read before any is written
            for name, shape in zip(target.elts, found):
                self.set(name.id, shape)
            return
        for node in (n for t in stmt.targets for n in gast.walk(t)):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                self.env[node.id] = None

    def block(self, stmts) -> None:
        for stmt in stmts:
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                name = stmt.targets[0].id
                shape = expr_shape(stmt.value, self.env, self.avals)
                ndim = (self.avals.get(name) or ("", 0))[1]
                if shape is None and name in self.fresh and not self.depth and ndim:
                    shape = tuple((f"{name}.{k}", 0) for k in range(ndim))  # its own, as a parameter's
                elif shape is None and name in self.avals and not ndim:
                    shape = SCALAR  # a number (``z[0]`` of a loop's ``z``, whose length is not known)
                self.set(name, shape)
            elif isinstance(stmt, gast.Assign):
                self.unpack(stmt)
            elif isinstance(stmt, (gast.For, gast.While)):
                if isinstance(stmt, gast.For):
                    self.set(stmt.target.id, SCALAR)
                before = None
                self.depth += 1
                while before != self.env:  # to a fixpoint: shapes only ever become unknown
                    before = dict(self.env)
                    self.block(stmt.body)
                self.depth -= 1
            elif isinstance(stmt, gast.If):
                self.block(stmt.body)
                self.block(stmt.orelse)
            elif isinstance(stmt, gast.Expr) and row_store(stmt.value):
                self.set(row_store(stmt.value) + _ELEMENTS, expr_shape(stmt.value.args[2], self.env, self.avals))
            elif isinstance(stmt, gast.Expr) and tape_of(stmt.value, "append"):
                self.set(tape_of(stmt.value, "append") + _ELEMENTS, expr_shape(stmt.value.args[0], self.env,
                                                                                self.avals))


def infer(fdef: gast.FunctionDef, ndims: Dict[str, int], avals: Dict[str, tuple] = None,
          same: Dict[str, str] = None) -> Dict[str, Shape]:
    """``{name: shape}`` for the variables of ``fdef`` whose symbolic shape is certain, from the parameters'
    ndims (each parameter's dims are its own symbols, and so are those of a value assigned once, outside
    loops, whose shape the rules cannot work out: ``a + b`` of unrelated shapes); and under ``"t[]"`` the
    shape of every element of a tape or row table ``t``, so that ``t5_rows[row]`` has one. ``same`` maps
    parameters' dims to the one that stands for them (``assumed_equal``)."""
    same = same or {}
    env: Dict[str, Optional[Shape]] = {p: tuple((same.get(f"{p}.{k}", f"{p}.{k}"), 0) for k in range(n))
                                       for p, n in ndims.items()}
    stores, _ = count_names(fdef)
    fresh = {n for n, count in stores.items() if count == 1 and n not in ndims}
    _Infer(env, avals or {}, fresh).block(fdef.body)
    return {k: v for k, v in env.items() if v is not None}


def assumed_equal(fdef: gast.FunctionDef, ndims: Dict[str, int], avals: Dict[str, tuple],
                  unchanged: Set[str]) -> Dict[str, str]:
    """Dims of the parameters ``unchanged`` (never reassigned) that the code takes as equal where it combines
    them: ``a + b`` of arrays (where NumPy would also broadcast a length 1) and the inner dims of ``a @ b``.
    Returns each such dim's stand-in (the first, by name, of those equal to it), for ``infer``'s ``same``.

    Code generated with these shapes is right only when the dims are equal: ``guard`` writes the check
    that must run first.
    """
    symbols = {f"{p}.{k}" for p, n in ndims.items() if p in unchanged for k in range(n)}
    same: Dict[str, str] = {}
    while True:
        with symbolic.collecting(symbols) as pairs:
            infer(fdef, ndims, avals, same)
        merged = _classes(pairs, same)
        if merged == same:
            return same
        same = merged


def equal_classes(pairs) -> Dict[str, str]:
    """Each dim of ``pairs`` (of dims known equal) mapped to the first, by name, of its class, where that is
    another: the ``same`` of ``infer``."""
    return _classes(set(pairs), {})


def _classes(pairs: Set[Tuple[str, str]], same: Dict[str, str]) -> Dict[str, str]:
    """``same`` with ``pairs`` joined in: every dim of a class maps to the class's first symbol."""
    parent = dict(same)

    def root(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = sorted((root(a), root(b)))
        if ra != rb:
            parent[rb] = ra
    return {x: root(x) for x in set(parent) | {x for pair in pairs for x in pair} if root(x) != x}


def guard(same: Dict[str, str]) -> List[gast.stmt]:
    """``rt.assume_equal(x.shape[1], w.shape[0])`` for each dim ``same`` equates: the checks that must run
    before code that takes them as equal (each raises ``rt.ShapesDiffer`` where they are not)."""
    out = []
    for symbol, stand_in in sorted(same.items()):
        lengths = [dim_length((s, 0), {s.rpartition(".")[0]}) for s in (symbol, stand_in)]
        call = gast.Call(func=gast.Attribute(value=gast.Name(id="rt", ctx=gast.Load(), annotation=None,
                                                             type_comment=None), attr="assume_equal",
                                             ctx=gast.Load()), args=lengths, keywords=[])
        out.append(gast.Expr(value=call))
    return out
