"""Small node builders and name queries shared by the passes, the analyses and the transforms."""
from __future__ import annotations

import copy
from typing import Any, Dict, Iterator, List, Set, Tuple, Union

import gast

from numbax.ast_passes.tree_copy import names


def name(identifier: str, store: bool = False) -> gast.Name:
    """A ``gast.Name`` in load (or store) context."""
    return gast.Name(id=identifier, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None)


def assign(target: Union[str, gast.expr], value: gast.expr) -> gast.Assign:
    """``target = value``; a string target becomes a stored name."""
    node = name(target, True) if isinstance(target, str) else target
    return gast.Assign(targets=[node], value=value, type_comment=None)


def module_call(module: str, function: str, *args: gast.expr) -> gast.Call:
    """``module.function(*args)``: ``np.real(g)``, ``rt.unbroadcast(g, x)``."""
    return gast.Call(func=gast.Attribute(value=name(module), attr=function, ctx=gast.Load()), args=list(args),
                     keywords=[])


def rt_call(helper: str, *args: gast.expr) -> gast.Call:
    """``rt.helper(*args)``: a call of a ``numbax.runtime`` helper."""
    return module_call("rt", helper, *args)


def literal(node: gast.expr, default: Any = None) -> Any:
    """The value of a literal, ``1`` or ``-1`` (a negative number is a minus applied to one), else ``default``."""
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and isinstance(node.operand, gast.Constant):
        return -node.operand.value
    return default


def loads(node: gast.AST) -> Set[str]:
    """Every name ``node`` reads."""
    load = gast.Load
    return {n.id for n in names(node) if type(n.ctx) is load}


def base(node: gast.expr) -> str:
    """The variable under subscripts and attributes: ``x`` in ``x[i].T``."""
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id


def own_expressions(stmt: gast.stmt) -> List[gast.AST]:
    """The parts of ``stmt`` outside its nested blocks: a loop's iterable or test, a branch's test."""
    if isinstance(stmt, gast.FunctionDef):
        return []
    if isinstance(stmt, (gast.If, gast.While)):
        return [stmt.test]
    if isinstance(stmt, gast.For):
        return [stmt.iter]
    return [stmt]


def in_order(body: List[gast.stmt], around: Tuple[gast.stmt, ...] = ()) -> Iterator[Tuple[gast.stmt, tuple]]:
    """Each statement of ``body`` and of its nested blocks in source order, with the branches and loops
    around it, outermost first (a loop's header counts as inside its loop: it runs with each iteration)."""
    for stmt in body:
        loop = isinstance(stmt, (gast.For, gast.While))
        yield stmt, around + (stmt,) if loop else around
        if loop or isinstance(stmt, gast.If):
            for field in ("body", "orelse"):
                yield from in_order(getattr(stmt, field), around + (stmt,))


class Substitute(gast.NodeTransformer):
    """Loads of the names in ``mapping`` replaced by (copies of) their expressions: ``Substitute(m).visit(e)``."""

    def __init__(self, mapping: Dict[str, gast.expr]):
        self.mapping = mapping

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.mapping:
            return copy.deepcopy(self.mapping[node.id])
        return node
