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
from typing import Dict, Iterable, Optional, Sequence, Set

import gast

_NUMBER, _ARRAYS_OUT = "rt.number", "rt.arrays_out"


def _call(helper: str, arg: gast.expr) -> gast.Call:
    return gast.Call(func=gast.parse(helper).body[0].value, args=[arg], keywords=[])


def _is_call_of(node: gast.AST, helper: str) -> bool:
    return isinstance(node, gast.Call) and gast.dump(node.func) == gast.dump(gast.parse(helper).body[0].value)


_NUMBA_DTYPES = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


def _number_dtype(value: gast.expr) -> Optional[str]:
    """The dtype Numba gives ``value`` where it is written as a Python number (``0``, ``-1.5``, ``True``) or an
    integer of the shape (``len(x)``, ``x.shape[0]``, ``x.size``, ``x.ndim``); None for anything else."""
    if isinstance(value, gast.UnaryOp):
        value = value.operand
    if isinstance(value, gast.Constant):
        return _NUMBA_DTYPES.get(type(value.value))
    if isinstance(value, gast.Subscript):
        value = value.value
    if isinstance(value, gast.Attribute) and value.attr in ("shape", "size", "ndim") or \
            isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.func.id == "len":
        return "int64"
    return None


def _number_starts(fdef: gast.FunctionDef) -> Dict[str, Set[str]]:
    """name -> the dtypes of the numbers written into it, for the names ``fdef`` binds again (a loop's carry, a
    branch's join): where the function returns one, Numba may type the return before it joins them with what
    comes later."""
    counts = Counter(node.id for node in gast.walk(fdef)
                     if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store))
    starts: Dict[str, Set[str]] = {}
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) \
                and counts[node.targets[0].id] > 1 and _number_dtype(node.value):
            starts.setdefault(node.targets[0].id, set()).add(_number_dtype(node.value))
    return starts


def _cast(dtype: Optional[str], value: gast.expr, starts: Dict[str, Set[str]]) -> gast.expr:
    """``np.float32(s)`` where ``s`` is rebound and was written a number of another dtype (``s = 0`` or
    ``s = 0.0`` before a loop that adds float32 values to it); ``value`` as it is elsewhere."""
    if dtype is None or not isinstance(value, gast.Name) or not starts.get(value.id, set()) - {dtype}:
        return value
    return gast.copy_location(_call(f"np.{'bool_' if dtype == 'bool' else dtype}", value), value)


class _Returns(gast.NodeTransformer):
    """Wraps each returned value of one function in ``rt.arrays_out`` (not those of nested functions), a
    rebound variable written a number of another dtype first cast to its leaf's dtype in ``dtypes``."""

    def __init__(self, dtypes: Sequence[Optional[str]], starts: Dict[str, Set[str]]):
        self.dtypes, self.starts = list(dtypes), starts

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        return node

    visit_Lambda = visit_FunctionDef

    def visit_Return(self, node: gast.Return) -> gast.Return:
        if node.value is None or _is_call_of(node.value, _ARRAYS_OUT):
            return node
        value = node.value
        if isinstance(value, gast.Tuple) and len(value.elts) == len(self.dtypes) > 1:
            value.elts = [_cast(d, e, self.starts) for d, e in zip(self.dtypes, value.elts)]
        elif len(self.dtypes) == 1 and not isinstance(value, gast.Tuple):
            value = _cast(self.dtypes[0], value, self.starts)
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
        returns = _Returns(dtypes, _number_starts(fdef))
        fdef.body = [returns.visit(stmt) for stmt in fdef.body]
    fdef.body = [gast.copy_location(s, fdef) for s in prologue] + fdef.body
    return gast.fix_missing_locations(fdef)
