"""A fused loop that reads arrays at clamped indices, versioned for the case where no clamp is needed.

Fusion reads an array whose dim broadcasts into the loop's at ``min(j, t.shape[0] - 1)`` (``elements``), an
index LLVM cannot vectorize by. Where every such array has the loop's extent, which is the common case (a
label per row, not one label), ``min(j, t.shape[0] - 1)`` is ``j``: the loop nest is written twice, the
first version for that case::

    if t.shape[0] == n:
        for j in range(n):
            s[j] = u[j] * t[j]
    else:
        for j in range(n):
            s[j] = u[j] * t[min(j, t.shape[0] - 1)]

A clamp is versioned where its array is not assigned in the nest and the extent of its index's loop reads
nothing the nest assigns; runs after fusion has written its loops.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set

import gast

from numbax.ast_passes.analyses.nodes import loads
from numbax.ast_passes.tree_copy import copy_tree


def _extents(nest: gast.For) -> Dict[str, gast.expr]:
    """The loops of ``nest``, outermost first along its first statements: target -> ``range``'s one argument."""
    out: Dict[str, gast.expr] = {}
    loop = nest
    while isinstance(loop, gast.For) and isinstance(loop.target, gast.Name) and isinstance(loop.iter, gast.Call) \
            and isinstance(loop.iter.func, gast.Name) and loop.iter.func.id == "range" \
            and len(loop.iter.args) == 1 and not loop.iter.keywords:
        out[loop.target.id] = loop.iter.args[0]
        loop = loop.body[0] if len(loop.body) == 1 else None
    return out


def _stored(nest: gast.For) -> Set[str]:
    return {n.id for n in gast.walk(nest) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _clamp(node: gast.AST, extents: Dict[str, gast.expr], stored: Set[str]) -> Optional[gast.expr]:
    """``t.shape[k] == n`` for ``min(j, t.shape[k] - 1)`` of a loop ``j`` over ``range(n)`` of the nest."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "min"
            and len(node.args) == 2 and not node.keywords and isinstance(node.args[0], gast.Name)
            and node.args[0].id in extents):
        return None
    last = node.args[1]
    if not (isinstance(last, gast.BinOp) and isinstance(last.op, gast.Sub) and isinstance(last.right, gast.Constant)
            and last.right.value == 1 and isinstance(last.left, gast.Subscript)
            and isinstance(last.left.value, gast.Attribute) and last.left.value.attr == "shape"):
        return None
    extent = extents[node.args[0].id]
    if loads(last.left) & stored or loads(extent) & stored:
        return None
    return gast.Compare(left=copy_tree(last.left), ops=[gast.Eq()], comparators=[copy_tree(extent)])


class _Unclamp(gast.NodeTransformer):
    def __init__(self, extents: Dict[str, gast.expr], stored: Set[str]):
        self.extents, self.stored = extents, stored

    def visit_Call(self, node):
        if _clamp(node, self.extents, self.stored) is not None:
            return copy_tree(node.args[0])
        return self.generic_visit(node)


def _versioned(nest: gast.For) -> Optional[gast.If]:
    extents, stored = _extents(nest), _stored(nest)
    tests: List[gast.expr] = []
    for node in gast.walk(nest):
        test = _clamp(node, extents, stored)
        if test is not None and all(gast.dump(test) != gast.dump(t) for t in tests):
            tests.append(test)
    if not tests:
        return None
    unclamped = _Unclamp(extents, stored).visit(copy_tree(nest))
    test = tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.And(), values=tests)
    return gast.copy_location(gast.If(test=test, body=[unclamped], orelse=[nest]), nest)


def version(stmts: List[gast.stmt]) -> bool:
    """Version each outermost loop of ``stmts`` (any depth) that reads at clamped indices (in place); whether
    any was."""
    changed = False
    for k, stmt in enumerate(stmts):
        new = _versioned(stmt) if isinstance(stmt, gast.For) else None
        if new is not None:
            stmts[k] = new
            changed = True
            continue
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                changed |= version(inner)
    return changed
