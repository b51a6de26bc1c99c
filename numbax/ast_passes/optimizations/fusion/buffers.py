"""buffers: an array made anew in each iteration of a loop is made once, before it, and reused.

The backward sweep of a loop makes arrays in every iteration: a zero cotangent for a row
(``dz = rt.zeros_like(t2)``), the arrays a fused loop writes out (``dz_1 = np.empty(n)``).
Each allocation costs Numba about 20 ns, half the adjoint of a softmax row of 100. When no
iteration's array outlives the iteration, one buffer made before the loop serves them all::

    dz_1 = np.empty(logits.shape[1])
    dz_zeros = np.empty(logits.shape[1])
    for step in range(trips):
        ...
        for k in range(logits.shape[1]):
            dz_zeros[k] = 0.0
        dz = dz_zeros

A candidate is ``a = np.empty(s)``, ``a = np.zeros(s)`` or ``a = rt.zeros_like(x)`` of float64 at
the top level of a loop body, with a shape known before the loop (``s`` reads nothing the loop
assigns; ``x``'s dims are dims of unchanged parameters). It is made once when every name that may
hold the array (``a``, and the names assigned from such a name) is

- used only to read one element (as many indices as dims and no slice, so never a view), as an
  operand of arithmetic (whose result is a new array), to write through a subscript or in place,
  to read its shape, to be copied by ``rt.save_row``, or to be assigned to another name;
- assigned at the top level of the body before anything in the body reads it, so no iteration
  reads an array of the one before;
- not read outside the loop.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import gast

from numbax.ast_passes.analyses.nodes import assign, name
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.shapes import dim_length
from numbax.ast_passes.analyses.usage import count_in
from numbax.ast_passes.optimizations.fusion.loops import allocation, loop_nest
from numbax.ast_passes.optimizations.hoist_invariants import stored_in

_MAKERS = {"np.empty": False, "np.zeros": True, "rt.zeros_like": True}  # -> whether it zeroes
_SHAPE_ATTRIBUTES = frozenset({"shape", "size", "ndim", "dtype"})


def _candidate(stmt: gast.stmt, loop: gast.stmt, facts) -> Optional[Tuple[str, List[gast.expr], bool]]:
    """``(name, extents, zeroed)`` for ``name = maker(...)`` whose shape is known before ``loop``."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Call)):
        return None
    app = application(stmt.value)
    if app is None or app.name not in _MAKERS or app.keywords or len(app.args) != 1:
        return None
    if app.name == "rt.zeros_like":
        aval, shape = facts.aval(app.args[0]), facts.shape(app.args[0])
        if aval is None or aval[0] != "f" or not shape:
            return None
        extents = [dim_length(dim, facts.unchanged_params) for dim in shape]
        if any(e is None for e in extents):
            return None
    else:
        size = app.args[0]
        if {n.id for n in gast.walk(size) if isinstance(n, gast.Name)} & stored_in([loop]):  # target too
            return None
        extents = list(size.elts) if isinstance(size, gast.Tuple) else [size]
        if any(facts.aval(e) != ("i", 0) for e in extents):  # a shape held in a name: its ndim is unknown
            return None
    return stmt.targets[0].id, extents, _MAKERS[app.name]


def _parents(root: gast.AST) -> Dict[int, gast.AST]:
    out = {}
    for node in gast.walk(root):
        for child in gast.iter_child_nodes(node):
            out[id(child)] = node
    return out


def _safe_load(node: gast.Name, parent: gast.AST, ndim: int) -> Optional[Set[str]]:
    """The names a read of a holder passes the array on to (empty for a use that keeps it), or None where
    the read may let the array outlive its iteration (a view, a call, a container, a return)."""
    if isinstance(parent, gast.Subscript) and parent.value is node:
        if not isinstance(parent.ctx, gast.Load):
            return set()
        parts = parent.slice.elts if isinstance(parent.slice, gast.Tuple) else [parent.slice]
        plain = all(not isinstance(p, gast.Slice) and not (isinstance(p, gast.Constant) and p.value in (None, ...))
                    for p in parts)
        return set() if plain and len(parts) == ndim else None
    if isinstance(parent, gast.Attribute) and parent.attr in _SHAPE_ATTRIBUTES:
        return set()
    if isinstance(parent, (gast.BinOp, gast.UnaryOp, gast.Compare)):  # arithmetic makes a new array
        return set()
    if isinstance(parent, gast.Assign) and parent.value is node and len(parent.targets) == 1 and \
            isinstance(parent.targets[0], gast.Name):
        return {parent.targets[0].id}
    if isinstance(parent, gast.Call) and len(parent.args) == 3 and parent.args[2] is node:
        app = application(parent)
        return set() if app is not None and app.name == "rt.save_row" else None
    return None


