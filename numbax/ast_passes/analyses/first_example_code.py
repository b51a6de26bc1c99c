"""Which statements of ``vmap``'s first example can go when its loop computes that example again
(``optimizations.first_example``). Reads the tree, never changes it.

The first example's code runs before the loop to size the outputs. Once the loop runs from example 0, a
statement of that code may go only where nothing it does is lost:

- it computes values only: assignments to names (a number's ``s += v`` too, never an array's, which writes
  into memory another name may hold), writes into arrays allocated afresh in that code, loops and branches
  of such; its run-time checks (and a ``debug.print``) are made again by the loop for the same example
  (``_again``: as many of the callee at the user's position in the loop and in front of it);
- no statement that stays reads what it computed (or writes into an array it computed);
- no statement that stays follows a check that goes, but other checks: a check guards the code after it
  (``x[i]`` after ``rt.check_span``), so the code it guards goes with it, or it stays.

An effect the loop does again that must stay (a ``debug.print`` before a check that stays), or a write that
stays into memory made outside that code (``row /= ...`` of a row of an argument), would be done twice for the
first example: then nothing goes (``None``).
"""
from __future__ import annotations

from collections import Counter
from typing import Dict, List, Optional, Set, Tuple

import gast

from numbax.ast_passes.analyses.aliasing import sources
from numbax.ast_passes.analyses.nodes import base, loads
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.optimizations.dead_arrays import ALLOCATIONS
from numbax.ast_passes.optimizations.hoist_invariants import updated_in_place
from numbax.ast_passes.optimizations.purity import is_check, is_pure
from numbax.ast_passes.tree_copy import copy_tree
from numbax.primitives.kinds import Aval


def _raising(stmt: gast.AST) -> bool:
    """Whether ``stmt`` is a check written out: ``if <test without effects>: raise ...``."""
    return isinstance(stmt, gast.If) and not stmt.orelse and is_pure(stmt.test) and \
        all(isinstance(s, gast.Raise) and s.exc is not None for s in stmt.body)


def _effect(stmt: gast.AST) -> Optional[gast.AST]:
    """The call of a statement that does something besides its value (a run-time check, ``debug.print``; the
    exception a check written out raises)."""
    if _raising(stmt):
        return stmt.body[0].exc
    value = stmt.value if isinstance(stmt, (gast.Expr, gast.Assign, gast.AugAssign)) else None
    if value is None or is_pure(value):
        return None
    calls = [n for n in gast.walk(value) if isinstance(n, gast.Call) and not is_pure(n)]
    return calls[-1] if calls else value  # the innermost


def _key(call: gast.AST) -> Tuple[str, tuple]:
    """What an effect does apart from the values it reads: its callee and its constant arguments (a check's
    position in the user's code, a format string)."""
    func = call.func if isinstance(call, gast.Call) else call
    args = call.args if isinstance(call, gast.Call) else []
    return gast.dump(func), tuple(a.value for a in args if isinstance(a, gast.Constant))


def _effects(stmts: List[gast.stmt]) -> List[gast.AST]:
    return [node for node in gast.walk(gast.Module(body=stmts, type_ignores=[])) if _effect(node) is not None]


def _again(first: List[gast.stmt], loop_side: List[gast.stmt]) -> Tuple[Set[int], Set[int]]:
    """``(going, twice)``: the ids of the statements with effects among ``first`` that the loop does again for
    its first example, and of those among them that are no check (done twice if they stay). A key (``_key``)
    that ``first`` makes more often than ``loop_side`` (the loop, and the invariants hoisted in front of it)
    goes nowhere: some are not the first example's, or hoisting dropped the loop's as a repeat of this one."""
    effects = _effects(first)
    made = Counter(_key(_effect(node)) for node in effects)
    again = Counter(_key(_effect(node)) for node in _effects(loop_side))
    twice = {id(node) for node in effects if again[_key(_effect(node))] and not is_check(_effect(node))
             and not _raising(node)}
    return {id(node) for node in effects if made[_key(_effect(node))] <= again[_key(_effect(node))]}, twice


