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

from typing import List, Set, Tuple

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.aliasing import linked, sharing
from numbax.ast_passes.analyses.usage import count_names
from numbax.ast_passes.optimizations.purity import changes_arguments, is_pure


def stored_in(stmts: List[gast.stmt]) -> Set[str]:
    """Names assigned, or updated through a subscript, anywhere in ``stmts``."""
    out = updated_in_place(stmts)
    for node in gast.walk(gast.Module(body=stmts, type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            out.add(node.id)
    return out


def updated_in_place(stmts: List[gast.stmt]) -> Set[str]:
    """Names whose arrays ``stmts`` change: written through a subscript, or given to a call with effects."""
    out: Set[str] = set()
    for node in gast.walk(gast.Module(body=stmts, type_ignores=[])):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store):
            base = node.value
            while isinstance(base, (gast.Subscript, gast.Attribute)):
                base = base.value
            if isinstance(base, gast.Name):
                out.add(base.id)
        elif isinstance(node, gast.Call) and not is_pure(node) and changes_arguments(node):
            out |= {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    return out


def _hoist_loop(loop, stores, links) -> Tuple[List[gast.stmt], bool]:
    changed_names = stored_in(loop.body) | linked(updated_in_place(loop.body), links)
    if isinstance(loop, gast.For):
        changed_names |= {n.id for n in gast.walk(loop.target) if isinstance(n, gast.Name)}
    hoisted: List[gast.stmt] = []
    kept: List[gast.stmt] = []
    for stmt in loop.body:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and stores[stmt.targets[0].id] == 1 and is_pure(stmt.value) and not isinstance(stmt.value, gast.Name):
            reads = {n.id for n in gast.walk(stmt.value) if isinstance(n, gast.Name)}
            if not reads & changed_names:
                hoisted.append(stmt)
                continue
        kept.append(stmt)
    if hoisted:
        loop.body = kept or [gast.Pass()]
    return hoisted, bool(hoisted)


def _block(stmts: List[gast.stmt], stores, links, only_batch_loops: bool) -> Tuple[List[gast.stmt], bool]:
    out: List[gast.stmt] = []
    changed = False
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                new, did = _block(inner, stores, links, only_batch_loops)
                setattr(stmt, field, new)
                changed |= did
        if isinstance(stmt, (gast.For, gast.While)) and \
                (not only_batch_loops or anno.getanno(stmt, anno.Key.BATCH_LOOP, False)):
            hoisted, did = _hoist_loop(stmt, stores, links)
            out.extend(hoisted)
            changed |= did
        out.append(stmt)
    return out, changed


def transform(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """Hoist loop invariants in ``fdef``; ``(fdef, changed)``."""
    stores, _ = count_names(fdef)
    fdef.body, changed = _block(fdef.body, stores, sharing(fdef), False)
    return fdef, changed


def transform_batch_loops(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """Hoist the invariants of the loops ``vmap`` wrote (``anno.Key.BATCH_LOOP``) in any code: the first
    example, before such a loop, already computed each of them from the same values, so moving them in
    front of it raises nothing new where it runs no iteration; ``(fdef, changed)``."""
    stores, _ = count_names(fdef)
    fdef.body, changed = _block(fdef.body, stores, sharing(fdef), True)
    return fdef, changed
