"""dead_code: remove assignments whose names are never read and whose values have no effect.

Expects any function; guarantees no pure assignment to a never-read name, no
self-assignment ``x = x``, no ``pass`` beside other statements, and no empty block: an ``if`` on a pure
test or a ``for`` over a pure ``range`` (its variable read nowhere) left with nothing to do is removed, any
other emptied block holds ``pass``. Reports whether it changed
anything.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> f = gast.parse("def f(x):\\n    y = x * 2\\n    z = np.sin(x)\\n    return z").body[0]
    >>> print(unparse(transform(f)[0]))
    def f(x):
        z = np.sin(x)
        return z
"""
from __future__ import annotations

from typing import Callable, List, Tuple

import gast

from numbax.ast_passes.analyses.usage import count_names
from numbax.ast_passes.optimizations.purity import is_pure
from numbax.ast_passes.tree_copy import names, walk


def _target_names(target: gast.expr):
    return [n.id for n in names(target)]


def _dead(stmt: gast.stmt, loads) -> bool:
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, gast.Name) and isinstance(stmt.value, gast.Name) and stmt.value.id == target.id:
            return True  # ``x = x``, left behind when renaming merges two names
        if isinstance(target, (gast.Name, gast.Tuple)) and all(
                isinstance(n, (gast.Name, gast.Tuple, gast.Store)) for n in walk(target)):
            return not any(loads[n] for n in _target_names(target)) and is_pure(stmt.value)
    if isinstance(stmt, gast.Expr):
        return is_pure(stmt.value)
    return False


def _idle_branch(stmt: gast.stmt) -> bool:
    """``if t: pass`` with no ``else`` and a test without effects: it does nothing."""
    return isinstance(stmt, gast.If) and not stmt.orelse and all(isinstance(s, gast.Pass) for s in stmt.body) \
        and is_pure(stmt.test)


def _idle_loop(stmt: gast.stmt, loads) -> bool:
    """``for j in range(n): pass`` with no ``else``, ``range``'s arguments without effects and ``j`` read
    nowhere: it does nothing (what is left of a loop that fusion wrote and nothing reads)."""
    iterated = stmt.iter if isinstance(stmt, gast.For) else None
    return isinstance(iterated, gast.Call) and isinstance(iterated.func, gast.Name) and iterated.func.id == "range" \
        and not iterated.keywords and all(is_pure(arg) for arg in iterated.args) and not stmt.orelse \
        and all(isinstance(s, gast.Pass) for s in stmt.body) and isinstance(stmt.target, gast.Name) \
        and not loads[stmt.target.id]


def _sweep(stmts: List[gast.stmt], loads) -> Tuple[List[gast.stmt], bool]:
    out, changed = [], False
    for stmt in stmts:
        if _dead(stmt, loads) or (isinstance(stmt, gast.Pass) and len(stmts) > 1):
            changed = True
            continue
        for field in ("body", "orelse"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                new, sub = _sweep(block, loads)
                new = new or ([gast.Pass()] if field == "body" else [])
                setattr(stmt, field, new)
                changed |= sub or len(new) != len(block)
        if _idle_branch(stmt) or _idle_loop(stmt, loads):
            changed = True
            continue
        out.append(stmt)
    return out, changed


def remove_where(stmts: List[gast.stmt], doomed: Callable[[gast.stmt], bool]) -> List[gast.stmt]:
    """``stmts`` without the statements, at any depth, that ``doomed`` holds; an emptied ``body`` is ``pass``."""
    out = []
    for stmt in stmts:
        if doomed(stmt):
            continue
        for field in ("body", "orelse"):
            block = getattr(stmt, field, None)
            if isinstance(block, list) and block:
                setattr(stmt, field, remove_where(block, doomed) or ([gast.Pass()] if field == "body" else []))
        out.append(stmt)
    return out


def transform(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """Remove dead assignments from ``fdef``; ``(fdef, changed)``."""
    _, loads = count_names(fdef)
    fdef.body, changed = _sweep(fdef.body, loads)
    if not fdef.body:
        fdef.body = [gast.Pass()]
    return fdef, changed
