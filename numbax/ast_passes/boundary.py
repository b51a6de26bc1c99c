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

from collections import Counter
from typing import Iterable, Optional, Sequence, Set

import gast

_NUMBER, _ARRAYS_OUT = "rt.number", "rt.arrays_out"


def _call(helper: str, arg: gast.expr) -> gast.Call:
    return gast.Call(func=gast.parse(helper).body[0].value, args=[arg], keywords=[])


def _is_call_of(node: gast.AST, helper: str) -> bool:
    return isinstance(node, gast.Call) and gast.dump(node.func) == gast.dump(gast.parse(helper).body[0].value)


def _an_int(value: gast.expr) -> bool:
    """Whether ``value`` is written as an integer or bool: ``0``, ``-1``, ``True``, ``len(x)``, ``x.shape[0]``,
    ``x.size``, ``x.ndim``."""
    if isinstance(value, gast.UnaryOp):
        value = value.operand
    if isinstance(value, gast.Constant):
        return isinstance(value.value, (bool, int))
    if isinstance(value, gast.Subscript):
        value = value.value
    if isinstance(value, gast.Attribute):
        return value.attr in ("shape", "size", "ndim")
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.func.id == "len"


def _int_starts(fdef: gast.FunctionDef) -> Set[str]:
    """The names ``fdef`` binds to an integer and binds again (a loop's carry, a branch's join): where the
    function returns one, Numba may type the return before it joins the integer with what comes later."""
    counts = Counter(node.id for node in gast.walk(fdef)
                     if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store))
    ints = {node.targets[0].id for node in gast.walk(fdef) if isinstance(node, gast.Assign) and
            len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) and _an_int(node.value)}
    return {name for name in ints if counts[name] > 1}


def _cast(dtype: Optional[str], value: gast.expr, rebound: Set[str]) -> gast.expr:
    """``np.float64(s)`` where ``s`` starts as an integer and is rebound (``s = 0`` or ``s = x.shape[0]`` before
    a loop that adds floats to it); ``value`` as it is elsewhere."""
    if dtype is None or not isinstance(value, gast.Name) or value.id not in rebound:
        return value
    return gast.copy_location(_call(f"np.{'bool_' if dtype == 'bool' else dtype}", value), value)


class _Returns(gast.NodeTransformer):
    """Wraps each returned value of one function in ``rt.arrays_out`` (not those of nested functions), a
    variable that starts as an integer and is rebound first cast to its leaf's dtype in ``dtypes``."""

    def __init__(self, dtypes: Sequence[Optional[str]], rebound: Set[str]):
        self.dtypes, self.rebound = list(dtypes), rebound

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        return node

    visit_Lambda = visit_FunctionDef

    def visit_Return(self, node: gast.Return) -> gast.Return:
        if node.value is None or _is_call_of(node.value, _ARRAYS_OUT):
            return node
        value = node.value
        if isinstance(value, gast.Tuple) and len(value.elts) == len(self.dtypes) > 1:
            value.elts = [_cast(d, e, self.rebound) for d, e in zip(self.dtypes, value.elts)]
        elif len(self.dtypes) == 1 and not isinstance(value, gast.Tuple):
            value = _cast(self.dtypes[0], value, self.rebound)
        node.value = gast.copy_location(_call(_ARRAYS_OUT, value), node.value)
        return node


def transform(fdef: gast.FunctionDef, zero_d: Iterable[str], returns_numbers: bool = True,
              dtypes: Sequence[Optional[str]] = ()) -> gast.FunctionDef:
    """``fdef`` reading its parameters named in ``zero_d`` as numbers, and (``returns_numbers``: what it returns
    may hold a number) returning each number as a 0-d array.

    ``dtypes`` names, per returned leaf, the dtype of one that is a number (None for others): a number that a
    loop or a branch rebinds from an int to a float has the float's dtype only after Numba joins its types,
    and its 0-d array one dtype only if it is cast to that first."""
    names = [a.id for a in fdef.args.args]
    done = {s.targets[0].id for s in fdef.body if isinstance(s, gast.Assign) and _is_call_of(s.value, _NUMBER)}
    prologue = [gast.Assign(targets=[gast.Name(id=n, ctx=gast.Store(), annotation=None, type_comment=None)],
                            value=_call(_NUMBER, gast.Name(id=n, ctx=gast.Load(), annotation=None,
                                                           type_comment=None)), type_comment=None)
                for n in names if n in set(zero_d) and n not in done]
    if returns_numbers:
        returns = _Returns(dtypes, _int_starts(fdef))
        fdef.body = [returns.visit(stmt) for stmt in fdef.body]
    fdef.body = [gast.copy_location(s, fdef) for s in prologue] + fdef.body
    return gast.fix_missing_locations(fdef)