def _holders(fdef: gast.FunctionDef, first: str, ndim: int) -> Optional[Set[str]]:
    """``first`` and every name assigned from a holder, or None if a holder is used unsafely."""
    parents = _parents(fdef)
    holders, todo = {first}, [first]
    while todo:
        current = todo.pop()
        for node in gast.walk(fdef):
            if isinstance(node, gast.Name) and node.id == current and isinstance(node.ctx, gast.Load):
                passed = _safe_load(node, parents[id(node)], ndim)
                if passed is None:
                    return None
                todo += sorted(passed - holders)
                holders |= passed
    return holders


def _assigned_first(body: List[gast.stmt], holder: str) -> bool:
    """Whether ``holder``'s first appearance in ``body`` is a top-level assignment that does not read it."""
    for stmt in body:
        if any(isinstance(n, gast.Name) and n.id == holder for n in gast.walk(stmt)):
            return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == holder and \
                not any(isinstance(n, gast.Name) and n.id == holder for n in gast.walk(stmt.value))
    return True


def _reusable(fdef: gast.FunctionDef, loop: gast.stmt, target: str, ndim: int) -> bool:
    holders = _holders(fdef, target, ndim)
    if holders is None or not all(_assigned_first(loop.body, h) for h in holders):
        return False
    inside = count_in(loop.body)[1]
    everywhere = count_in([fdef])[1]
    return all(everywhere[h] == inside[h] for h in holders)


def _fill_zeros(buffer: str, extents: List[gast.expr], namer) -> gast.stmt:
    """A loop nest writing 0.0 into every element (``a.fill(0.0)`` is a slice assignment in Numba: slower
    by half a row of work, and one more function to compile)."""
    index = [namer.new("k") for _ in extents]
    slot = name(index[0]) if len(index) == 1 else gast.Tuple(elts=[name(k) for k in index], ctx=gast.Load())
    zero = assign(gast.Subscript(value=name(buffer), slice=slot, ctx=gast.Store()), gast.Constant(value=0.0, kind=None))
    return loop_nest(index, extents, [zero])


def _loop(fdef: gast.FunctionDef, loop: gast.stmt, facts) -> List[gast.stmt]:
    """The statements to put before ``loop``; rewrites its body."""
    before: List[gast.stmt] = []
    body: List[gast.stmt] = []
    for stmt in loop.body:
        found = _candidate(stmt, loop, facts)
        if found is None or not _reusable(fdef, loop, found[0], len(found[1])):
            body.append(stmt)
            continue
        target, extents, zeroed = found
        alone = count_in(loop.body)[0][target] == 1
        if alone and not zeroed:
            before.append(gast.copy_location(assign(target, allocation("empty", extents)), stmt))
            continue
        buffer = target if alone else facts.namer.new(f"{target}_zeros" if zeroed else f"{target}_buffer")
        before.append(gast.copy_location(assign(buffer, allocation("empty", extents)), stmt))
        if zeroed:
            body.append(gast.copy_location(_fill_zeros(buffer, extents, facts.namer), stmt))
        if not alone:
            body.append(gast.copy_location(assign(target, name(buffer)), stmt))
    loop.body = body
    return before


def _block(fdef: gast.FunctionDef, stmts: List[gast.stmt], facts, changed: List[bool]) -> List[gast.stmt]:
    out: List[gast.stmt] = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                setattr(stmt, field, _block(fdef, inner, facts, changed))
        if isinstance(stmt, (gast.For, gast.While)):
            before = _loop(fdef, stmt, facts)
            changed[0] |= bool(before)
            out += before
        out.append(stmt)
    return out


def reuse(fdef: gast.FunctionDef, facts) -> bool:
    """Make the arrays that ``fdef``'s loops make per iteration once each, where that is safe; whether any."""
    changed = [False]
    fdef.body = _block(fdef, fdef.body, facts, changed)
    return changed[0]
