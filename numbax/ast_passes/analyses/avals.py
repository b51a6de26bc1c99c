"""avals: the kind (bool, int, float, complex) and ndim of each variable, inferred from the arguments'.

An analysis: it reads the canonical function and returns ``{name: (kind,
ndim)}``; a name whose assignments disagree, or whose value it cannot work
out, is absent. Reverse mode reads it to keep scalar tapes in typed arrays,
to write ``g`` where a scalar cannot have been broadcast, and to seed and
zero scalars with literals. What a call gives is its primitive's ``aval`` rule in the
registry (``numbax.primitives``); a primitive without one gives an unknown value.
"""
from __future__ import annotations

from typing import Dict, Optional

import gast
import numpy as np

from numbax.ast_passes.analyses.primitives import application
from numbax.primitives.kinds import ORDER, Aval, OfItems
from numbax.primitives.registry import entry

_ELEMENTS = "[]"  # suffix: the key of what a list (a tape) holds


def tape_of(node: gast.expr, method: str) -> Optional[str]:
    """The list ``t`` in ``t.append(v)`` or ``t.pop()`` (``method``), else None."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == method \
            and isinstance(node.func.value, gast.Name) and len(node.args) == (method == "append"):
        return node.func.value.id
    return None


def row_store(node: gast.expr) -> Optional[str]:
    """The row table ``t`` in ``rt.save_row(t, row, v)`` (reverse mode saving an array in a loop), else None."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == "save_row" \
            and isinstance(node.func.value, gast.Name) and node.func.value.id == "rt" and len(node.args) == 3 \
            and isinstance(node.args[0], gast.Name):
        return node.args[0].id
    return None


def of_value(value) -> Optional[Aval]:
    """The abstract value of a concrete Python or NumPy value."""
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 - anything NumPy cannot hold has no aval
        return None
    kind = array.dtype.kind
    kind = "i" if kind == "u" else kind
    return (kind, array.ndim) if kind in ORDER else None


def _is_range(node: gast.expr) -> bool:
    """``range(...)``: a loop over it binds integers."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "range"


class _Infer:
    def __init__(self, env: Dict[str, Aval]):
        self.env: Dict[str, Optional[Aval]] = dict(env)

    def set(self, name: str, aval: Optional[Aval]) -> None:
        if name in self.env and self.env[name] != aval:
            self.env[name] = None
        else:
            self.env[name] = aval

    def block(self, stmts) -> None:
        for stmt in stmts:
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                self.set(stmt.targets[0].id, self.expr(stmt.value))
            elif isinstance(stmt, gast.Assign):  # unpacking: what each name gets is not worked out
                for target in stmt.targets:
                    self._unknown(target)
            elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
                self.set(stmt.target.id, self.expr(gast.BinOp(left=stmt.target, op=stmt.op, right=stmt.value)))
            elif isinstance(stmt, gast.For):
                if _is_range(stmt.iter) and isinstance(stmt.target, gast.Name):
                    self.set(stmt.target.id, ("i", 0))
                else:  # the rows of an array, the items of a tuple, ``enumerate``: not worked out
                    self._unknown(stmt.target)
                for _ in range(3):
                    self.block(stmt.body)
            elif isinstance(stmt, gast.While):
                for _ in range(3):
                    self.block(stmt.body)
            elif isinstance(stmt, gast.If):
                self.block(stmt.body)
                self.block(stmt.orelse)
            elif isinstance(stmt, gast.Expr) and tape_of(stmt.value, "append"):
                self.set(tape_of(stmt.value, "append") + _ELEMENTS, self.expr(stmt.value.args[0]))

    def _unknown(self, target: gast.expr) -> None:
        for node in gast.walk(target):  # the names it binds (not those a subscript target reads)
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                self.env[node.id] = None

    def expr(self, node) -> Optional[Aval]:
        if isinstance(node, gast.Constant):
            return of_value(node.value) if node.value is not None else None
        if isinstance(node, gast.Name):
            return self.env.get(node.id)
        if isinstance(node, gast.Compare):
            parts = [self.expr(node.left)] + [self.expr(c) for c in node.comparators]
            return None if None in parts else ("b", max(p[1] for p in parts))
        if isinstance(node, gast.BoolOp):
            return ("b", 0)
        if isinstance(node, gast.Subscript):
            return self.subscript(node)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
            return ("b", 0)
        if isinstance(node, gast.Attribute) and node.attr in ("ndim", "size"):
            return ("i", 0)
        if isinstance(node, gast.Attribute) and node.attr == "shape":
            return ("t", 1)  # a tuple of ints: only indexing it gives a value with an aval
        if isinstance(node, gast.Attribute) and node.attr in ("strides", "dtype", "flags"):
            return None
        if tape_of(node, "pop"):
            return self.env.get(tape_of(node, "pop") + _ELEMENTS)
        app = application(node)
        if app is None or any((self.expr(a) or ("", 0))[0] == "t" for a in app.args):
            return None
        return self.call(app, node)

    def subscript(self, node: gast.Subscript) -> Optional[Aval]:
        if isinstance(node.value, gast.Attribute) and node.value.attr == "shape":
            return ("i", 0) if not isinstance(node.slice, (gast.Slice, gast.Tuple)) else None
        base = self.expr(node.value)
        if base is None:
            return None
        if base[0] == "t":
            return ("i", 0) if not isinstance(node.slice, (gast.Slice, gast.Tuple)) else None
        elts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        ndim = base[1]
        for elt in elts:
            if isinstance(elt, gast.Slice):
                continue
            if isinstance(elt, gast.Constant) and elt.value is None:
                ndim += 1
                continue
            aval = self.expr(elt)
            if aval is None:
                return None
            if aval[1] == 0 and aval[0] in "ib":
                ndim -= 1
            elif len(elts) == 1 and aval[0] == "i":
                ndim += aval[1] - 1
            elif len(elts) == 1 and aval[0] == "b":
                ndim += 1 - aval[1]
            else:
                return None
        return (base[0], ndim) if ndim >= 0 else None

    def call(self, app, node) -> Optional[Aval]:
        primitive = entry(app.key)
        if primitive is None or primitive.aval is None:
            return None
        return primitive.aval(app, rule_arguments(primitive.aval, app, self.expr))


def rule_arguments(rule, app, value) -> list:
    """The values (``value`` of each node) a rule of the registry is given for ``app``'s positional arguments:
    for a rule of ``kinds.OfItems``, a first argument written as a tuple or list is the list of its items'."""
    args = [value(a) for a in app.args]
    if isinstance(rule, OfItems) and app.args and isinstance(app.args[0], (gast.Tuple, gast.List)):
        args[0] = [value(item) for item in app.args[0].elts]
    return args


def expr_aval(node: gast.expr, env: Dict[str, Aval]) -> Optional[Aval]:
    """The abstract value of the expression ``node`` given those of the names it reads."""
    aval = _Infer(env).expr(node)
    return aval if aval is not None and aval[0] in ORDER else None


def infer(fdef: gast.FunctionDef, params: Dict[str, Aval]) -> Dict[str, Aval]:
    """``{name: (kind, ndim)}`` for every variable of ``fdef`` whose abstract value is certain."""
    analysis = _Infer(params)
    analysis.block(fdef.body)
    return {k: v for k, v in analysis.env.items() if v is not None and v[0] in ORDER and not k.endswith(_ELEMENTS)}
