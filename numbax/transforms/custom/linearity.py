"""Whether a ``custom_jvp`` rule's tangent output is built by linear operations of the tangents, as JAX checks.

JAX transposes a rule primitive by primitive and refuses one with no transpose rule (``np.clip`` of a
tangent: "Transpose rule ... for 'min' not implemented"; an ``if`` on a tangent: a ``TracerBoolConversion``
error). numbax transposes a rule by differentiating it in the tangents at zero tangents
(``transpose``), which is exact where the rule is linear in them and wrong elsewhere; so ``check`` reads
the rule in A-normal form (inlined, one operation per statement) and refuses, at the user's line, any
operation on a tangent-dependent value that is not linear in it, and control flow that depends on one::

    _t9 = np.clip(tangents, _t7, _t8)     # refused: clip is not linear
    _t5 = _t4 * y                         # fine: one factor depends on the tangents
"""
from __future__ import annotations

from typing import Iterable, List, Set

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.primitives import application
from numbax.errors import NumbaxDifferentiationError
from numbax.primitives.registry import method_key

# linear in each operand: any of them may depend on the tangents
_LINEAR = {np.sum, np.mean, np.reshape, np.transpose, np.ravel, np.concatenate, np.stack, np.hstack, np.vstack,
           np.negative, np.positive, np.add, np.subtract, np.squeeze, np.expand_dims, np.flip, np.broadcast_to,
           np.copy, np.asarray, np.real, np.imag, np.conj, np.conjugate, np.cumsum, np.diff, np.roll, np.moveaxis,
           np.swapaxes, np.diag, np.trace, np.tril, np.triu, np.float64, np.float32, np.atleast_1d,
           np.atleast_2d, np.zeros_like, np.empty_like} | \
    {method_key(m) for m in ("sum", "mean", "reshape", "transpose", "T", "ravel", "flatten", "copy", "squeeze",
                             "swapaxes", "conj", "real", "imag", "cumsum")}
# linear in each operand while the others do not depend on the tangents
_BILINEAR = {np.multiply, np.dot, np.matmul, np.tensordot, np.outer, np.inner, np.kron, np.cross, np.einsum,
             gast.Mult, gast.MatMult, method_key("dot")}
_ADDITIVE = {gast.Add, gast.Sub, gast.USub, gast.UAdd}


def _names(node: gast.AST) -> Set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _pairs(target: gast.expr, value: gast.expr) -> List[tuple]:
    """(name stored, the part of ``value`` stored there) for an assignment (``a, b = (x, y)`` pairwise)."""
    if isinstance(target, (gast.Tuple, gast.List)):
        if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
            return [p for t, v in zip(target.elts, value.elts) for p in _pairs(t, v)]
        return [p for t in target.elts for p in _pairs(t, value)]
    while isinstance(target, (gast.Subscript, gast.Attribute, gast.Starred)):
        target = target.value
    return [(target.id, value)] if isinstance(target, gast.Name) else []


def _assignments(body: Iterable[gast.stmt]) -> List[gast.stmt]:
    return [n for stmt in body for n in gast.walk(stmt) if isinstance(n, (gast.Assign, gast.AugAssign))]


def _linear(value: gast.expr, active: Set[str]) -> bool:
    """Whether ``value`` (one ANF operation) is linear in its operands that depend on the tangents."""
    if isinstance(value, (gast.Name, gast.Constant, gast.Tuple, gast.List)):
        return True
    if isinstance(value, gast.Subscript):
        return not _names(value.slice) & active
    app = application(value)
    if app is None or any(_names(k) & active for k in app.keywords.values()):
        return False
    hot = [bool(_names(a) & active) for a in app.args]
    if app.key in _ADDITIVE or app.key in _LINEAR:
        return True
    if app.key in _BILINEAR:
        return sum(hot) <= 1
    if app.key in (gast.Div, np.divide, np.true_divide):
        return not any(hot[1:])
    if app.key is np.where:
        return not hot[0]
    return False


def check(fdef: gast.FunctionDef, tangents: List[str], rule: str) -> None:
    """Refuse ``fdef`` (the rule paired with the output's cotangent, in ANF) where a value that depends on the
    parameters ``tangents`` meets an operation not linear in it, or decides control flow."""
    active, changed = set(tangents), True
    statements = _assignments(fdef.body)
    while changed:
        changed = False
        for stmt in statements:
            target = stmt.target if isinstance(stmt, gast.AugAssign) else stmt.targets[0]
            for name, value in _pairs(target, stmt.value):
                if name not in active and _names(value) & active:
                    active.add(name)
                    changed = True
    hint = ("write a tangent output linear in the tangents (JAX refuses to transpose this too), or give the "
            "function a custom_vjp for reverse mode.")
    for node in gast.walk(fdef):
        test = node.test if isinstance(node, (gast.If, gast.While, gast.IfExp)) else \
            node.iter if isinstance(node, gast.For) else None
        if test is not None and _names(test) & active:
            raise NumbaxDifferentiationError(f"reverse mode of {rule}: control flow depends on the tangents",
                                             anno.getanno(node, anno.Key.ORIGIN), hint=hint)
    for stmt in statements:
        value = gast.BinOp(left=stmt.target, op=stmt.op, right=stmt.value) if isinstance(stmt, gast.AugAssign) \
            else stmt.value
        if _names(value) & active and not _linear(value, active):
            raise NumbaxDifferentiationError(f"reverse mode of {rule}: its tangent output is not linear in the "
                                             "tangents here", anno.getanno(stmt, anno.Key.ORIGIN), hint=hint)
