"""dead_code: remove assignments whose names are never read and whose values have no effect.

Expects any function; guarantees no pure assignment to a never-read name, no
self-assignment ``x = x``, no ``pass`` beside other statements, and no empty block: an ``if`` on a pure
test or a ``for`` over a pure ``range`` (its variable read nowhere) left with nothing to do is removed, and so
is such a loop that only computes values nothing after it reads (``vmap``'s first example, a column of a
Jacobian whose loop the sweep makes again); any other emptied block holds ``pass``. Reports whether it changed
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

from typing import Callable, List, Set, Tuple

import gast

from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.usage import count_in, count_names
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


def _over_range(stmt: gast.stmt) -> bool:
    """``for j in range(...)`` with no ``else`` and ``range``'s arguments without effects."""
    iterated = stmt.iter if isinstance(stmt, gast.For) else None
    return isinstance(iterated, gast.Call) and isinstance(iterated.func, gast.Name) and iterated.func.id == "range" \
        and not iterated.keywords and all(is_pure(arg) for arg in iterated.args) and not stmt.orelse \
        and isinstance(stmt.target, gast.Name)


def _idle_loop(stmt: gast.stmt, loads) -> bool:
    """``for j in range(n): pass`` with ``j`` read nowhere: it does nothing (what is left of a loop that fusion
    wrote and nothing reads)."""
    return _over_range(stmt) and all(isinstance(s, gast.Pass) for s in stmt.body) and not loads[stmt.target.id]


def _quiet(stmt: gast.stmt, made: Set[str]) -> bool:
    """Whether ``stmt`` only computes values: assignments without effects to names, or into the arrays ``made``
    (allocated afresh in the loop being swept, and only there), and loops over ranges and branches of such.
    Never ``x += y``, which writes into ``x``'s array (a row of another array, it may be)."""
    if isinstance(stmt, gast.Pass):
        return True
    if isinstance(stmt, gast.Assign):
        return is_pure(stmt.value) and all(
            isinstance(n, (gast.Name, gast.Tuple, gast.Store)) or
            (isinstance(n, gast.Subscript) and _base(n) in made and is_pure(n))
            for t in stmt.targets for n in ([t] if isinstance(t, gast.Subscript) else walk(t)))
    if isinstance(stmt, gast.For):
        return _over_range(stmt) and all(_quiet(s, made) for s in stmt.body)
    if isinstance(stmt, gast.If):
        return is_pure(stmt.test) and all(_quiet(s, made) for s in stmt.body + stmt.orelse)
    return False


_FRESH = frozenset({"np.empty", "np.zeros", "np.ones", "np.full", "rt.zeros_like", "rt.stack_buffer"})


def _fresh(stmts: List[gast.stmt], stores) -> Set[str]:
    """The names assigned once in the function, in ``stmts``, an array allocated there (``np.empty(n)``): no
    other name holds its memory."""
    found = set()
    for node in gast.walk(gast.Module(body=stmts, type_ignores=[])):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) \
                and isinstance(node.value, gast.Call) and stores[node.targets[0].id] == 1:
            app = application(node.value)
            if app is not None and app.name in _FRESH:
                found.add(node.targets[0].id)
    return found


def _unread_loop(stmt: gast.stmt, stores, later) -> bool:
    """A loop over a range that only computes values (``_quiet``) none of which is read outside it (``later``:
    the reads after it, for a loop at the function's top, which runs once; else every read in the function)."""
    if not _over_range(stmt):
        return False
    made, inside = count_in(stmt.body)
    assigned = {n for n, c in made.items() if c} | {stmt.target.id}
    fresh = _fresh(stmt.body, stores)
    return all(not later(n, inside) for n in assigned) and all(_quiet(s, fresh) for s in stmt.body)


def _base(node: gast.expr):
    while isinstance(node, gast.Subscript):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _sweep(stmts: List[gast.stmt], loads, stores, top: bool = False) -> Tuple[List[gast.stmt], bool]:
    out, changed = [], False
    for k, stmt in enumerate(stmts):
        if _dead(stmt, loads) or (isinstance(stmt, gast.Pass) and len(stmts) > 1):
            changed = True
            continue
        for field in ("body", "orelse"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                new, sub = _sweep(block, loads, stores)
                new = new or ([gast.Pass()] if field == "body" else [])
                setattr(stmt, field, new)
                changed |= sub or len(new) != len(block)
        if top:
            after = count_in(stmts[k + 1:])[1]
            later = lambda n, inside: after[n] > 0  # noqa: E731  (the function's top runs once)
        else:
            later = lambda n, inside: loads[n] > inside[n]  # noqa: E731
        if _idle_branch(stmt) or _idle_loop(stmt, loads) or _unread_loop(stmt, stores, later):
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
    stores, loads = count_names(fdef)
    fdef.body, changed = _sweep(fdef.body, loads, stores, top=True)
    if not fdef.body:
        fdef.body = [gast.Pass()]
    return fdef, changed
