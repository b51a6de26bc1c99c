"""assigned: the names every path assigns before each ``if`` (definite assignment, as Python's compiler reasons).

A name that some path reaches an ``if`` without having assigned is unbound there on that path: code placed at
the ``if`` must not read it (reverse mode's zero cotangent shaped like it, at a join). Loops may run no
iteration, so what they assign is not definite after them; a branch that leaves (``return``, ``raise``,
``break``, ``continue``) does not reach the join, so the other branch alone decides.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set

import gast

_LEAVES = (gast.Return, gast.Raise, gast.Break, gast.Continue)


def stored_names(target: gast.expr) -> List[str]:
    """The names an assignment target (or a loop's) stores to."""
    return [n.id for n in gast.walk(target) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]


def _targets(stmt: gast.stmt) -> Set[str]:
    targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
    return {name for t in targets for name in stored_names(t)}


def definitely_assigned(fdef: gast.FunctionDef) -> Dict[int, Set[str]]:
    """``id(if statement)`` -> the names assigned on every path that reaches it (the parameters among them)."""
    found: Dict[int, Set[str]] = {}

    def block(stmts: List[gast.stmt], defined: Set[str]) -> Optional[Set[str]]:
        """The names assigned on every path through ``stmts``, or None where every path leaves."""
        for stmt in stmts:
            if isinstance(stmt, _LEAVES):
                return None
            if isinstance(stmt, gast.If):
                found[id(stmt)] = set(defined)
                body, orelse = block(stmt.body, set(defined)), block(stmt.orelse, set(defined))
                if body is None and orelse is None:
                    return None
                defined = orelse if body is None else body if orelse is None else body & orelse
            elif isinstance(stmt, (gast.For, gast.While)):  # what the body assigns is not definite after it
                targets = stored_names(stmt.target) if isinstance(stmt, gast.For) else []
                block(stmt.body, defined | set(targets))
            elif isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
                defined = defined | _targets(stmt)
        return defined

    block(fdef.body, {a.id for a in fdef.args.args})
    return found
