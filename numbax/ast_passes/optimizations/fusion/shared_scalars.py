"""shared_scalars: a pure call with a scalar result, computed again where its value is at hand, is read instead.

Reverse mode computes a primal value again for the backward sweep (``t7 = np.cos(E_1)``), and a rule
may ask for the same value (``cos``'s adjoint reads ``np.sin(x)``, ``sin``'s ``np.cos(x)``): Newton's
iteration for Kepler's equation called ``sin`` and ``cos`` twice per backward step. A call is
replaced by the name an earlier ``name = call`` of its block (or of an enclosing one) gave it, while
neither that name nor anything the call reads has been assigned since; inside a loop, only values
whose names the loop does not assign are at hand. Only scalar results (``facts.aval``), which no
later statement can change in place.
"""
from __future__ import annotations

from typing import Dict, List, Set, Tuple

import gast

from numbax.ast_passes.analyses.nodes import name
from numbax.ast_passes.optimizations.hoist_invariants import stored_in
from numbax.ast_passes.optimizations.purity import is_pure
from numbax.ast_passes.unparse import unparse

Available = Dict[str, Tuple[str, Set[str]]]  # the call as text -> (the name holding it, what it depends on)
_BLOCKS = ("body", "orelse")


def _scalar_call(node: gast.expr, facts) -> bool:
    aval = facts.aval(node) if isinstance(node, gast.Call) else None
    return aval is not None and aval[1] == 0 and is_pure(node)


class _Replace(gast.NodeTransformer):
    def __init__(self, available: Available, facts):
        self.available, self.facts, self.changed = available, facts, False

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        held = self.available.get(unparse(node)) if _scalar_call(node, self.facts) else None
        if held is None:
            return node
        self.changed = True
        return gast.copy_location(name(held[0]), node)


def _replace_in(node: gast.AST, available: Available, facts) -> bool:
    replace = _Replace(available, facts)
    for field, value in gast.iter_fields(node):
        if field in _BLOCKS or field == "targets" or field == "target":
            continue
        if isinstance(value, gast.expr):
            setattr(node, field, replace.visit(value))
    return replace.changed


def _block(stmts: List[gast.stmt], available: Available, facts) -> bool:
    changed = False
    for stmt in stmts:
        changed |= _replace_in(stmt, available, facts)
        stored = stored_in([stmt])  # a loop's target included
        for field in _BLOCKS:
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                kept = {k: v for k, v in available.items() if not (v[1] & stored)}
                changed |= _block(inner, kept, facts)
        for key in [k for k, v in available.items() if v[1] & stored]:
            del available[key]
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and _scalar_call(stmt.value, facts):
            holder = stmt.targets[0].id
            reads = {n.id for n in gast.walk(stmt.value) if isinstance(n, gast.Name)}
            if holder not in reads:
                available.setdefault(unparse(stmt.value), (holder, reads | {holder}))
    return changed


def share(fdef: gast.FunctionDef, facts) -> bool:
    """Read the scalar calls ``fdef`` computes twice from where it computed them first; whether any."""
    return _block(fdef.body, {}, facts)
