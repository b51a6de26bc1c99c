"""higher_order: whether reverse mode can differentiate a gradient it generated (a second derivative).

A ``numbax.grad`` called inside a function that is itself differentiated is
generated at the call (``nested``) and becomes part of that function, whose
reverse mode then reads the inner gradient's adjoint code. Generated for that
(``GradSpec.higher_order``), the code is the core subset again -- slices of
adjoints updated by subscript assignment, integer-array indices by
``rt.index_added``, rows saved by assignment -- with two exceptions that the
outer reverse mode cannot follow: arrays saved on list tapes in loops
(``tape.append(v)``, ``tape.pop()``) and helpers without a derivative rule of
their own (a rule for some argument values only, ``rt.norm_grad``'s ``ord``, is refused by the rule's own
``refuse`` where the outer transform reads it).
``check`` refuses them at the user's call, before any wrong derivative can
be made::

    def loss(w):                   # float32 arrays saved in a loop go on a list tape
        for _ in range(3):
            w = np.tanh(w) * w
        return np.sum(w)

    numbax.grad(lambda w: numbax.grad(loss)(w) @ v)(w)   # NumbaxDifferentiationError at the inner call
"""
from __future__ import annotations

from typing import Optional

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.avals import tape_of
from numbax.ast_passes.analyses.nodes import own_expressions
from numbax.ast_passes.analyses.primitives import application
from numbax.errors import NumbaxDifferentiationError
from numbax.origin import Origin
from numbax.primitives.registry import vjp_rule

_HINT = ("differentiate once and take finite differences of numbax.grad for this second derivative, or write "
         "the inner function without it ({})")


def _runtime_call(node: gast.expr) -> Optional[str]:
    """``name`` for a call ``rt.name(...)``, else None."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            isinstance(node.func.value, gast.Name) and node.func.value.id == "rt":
        return node.func.attr
    return None


def _problem(stmt: gast.stmt) -> Optional[tuple]:
    """(what the outer reverse mode cannot follow, the way around it) for one statement, or None."""
    calls = [n for part in own_expressions(stmt) for n in gast.walk(part) if isinstance(n, gast.Call)]
    for call in calls:
        if tape_of(call, "append") or tape_of(call, "pop"):
            return ("a loop whose gradient keeps arrays on a list tape (arrays other than float64 ones of one "
                    "length, saved in each iteration)", "use float64 arrays whose length stays the same in the "
                    "loop")
        helper = _runtime_call(call)
        app = application(call) if helper else None
        if app is not None and vjp_rule(app.key) is None:
            return (f"rt.{helper}, which has no derivative rule yet", "see numbax.coverage() for the functions "
                    "whose gradients can be differentiated")
    return None


def check(fdef: gast.FunctionDef, label: str, origin: Optional[Origin]) -> None:
    """Raise ``NumbaxDifferentiationError`` at ``origin`` (the inner call) if reverse mode cannot read ``fdef``."""
    for stmt in gast.walk(fdef):
        if not isinstance(stmt, gast.stmt):
            continue
        found = _problem(stmt)
        if found is None:
            continue
        what, instead = found
        line = anno.getanno(stmt, anno.Key.ORIGIN)
        where = f" (from {line.location()})" if line is not None else ""
        raise NumbaxDifferentiationError(
            f"a higher-order derivative through numbax.{label} here is not supported: its gradient uses "
            f"{what}{where}", origin, hint=_HINT.format(instead))
