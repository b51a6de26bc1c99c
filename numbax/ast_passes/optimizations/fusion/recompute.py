"""recompute: an element of an array a fused loop computed, computed again instead of read back.

A loop that computes ``z`` elementwise would write it out for a later
``z[labels[i]]``, or for the next loop's ``z[j]``. When the element is cheap
to compute (arithmetic on what the loop read, no calls) and nothing it reads
has changed since, the later read computes it again instead; an array written
out that nothing reads any more is then not made at all (``drop_unread``).
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Set, Tuple

import gast

from numbax.ast_passes.analyses.nodes import rt_call
from numbax.ast_passes.analyses.usage import count_in
from numbax.ast_passes.optimizations.fusion.effects import loads, statement_effects
from numbax.ast_passes.tree_copy import copy_tree

_MAX_OPERATIONS = 6  # more than this, and reading the written-out array back is the cheaper


@dataclasses.dataclass
class Element:
    """How to compute one element of an array again: ``expression`` at the loop's ``index`` names."""

    expression: gast.expr
    index: List[str]
    reads: Set[str]
    shape: tuple


def element_of(group, array: str) -> Optional[Element]:
    """The element of ``array`` as an expression of what the loop read before it ran, or None."""
    assigned = {stmt.targets[0].id: stmt.value for stmt in group.body
                if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)}
    updated = {stmt.target.id for stmt in group.body if isinstance(stmt, gast.AugAssign)
               and isinstance(stmt.target, gast.Name)}

    class Expand(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in assigned and node.id not in updated:
                return Expand().visit(copy_tree(assigned[node.id]))
            return node

    expression = Expand().visit(copy_tree(group.defined[array]))
    nodes = list(gast.walk(expression))
    operations = sum(isinstance(n, (gast.BinOp, gast.UnaryOp)) for n in nodes)
    if any(isinstance(n, (gast.Call, gast.IfExp)) for n in nodes) or operations > _MAX_OPERATIONS:
        return None
    reads = loads(expression) - set(group.index)
    changed = set(assigned) | updated | group.accumulators | set(group.defined) | group.written_before
    if reads & changed:
        return None
    return Element(expression, list(group.index), reads, group.shape)


def at(element: Element, index: List[gast.expr]) -> gast.expr:
    """``element``'s expression at another index (names or expressions, one per axis)."""
    by_name = dict(zip(element.index, index))

    class Substitute(gast.NodeTransformer):
        def visit_Name(self, node):
            return copy_tree(by_name[node.id]) if node.id in by_name else node

    return Substitute().visit(copy_tree(element.expression))


class Recomputable:
    """The arrays fused loops of one block computed, while what their elements read stays unchanged."""

    def __init__(self, aliases):
        self.aliases = aliases
        self.elements: Dict[str, Element] = {}

    def record(self, group) -> None:
        """Learn the elements of the arrays ``group``'s loop computed."""
        for array in group.defined:
            element = element_of(group, array)
            if element is not None:
                self.elements[array] = element

    def after(self, stmts: List[gast.stmt]) -> None:
        """Forget the elements that ``stmts`` (run in this order) may change, or whose array they assign."""
        for stmt in stmts:
            effects = statement_effects(stmt)
            if effects is None:
                self.elements.clear()
                return
            written = self.aliases.closure(effects.writes)
            for array in [a for a, e in self.elements.items() if written & (e.reads | {a})]:
                del self.elements[array]


def scalar_reads(group, extents: List[gast.expr], stmt: gast.stmt, earlier: List[gast.stmt]) -> None:
    """In ``stmt``, run after the loop, read ``v[k]`` of an array the loop computed by computing it again, and
    check an index into it against its extent (``rt.check_index(v, k, axis, where)`` becomes
    ``rt.check_extent(k, n, axis, where)``, ``n`` of the loop's ``extents``): neither keeps ``v`` made.

    ``earlier``: the statements run between the loop and ``stmt``; what they write must not be read.
    """
    facts = group.facts
    written = set()
    for before in earlier:
        effects = statement_effects(before)
        written |= facts.aliases.closure(effects.writes) if effects is not None else {"*"}

    def computed(array: gast.expr) -> bool:
        return isinstance(array, gast.Name) and array.id in group.defined and "*" not in written and \
            array.id not in written

    class Rewrite(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            application = checked_index(node)
            if application is None or not computed(application[0]) or facts.aval(application[1]) != ("i", 0) \
                    or not -len(extents) <= application[2] < len(extents) \
                    or any(loads(e) & written for e in extents):
                return node
            axis = application[2] % len(extents)
            return gast.copy_location(rt_call("check_extent", application[1], copy_tree(extents[axis]),
                                              gast.Constant(value=axis, kind=None), application[3]), node)

        def visit_Subscript(self, node):
            self.generic_visit(node)
            if not (isinstance(node.value, gast.Name) and node.value.id in group.defined and
                    isinstance(node.ctx, gast.Load)):
                return node
            parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
            element = element_of(group, node.value.id)
            if element is None or "*" in written or element.reads & written or len(parts) != len(group.index) \
                    or any(facts.aval(p) != ("i", 0) or loads(p) & (set(group.defined) | written) for p in parts):
                return node
            return at(element, parts)

    Rewrite().visit(stmt)


def checked_index(node: gast.expr) -> Optional[Tuple[gast.expr, gast.expr, int, gast.expr]]:
    """``(x, k, axis, where)`` of ``rt.check_index(x, k, axis, where)`` with a constant ``axis``, else None."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == "check_index"
            and isinstance(node.func.value, gast.Name) and node.func.value.id == "rt" and len(node.args) == 4
            and not node.keywords and isinstance(node.args[2], gast.Constant) and type(node.args[2].value) is int):
        return None
    return node.args[0], node.args[1], node.args[2].value, node.args[3]


def drop_unread(fdef: gast.FunctionDef, written_out: List[Tuple[str, gast.stmt, gast.stmt]]) -> None:
    """Remove the written-out arrays (their allocation and their store) that nothing reads any more."""
    doomed = set()
    loads = count_in([fdef])[1]
    blocks = _blocks(fdef)
    for array, allocation, store in written_out:
        if loads[array] == 1 or _overwritten_unread(blocks.get(id(allocation)), allocation, store, array):
            doomed |= {id(allocation), id(store)}  # (1: the store's own ``array[j] = ...``)
    if doomed:
        remove_statements(fdef, doomed)


def _blocks(node) -> Dict[int, List[gast.stmt]]:
    """Each statement's ``id`` -> the block (list of statements) it stands in."""
    out: Dict[int, List[gast.stmt]] = {}
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if isinstance(stmts, list):
            for stmt in stmts:
                out[id(stmt)] = stmts
                out.update(_blocks(stmt))
    return out


def _overwritten_unread(block: Optional[List[gast.stmt]], allocation: gast.stmt, store: gast.stmt,
                        array: str) -> bool:
    """Whether ``array``, made by ``allocation`` and written by ``store`` in the loop after it, is assigned
    anew later in the same block before any statement reads it (another loop wrote the same name out, its
    elements computed again): then no read can see what ``store`` wrote, in this pass of the block or
    the next."""
    if block is None:
        return False
    after = block[[id(s) for s in block].index(id(allocation)) + 1:]
    for k, stmt in enumerate(after):
        reads = count_in([stmt])[1][array]
        if any(node is store for node in gast.walk(stmt)):
            if reads != 1:
                return False
            continue
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and stmt.targets[0].id == array and not reads:
            return any(any(node is store for node in gast.walk(s)) for s in after[:k])
        if reads:
            return False
    return False


def remove_statements(node, doomed: Set[int]) -> None:
    """Remove the statements whose ``id`` is in ``doomed`` from ``node``'s blocks, at any depth."""
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if isinstance(stmts, list):
            setattr(node, field, [s for s in stmts if id(s) not in doomed])
            for stmt in getattr(node, field):
                remove_statements(stmt, doomed)
