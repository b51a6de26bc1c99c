"""boundary: 0-d arrays enter the compiled function as numbers and leave it as 0-d arrays.

Expects the final code of the function the caller calls (after ``legalize``).
Guarantees that each parameter that may hold a 0-d array is read as its number
first (``rt.number``; a number stays itself), and that each ``return`` of a
value that may hold a number makes it a 0-d array (``rt.arrays_out``). Inside,
a 0-d array is then what Numba makes of it in arithmetic, a number, so a loop
or a branch that rebinds one keeps one type; outside, every 0-d result is an
array of shape ``()`` in its dtype, as JAX returns (see
``numbax.runtime.boundary``). Applying it twice changes nothing.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> fdef = gast.parse("def f(b, x):\\n    return b * x.sum(), x").body[0]
    >>> print(unparse(transform(fdef, ["b"])))
    def f(b, x):
        b = rt.number(b)
        return rt.arrays_out((b * x.sum(), x))
"""
from __future__ import annotations

from typing import Iterable

import gast

_NUMBER, _ARRAYS_OUT = "rt.number", "rt.arrays_out"


def _call(helper: str, arg: gast.expr) -> gast.Call:
    return gast.Call(func=gast.parse(helper).body[0].value, args=[arg], keywords=[])


def _is_call_of(node: gast.AST, helper: str) -> bool:
    return isinstance(node, gast.Call) and gast.dump(node.func) == gast.dump(gast.parse(helper).body[0].value)


class _Returns(gast.NodeTransformer):
    """Wraps each returned value of one function in ``rt.arrays_out`` (not those of nested functions)."""

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        return node

    visit_Lambda = visit_FunctionDef

    def visit_Return(self, node: gast.Return) -> gast.Return:
        if node.value is not None and not _is_call_of(node.value, _ARRAYS_OUT):
            node.value = gast.copy_location(_call(_ARRAYS_OUT, node.value), node.value)
        return node


def transform(fdef: gast.FunctionDef, zero_d: Iterable[str], returns_numbers: bool = True) -> gast.FunctionDef:
    """``fdef`` reading its parameters named in ``zero_d`` as numbers, and (``returns_numbers``: what it returns
    may hold a number) returning each number as a 0-d array."""
    names = [a.id for a in fdef.args.args]
    done = {s.targets[0].id for s in fdef.body if isinstance(s, gast.Assign) and _is_call_of(s.value, _NUMBER)}
    prologue = [gast.Assign(targets=[gast.Name(id=n, ctx=gast.Store(), annotation=None, type_comment=None)],
                            value=_call(_NUMBER, gast.Name(id=n, ctx=gast.Load(), annotation=None,
                                                           type_comment=None)), type_comment=None)
                for n in names if n in set(zero_d) and n not in done]
    if returns_numbers:
        fdef.body = [_Returns().visit(stmt) for stmt in fdef.body]
    fdef.body = [gast.copy_location(s, fdef) for s in prologue] + fdef.body
    return gast.fix_missing_locations(fdef)
