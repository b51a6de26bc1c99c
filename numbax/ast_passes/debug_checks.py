"""debug_checks: after each operation, raise ``FloatingPointError`` if it produced a NaN (or an infinity).

Runs only while ``debug_nans``/``debug_infs`` is on when a function is compiled
(the setting is part of the specialization). Expects A-normal form, where each
assignment performs one operation; guarantees that every assignment of a call,
arithmetic or unary operation to names is followed by

    if rt.has_nan(t):
        raise FloatingPointError("invalid value (nan) encountered in np.log at demo.py:12: y = np.log(x)")

naming the operation and the user's line it came from (for the adjoint's
statements, the line whose gradient they compute). Integer results are never
checked at run time: the helpers fold to ``False`` for them.
"""
from __future__ import annotations

import ast
from typing import List, Tuple

import gast

from numbax.ast_passes import anno

_OPERATORS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**", gast.MatMult: "@",
              gast.FloorDiv: "//", gast.Mod: "%", gast.USub: "unary -"}


def _operation(value: gast.expr) -> str:
    if isinstance(value, gast.Call):
        return ast.unparse(gast.gast_to_ast(value.func))
    op = value.op
    return f"`{_OPERATORS.get(type(op), type(op).__name__)}`"


def _checks(stmt: gast.stmt, names: List[str], kinds: Tuple[str, ...]) -> List[gast.stmt]:
    origin = anno.getanno(stmt, anno.Key.ORIGIN)
    grad_of = anno.getanno(stmt, anno.Key.GRAD_OF)
    where = ""
    if origin is not None:
        where = f" at {origin.location()}: " + (f"the gradient of `{grad_of}`" if grad_of else origin.line.strip())
    out = []
    for kind in kinds:
        what = "invalid value (nan)" if kind == "nan" else "overflow or division by zero (inf)"
        message = f"{what} encountered in {_operation(stmt.value)}{where}"
        for name in names:
            check = gast.parse(f"if rt.has_{kind}({name}):\n    raise FloatingPointError({message!r})").body[0]
            for node in gast.walk(check):
                if isinstance(node, gast.stmt):
                    anno.copyanno(stmt, node)
            out.append(check)
    return out


def _targets(stmt: gast.stmt) -> List[str]:
    if isinstance(stmt, gast.Assign) and isinstance(stmt.value, (gast.Call, gast.BinOp, gast.UnaryOp)):
        target = stmt.targets[0]
        if isinstance(target, gast.Name):
            return [target.id]
        if isinstance(target, gast.Tuple) and all(isinstance(e, gast.Name) for e in target.elts):
            return [e.id for e in target.elts]
    return []


def _block(stmts: List[gast.stmt], kinds: Tuple[str, ...]) -> List[gast.stmt]:
    out: List[gast.stmt] = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                setattr(stmt, field, _block(inner, kinds))
        out.append(stmt)
        names = _targets(stmt)
        if names:
            out.extend(_checks(stmt, names, kinds))
    return out


def transform(fdef: gast.FunctionDef, nans: bool, infs: bool) -> gast.FunctionDef:
    """Insert the checks that are on into ``fdef`` (unchanged when neither is)."""
    kinds = tuple(kind for kind, on in (("nan", nans), ("inf", infs)) if on)
    if kinds:
        fdef.body = _block(fdef.body, kinds)
    return fdef
