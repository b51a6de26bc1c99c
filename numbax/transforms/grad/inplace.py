"""inplace: the array methods that change their array in place, as the writes reverse mode differentiates.

Expects a function in A-normal form. ``y.sort()`` becomes ``_t = np.sort(y); y[:] = _t`` and
``y.fill(v)`` becomes ``y[:] = v``: the same values in the same memory, so every alias of
``y`` sees them as before, and reverse mode gives them the rules it has for ``np.sort`` (the
permutation gathers the cotangent back) and for a write (the cotangent of the overwritten value
is zero, the written value's is what the slot's is). Any other method statement is left alone:
activity analysis refuses one that reads an active value (``activity``).

    >>> import gast
    >>> from numbax.ast_passes.naming import Namer
    >>> from numbax.ast_passes.unparse import unparse
    >>> f = gast.parse("def f(x):\\n    y = x * 1.0\\n    y.sort()\\n    y.fill(0.5)\\n    return y").body[0]
    >>> print(unparse(transform(f, Namer())))
    def f(x):
        y = x * 1.0
        _t1 = np.sort(y)
        y[:] = _t1
        y[:] = 0.5
        return y
"""
from __future__ import annotations

import copy
from typing import List

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.nodes import assign, name
from numbax.ast_passes.naming import Namer

_ALL = gast.Slice(lower=None, upper=None, step=None)


def _whole(array: str) -> gast.Subscript:
    return gast.Subscript(value=name(array), slice=copy.deepcopy(_ALL), ctx=gast.Store())


def _sort(array: str, call: gast.Call, namer: Namer) -> List[gast.stmt]:
    temp = namer.temp()
    np_sort = gast.Attribute(value=name("np"), attr="sort", ctx=gast.Load())
    value = gast.Call(func=np_sort, args=[name(array)] + call.args, keywords=call.keywords)
    return [assign(temp, value), assign(_whole(array), name(temp))]


def _fill(array: str, call: gast.Call, namer: Namer) -> List[gast.stmt]:
    if len(call.args) != 1 or call.keywords:
        return []
    return [assign(_whole(array), call.args[0])]


_REWRITES = {"sort": _sort, "fill": _fill}


class _InPlace(gast.NodeTransformer):
    def __init__(self, namer: Namer):
        self.namer = namer

    def visit_Expr(self, node: gast.Expr):
        call = node.value
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
                isinstance(call.func.value, gast.Name) and call.func.attr in _REWRITES):
            return node
        rewritten = _REWRITES[call.func.attr](call.func.value.id, call, self.namer)
        for new in rewritten:
            gast.copy_location(new, node)
            anno.copyanno(node, new)
        return rewritten or node


def transform(fdef: gast.FunctionDef, namer: Namer) -> gast.FunctionDef:
    """Rewrite ``fdef``'s in-place ``sort`` and ``fill`` statements as described above."""
    return _InPlace(namer).visit(fdef)
