"""hoist_invariants: move loop-invariant computations out of loops.

Expects A-normal form. A statement ``t = e`` at the top level of a loop body
moves in front of the loop when ``t`` is assigned nowhere else, ``e`` is pure,
and nothing ``e`` reads is assigned or updated in place inside the loop, nor
shares memory with an array updated there (``v = x[:-1]`` changes with ``x[1:] = ...``).
Reverse mode profits most: a hoisted value is computed and kept once instead of
once per iteration. Reports whether it changed anything.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> src = "def f(p, n):\\n    s = 0.0\\n    for i in range(n):\\n        c = p[0]\\n        s = s + c * i\\n    return s"
    >>> print(unparse(transform(gast.parse(src).body[0])[0]))
    def f(p, n):
        s = 0.0
        c = p[0]
        for i in range(n):
            s = s + c * i
        return s
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.aliasing import linked, sharing
from numbax.ast_passes.analyses.nodes import loads
from numbax.ast_passes.analyses.usage import count_names
from numbax.ast_passes.optimizations.purity import changes_arguments, is_check, is_pure
from numbax.ast_passes.tree_copy import names, walk


def stored_in(stmts: List[gast.stmt]) -> Set[str]:
    """Names assigned, or updated through a subscript, anywhere in ``stmts``."""
    return _changed_names(stmts, True)


def updated_in_place(stmts: List[gast.stmt]) -> Set[str]:
    """Names whose arrays ``stmts`` change: written through a subscript, updated by an augmented assignment
    (``v += ct`` writes into ``v``'s array, and so into every array it is a view of), or given to a call with
    effects."""
    return _changed_names(stmts, False)


def _changed_names(stmts: List[gast.stmt], assigned: bool) -> Set[str]:
    """``updated_in_place(stmts)``, and with ``assigned`` the names ``stmts`` assign too, in one walk."""
    out: Set[str] = set()
    name, subscript, call, store, augmented = gast.Name, gast.Subscript, gast.Call, gast.Store, gast.AugAssign
    for stmt in stmts:
        for node in walk(stmt):
            kind = type(node)
            if kind is augmented and type(node.target) is name:
                out.add(node.target.id)
            elif kind is name:
                if assigned and type(node.ctx) is store:
                    out.add(node.id)
            elif kind is subscript:
                if type(node.ctx) is store:
                    base = node.value
                    while isinstance(base, (gast.Subscript, gast.Attribute)):
                        base = base.value
                    if isinstance(base, gast.Name):
                        out.add(base.id)
            elif kind is call and not is_pure(node) and changes_arguments(node):
                out.update(n.id for n in names(node))
    return out


def _hoist_loop(loop, stores, links, before: Optional[List[gast.stmt]], written: Set[str]) \
        -> Tuple[List[gast.stmt], bool]:
    """The invariant statements of ``loop``, taken out of its body (never one making an array the body
    writes into: each iteration needs its own). With ``before`` (the statements ahead of a batch loop, where
    its first example ran), invariant checks leave too, and one that repeats a statement there is dropped (a
    check) or reads the value computed there (``t = s``); ``written``: the names whose arrays something
    writes into."""
    filled = linked(updated_in_place(loop.body), links)
    changed_names = stored_in(loop.body) | filled
    if isinstance(loop, gast.For):
        changed_names |= {n.id for n in gast.walk(loop.target) if isinstance(n, gast.Name)}
    earlier = {} if before is None else _repeatable(before, stores, written)
    hoisted: List[gast.stmt] = []
    kept: List[gast.stmt] = []
    for stmt in loop.body:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and stores[stmt.targets[0].id] == 1 and stmt.targets[0].id not in filled \
                and is_pure(stmt.value) and not isinstance(stmt.value, gast.Name):
            if not loads(stmt.value) & changed_names:
                same = earlier.get(gast.dump(stmt.value))
                if same is not None and stmt.targets[0].id not in written:
                    stmt.value = gast.Name(id=same, ctx=gast.Load(), annotation=None, type_comment=None)
                hoisted.append(stmt)
                continue
        elif before is not None and isinstance(stmt, gast.Expr) and is_check(stmt.value) \
                and not loads(stmt.value) & changed_names:
            if gast.dump(stmt.value) not in earlier:
                hoisted.append(stmt)
            continue
        kept.append(stmt)
    changed = len(kept) < len(loop.body)
    if changed:
        loop.body = kept or [gast.Pass()]
    return hoisted, changed


def _repeatable(before: List[gast.stmt], stores, written: Set[str]) -> Dict[str, Optional[str]]:
    """The statements of ``before`` that give the same value computed again after them: pure expressions
    and checks of names assigned at most once (and not later in ``before``) whose arrays nothing writes
    into, keyed by their text, each to the name holding its value (None for a check)."""
    found: Dict[str, Tuple[Optional[str], Set[str]]] = {}
    for stmt in before:
        target, value = None, None
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
            target = stmt.targets[0].id
            if stores[target] == 1 and target not in written and is_pure(stmt.value):
                value = stmt.value
        elif isinstance(stmt, gast.Expr) and is_check(stmt.value):
            value = stmt.value
        if found:
            stored = stored_in([stmt])
            found = {key: entry for key, entry in found.items() if not entry[1] & stored}
        if value is not None and all(stores[n] <= 1 and n not in written for n in loads(value)):
            found.setdefault(gast.dump(value), (target, loads(value)))
    return {key: target for key, (target, _) in found.items()}


def _block(stmts: List[gast.stmt], stores, links, only_batch_loops: bool, written: Set[str]) \
        -> Tuple[List[gast.stmt], bool]:
    out: List[gast.stmt] = []
    changed = False
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                new, did = _block(inner, stores, links, only_batch_loops, written)
                setattr(stmt, field, new)
                changed |= did
        batch = anno.getanno(stmt, anno.Key.BATCH_LOOP, False)
        if isinstance(stmt, (gast.For, gast.While)) and (not only_batch_loops or batch):
            hoisted, did = _hoist_loop(stmt, stores, links, out if batch else None, written)
            out.extend(hoisted)
            changed |= did
        out.append(stmt)
    return out, changed


def transform(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """Hoist loop invariants in ``fdef``; ``(fdef, changed)``."""
    stores, _ = count_names(fdef)
    links = sharing(fdef)
    fdef.body, changed = _block(fdef.body, stores, links, False, linked(updated_in_place(fdef.body), links))
    return fdef, changed


def transform_batch_loops(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """Hoist the invariants of the loops ``vmap`` wrote (``anno.Key.BATCH_LOOP``) in any code: the first
    example, before such a loop, already computed each of them from the same values, so moving them in
    front of it raises nothing new where it runs no iteration; ``(fdef, changed)``."""
    stores, _ = count_names(fdef)
    links = sharing(fdef)
    fdef.body, changed = _block(fdef.body, stores, links, True, linked(updated_in_place(fdef.body), links))
    return fdef, changed