def _fresh(stmts: List[gast.stmt], stores) -> Set[str]:
    """The names assigned only in ``stmts``, each time an array allocated there (``np.empty(n)``) or another
    such name: no name but those holds their memory (which ``dropped`` follows, name by name)."""
    assigned = [node for node in gast.walk(gast.Module(body=stmts, type_ignores=[]))
                if isinstance(node, (gast.Assign, gast.AugAssign, gast.For))]
    here = Counter(n.id for node in assigned for t in _targets(node) for n in gast.walk(t)
                   if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    found = {name for name, count in here.items() if count == stores[name]}
    changed = True
    while changed:
        changed = False
        for node in assigned:
            names = [t.id for t in _targets(node) if isinstance(t, gast.Name)]
            if not any(n in found for n in names):
                continue
            app = application(node.value) if isinstance(node, gast.Assign) and isinstance(node.value, gast.Call) \
                else None
            made = (app is not None and app.name in ALLOCATIONS) or \
                (isinstance(node, gast.Assign) and isinstance(node.value, gast.Name) and node.value.id in found)
            if not (isinstance(node, gast.Assign) and len(node.targets) == 1 and made):
                found -= set(names)
                changed = True
    return found


def _targets(node: gast.AST) -> List[gast.expr]:
    return node.targets if isinstance(node, gast.Assign) else [node.target]


class _Quiet:
    """Whether a statement only computes values (the module's first rule), given the effects that may go."""

    def __init__(self, going: Set[int], fresh: Set[str], avals: Dict[str, Aval]):
        self.going, self.fresh, self.avals = going, fresh, avals

    def __call__(self, stmt: gast.stmt) -> bool:
        if any(id(node) not in self.going for node in _effects([stmt])):
            return False
        if isinstance(stmt, (gast.Pass, gast.Expr)) or _raising(stmt):
            return True  # (an ``Expr`` with an effect is one that goes)
        if isinstance(stmt, gast.Assign):
            return all(self._target(t) for t in stmt.targets)
        if isinstance(stmt, gast.AugAssign):
            if isinstance(stmt.target, gast.Name):  # a number's is a new value, an array's is written in place
                return (self.avals.get(stmt.target.id) or ("", None))[1] == 0 or stmt.target.id in self.fresh
            return self._target(stmt.target)
        if isinstance(stmt, gast.For):
            return not stmt.orelse and is_pure(stmt.iter) and self._target(stmt.target) and \
                all(self(s) for s in stmt.body)
        if isinstance(stmt, gast.While):  # (the loop makes it again for the first example, ending or not)
            return not stmt.orelse and is_pure(stmt.test) and all(self(s) for s in stmt.body)
        if isinstance(stmt, gast.If):
            return is_pure(stmt.test) and all(self(s) for s in stmt.body + stmt.orelse)
        return False

    def _target(self, target: gast.expr) -> bool:
        if isinstance(target, gast.Name):
            return True
        if isinstance(target, (gast.Tuple, gast.List)):
            return all(self._target(t) for t in target.elts)
        return isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and \
            target.value.id in self.fresh and is_pure(target.slice)


def _defines(stmt: gast.stmt) -> Set[str]:
    """The names ``stmt`` assigns and the arrays it writes into."""
    nodes = list(gast.walk(stmt))
    return {n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)} | \
        {base(n) for n in nodes if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)} | \
        {n.target.id for n in nodes if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}


def _check(stmt: gast.stmt) -> bool:
    """Whether ``stmt`` is a run-time check and nothing else (it computes nothing that a check before it
    guards)."""
    return _raising(stmt) or (isinstance(stmt, gast.Expr) and is_check(stmt.value))


def _reads(stmt: gast.stmt) -> Set[str]:
    """The names ``stmt`` reads, the targets of ``x += v`` too."""
    return loads(stmt) | {n.target.id for n in gast.walk(stmt)
                          if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}


def _assigned_values(first: List[gast.stmt]) -> Dict[str, List[gast.expr]]:
    """Each name that ``first`` assigns by ``name = value``, with those values."""
    made: Dict[str, List[gast.expr]] = {}
    for node in gast.walk(gast.Module(body=first, type_ignores=[])):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name):
            made.setdefault(node.targets[0].id, []).append(node.value)
    return made


def _writes_outside(stmt: gast.stmt, made: Dict[str, List[gast.expr]], avals: Dict[str, Aval]) -> bool:
    """Whether ``stmt`` may write into memory made outside the first example's code, which assigns ``made``
    (``_assigned_values``): ``row /= ...`` where ``row = x[0]`` is a row of an argument. Staying, it would write
    there twice, as the loop writes it again for its first example."""
    numbers = {node.target.id for node in gast.walk(stmt) if isinstance(node, gast.AugAssign)
               and isinstance(node.target, gast.Name) and (avals.get(node.target.id) or ("", None))[1] == 0}
    # subscript stores, ``v += e`` of arrays, and calls that change what they are given (``row.fill(0.5)``); a
    # check's ``raise ValueError(...)`` writes nothing
    quiet = copy_tree(stmt)
    for node in gast.walk(quiet):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                setattr(node, field, [gast.Pass() if isinstance(s, gast.Raise) else s for s in block])
    return any(not _made_inside(written, made, set()) for written in updated_in_place([quiet]) - numbers)


def _made_inside(name: str, made: Dict[str, List[gast.expr]], seen: Set[str]) -> bool:
    """Whether every value assigned to ``name`` is memory the first example's code made: a new array, or a view
    of one (``dy_view = dy[:3]`` of ``dy = rt.zeros_like(y)``); not a parameter's, nor any name's made before."""
    if name in seen:
        return True
    seen.add(name)
    return name in made and all(_made_inside(other, made, seen) for value in made[name] for other in sources(value))


def dropped(first: List[gast.stmt], loop_side: List[gast.stmt], read_elsewhere: Set[str], stores,
            avals: Dict[str, Aval]) -> Optional[List[gast.stmt]]:
    """The statements of ``first`` (the first example's code) that go once the loop computes that example,
    ``loop_side`` being the loop and what was hoisted in front of it, ``read_elsewhere`` the names read
    outside ``first``, ``stores`` the function's assignment counts and ``avals`` its abstract values; None
    where an effect the loop does again would stay, or a write into memory that outlives that code."""
    going, twice = _again(first, loop_side)
    quiet = _Quiet(going, _fresh(first, stores), avals)
    kept = [not quiet(stmt) for stmt in first]
    needed = set(read_elsewhere)
    changed = True
    while changed:
        changed = False
        for k in reversed(range(len(first))):
            guards = _effects([first[k]]) and any(keep and not _check(stmt) for stmt, keep in
                                                  zip(first[k + 1:], kept[k + 1:]))
            if not kept[k] and (guards or _defines(first[k]) & needed):
                kept[k] = changed = True
            if kept[k] and not _reads(first[k]) <= needed:
                needed |= _reads(first[k])
                changed = True
    stay = [stmt for stmt, keep in zip(first, kept) if keep]
    if any(id(node) in twice for node in _effects(stay)):
        return None
    made = _assigned_values(first)
    if any(_writes_outside(stmt, made, avals) for stmt in stay):
        return None
    return [stmt for stmt, keep in zip(first, kept) if not keep]
