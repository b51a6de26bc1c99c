"""contraction_checks: before each contraction, a check that its operands fit, as JAX's ``dot_general`` checks.

Reverse mode may never compute a contraction whose value its gradient does not
read (``np.sum(np.dot(x, y))`` differentiates to ``y`` and ``x``), so the sizes
that NumPy would have refused are checked on their own. Expects A-normal form
and the abstract values of the function; before each ``np.dot``, ``@``,
``np.matmul``, ``np.inner``, ``np.tensordot`` and ``np.einsum`` of known
ndims it puts

    rt.check_contraction('demo.py:3: np.dot', 'i,i->', 'i', x, y)   # the file's name and the line

which raises ``ContractionShapeError`` (``NumbaxShapeError`` for the user,
a TypeError) naming the user's line where two axes that one letter names differ.
What has no derivative rule in any size is refused here, at the user's line:
``np.dot`` of an operand of more than two dimensions, ``np.einsum``'s sublist form.
"""
from __future__ import annotations

import copy
from typing import Dict, List, Optional, Sequence, Tuple

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.nodes import rt_call
from numbax.ast_passes.analyses.primitives import application
from numbax.primitives.registry import method_key
from numbax.errors import NumbaxDifferentiationError
from numbax.runtime import contractions

_DOT, _MATMUL = {np.dot, method_key("dot")}, {np.matmul, gast.MatMult}
CHECKED = _DOT | _MATMUL | {np.inner, np.tensordot, np.einsum}  # the contractions checked here (raising reads it)


class Refused(ValueError):
    """A contraction of these operands has no derivative rule (the message says which and what to do)."""


class Unknown(Exception):
    """What the check needs is not known when compiling (tensordot's axes held in a variable)."""


def _static_axes(args: Sequence[gast.expr], keywords: Dict[str, gast.expr]):
    node = args[2] if len(args) > 2 else keywords.get("axes")
    if node is None:
        return 2
    value = _constant(node)
    if value is None:
        raise Unknown()
    return value


def _constant(node: gast.expr):
    if isinstance(node, gast.Constant) and isinstance(node.value, (int, str)):
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and isinstance(node.operand, gast.Constant):
        return -node.operand.value
    if isinstance(node, (gast.Tuple, gast.List)):
        items = [_constant(e) for e in node.elts]
        return None if any(i is None for i in items) else tuple(items)
    return None


def contraction_spec(key, args: Sequence[gast.expr], keywords: Dict[str, gast.expr],
                     ndims: Sequence[int]) -> Tuple[Optional[contractions.Spec], str]:
    """The contraction ``key`` (a rule key) makes of operands of ``ndims``, and its letters that may not
    broadcast; ``(None, '')`` for a product with a scalar. Raises ``Refused`` where no rule applies, ``Unknown``
    where tensordot's axes are not constants, and ``ValueError`` (NumPy's) where the ndims do not fit."""
    if key in _DOT:
        if max(ndims) > 2:
            raise Refused("np.dot of an array of more than two dimensions has no derivative rule; use np.matmul, "
                          "np.tensordot or np.einsum, whose meaning there is explicit")
        if min(ndims) == 0:
            return None, ""
        spec = contractions.matmul_spec(*ndims)
    elif key in _MATMUL:
        spec = contractions.matmul_spec(*ndims)
    elif key is np.inner:
        spec = contractions.inner_spec(*ndims)
    elif key is np.tensordot:
        spec = contractions.tensordot_spec(ndims[0], ndims[1], _static_axes(args, keywords))
    else:
        return contractions.parse(_subscripts(args), ndims), ""
    return spec, "".join(c for c in spec.letters() if c not in spec.output)


def _subscripts(args: Sequence[gast.expr]) -> str:
    if not (args and isinstance(args[0], gast.Constant) and isinstance(args[0].value, str)):
        raise Refused("np.einsum's sublist form (operands and lists of axes) has no derivative rule; write the "
                      "subscripts as a string: np.einsum('ij->ji', x)")
    return args[0].value


def _operands(key, args: Sequence[gast.expr]) -> List[gast.expr]:
    return list(args[1:]) if key is np.einsum else list(args[:2])


def _check(stmt: gast.Assign, avals: Dict[str, tuple]) -> Optional[gast.stmt]:
    """The check to put before ``stmt``, or None; raises NumbaxDifferentiationError for a refused form."""
    app = application(stmt.value)
    if app is None or app.key not in CHECKED:
        return None
    origin = anno.getanno(stmt, anno.Key.ORIGIN)
    operands = _operands(app.key, app.args)
    ndims = [_ndim(op, avals) for op in operands]
    try:
        if app.key is np.einsum:
            _subscripts(app.args)
        if None in ndims:
            return None
        spec, exact = contraction_spec(app.key, app.args, app.keywords, ndims)
    except Unknown:
        return None
    except ValueError as exc:
        raise NumbaxDifferentiationError(f"cannot differentiate this call of {app.name}: {exc}", origin) from None
    if spec is None:
        return None
    where = f"{origin.short()}: {app.name}" if origin is not None else app.name
    subscripts = ",".join(spec.inputs) + "->" + spec.output
    check = gast.Expr(value=rt_call("check_contraction", gast.Constant(value=where, kind=None),
                                    gast.Constant(value=subscripts, kind=None),
                                    gast.Constant(value=exact, kind=None),
                                    *copy.deepcopy(operands)))
    anno.copyanno(stmt, check)
    return check


def _ndim(node: gast.expr, avals: Dict[str, tuple]) -> Optional[int]:
    if isinstance(node, gast.Constant):
        return 0
    aval = avals.get(node.id) if isinstance(node, gast.Name) else None
    return None if aval is None else aval[1]


def _block(stmts: List[gast.stmt], avals: Dict[str, tuple]) -> List[gast.stmt]:
    out: List[gast.stmt] = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                setattr(stmt, field, _block(inner, avals))
        check = _check(stmt, avals) if isinstance(stmt, gast.Assign) else None
        out.extend([check, stmt] if check is not None else [stmt])
    return out


def transform(fdef: gast.FunctionDef, avals: Dict[str, tuple]) -> gast.FunctionDef:
    """``fdef`` with a check before each contraction of known ndims (in place)."""
    fdef.body = _block(fdef.body, avals)
    return fdef
