"""proven_checks: reverse mode drops the run-time broadcast checks that its symbolic shapes prove.

``run_time_checks`` puts ``rt.check_broadcast(a, b, where)`` before each
elementwise operation of arrays that the user wrote (``rt.check_where``,
``rt.check_in_place`` before ``np.where`` and ``x += y``), as it does for ``jit``.
Reverse mode keeps these checks in its forward sweep (they are effects that
only read), so an operation whose operands do not broadcast raises NumPy's
error at the user's line before the backward sweep computes anything from
it: the adjoint of a checked operation needs no check of its own.

Where ``shapes.infer`` knows the operands' shapes and they broadcast (equal
dims, a scalar, missing leading axes), the check cannot fail, and it goes: it
would keep a temporary alive and split a run of statements that fusion makes
one loop. Dims that the code takes as equal (``assumed_equal``) count as
equal: the guard at the entry checks them, and where it fails the general
code, which assumes nothing, runs instead and keeps its checks. A check
stands before the statement it checks, in the same block, so no block
empties.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> from numbax.ast_passes.analyses.shapes import infer
    >>> f = gast.parse("def f(x, y):\\n"
    ...                "    rt.check_broadcast(x, x, 'demo.py:2:8')\\n"
    ...                "    t = x * x\\n"
    ...                "    rt.check_broadcast(t, y, 'demo.py:3:8')\\n"
    ...                "    return t + y").body[0]
    >>> print(unparse(transform(f, infer(f, {"x": 1, "y": 1}))))
    def f(x, y):
        t = x * x
        rt.check_broadcast(t, y, 'demo.py:3:8')
        return t + y
"""
from __future__ import annotations

from typing import Dict, Optional

import gast

from numbax.ast_passes.analyses.shapes import Shape, broadcast, expr_shape


_BROADCASTS = {"check_broadcast", "check_where", "check_in_place"}  # the operands, then ``where``


def _proven(call: gast.expr, shapes: Dict[str, Shape]) -> bool:
    """Whether ``call`` is a check that operands known to broadcast pass: ``rt.check_broadcast(a, b,
    where)``, ``rt.check_where(c, a, b, where)``, or ``rt.check_in_place(x, y, where)`` where the result has
    ``x``'s shape."""
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
            call.func.attr in _BROADCASTS and isinstance(call.func.value, gast.Name) and call.func.value.id == "rt"):
        return False
    operands = [expr_shape(a, shapes) for a in call.args[:-1]]
    if None in operands:
        return False
    result = broadcast(*operands)
    return result is not None and (call.func.attr != "check_in_place" or result == operands[0])


class _Drop(gast.NodeTransformer):
    def __init__(self, shapes: Dict[str, Shape]):
        self.shapes = shapes

    def visit_Expr(self, node: gast.Expr) -> Optional[gast.Expr]:
        return None if _proven(node.value, self.shapes) else node


def transform(fdef: gast.FunctionDef, shapes: Dict[str, Shape]) -> gast.FunctionDef:
    """``fdef`` without the broadcast checks that ``shapes`` (from ``shapes.infer``) prove (in place)."""
    _Drop(shapes).visit(fdef)
    return fdef
