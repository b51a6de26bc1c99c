"""raising: whether the statements of a function may raise, which grad must not skip.

``grad`` returns no value, so reverse mode would leave out what the output
needs and the derivatives do not: ``np.sum(y) + np.sum(n, axis=1)`` of a 1-D
``n`` gives ``dy`` without NumPy's AxisError. Where a statement may raise, the
gradient evaluates the output too (``transform``), so that the error is
raised. A statement with an effect (a run-time check) is kept anyway; one
without cannot raise when it reads names, constants, attributes
or slices, applies one of NumPy's ufuncs or a whole-array reduction to one
operand, or combines operands whose shapes are known to broadcast; indexing
and division raise through the run-time checks in front of them, which are
kept anyway, and so do contractions (``contraction_checks``); loops run over
``range(len(x))``. Anything else may raise.

    >>> import gast
    >>> f = gast.parse("def f(n, y):\\n    t = np.sum(n, axis=1)\\n    return t").body[0]
    >>> may_raise(f.body, {}, {})
    True
"""
from __future__ import annotations

from typing import Dict, List

import gast
import numpy as np

from numbax.ast_passes.analyses.nodes import own_expressions
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.shapes import broadcast, expr_shape
from numbax.ast_passes.optimizations.purity import is_pure
from numbax.transforms.grad.contraction_checks import CHECKED

# functions of one array that cannot raise (with no other argument)
_WHOLE = {np.sum, np.mean, np.prod, np.cumsum, np.cumprod, np.copy, np.ravel, np.transpose, np.asarray, np.array,
          np.sort, np.real, np.imag, np.conj, np.conjugate, np.var, np.std, np.linalg.norm}
_LOOPS = {range, len}  # over the lengths that loops run over


def _node_may_raise(node: gast.AST, shapes: Dict[str, tuple], avals: Dict[str, tuple]) -> bool:
    if isinstance(node, (gast.BinOp, gast.Compare)) and not isinstance(getattr(node, "op", None), gast.MatMult):
        parts = [node.left, node.right] if isinstance(node, gast.BinOp) else [node.left] + node.comparators
        return broadcast(*(expr_shape(p, shapes, avals) for p in parts)) is None
    if isinstance(node, (gast.Call, gast.BinOp)):
        app = application(node)
        key = app.key if app is not None else None
        if any(key is f for f in _LOOPS) or key in CHECKED:
            return False
        return app is None or bool(app.keywords) or len(app.args) != 1 or not (
            isinstance(key, np.ufunc) or any(key is f for f in _WHOLE))
    return False


def may_raise(body: List[gast.stmt], shapes: Dict[str, tuple], avals: Dict[str, tuple]) -> bool:
    """Whether a statement of ``body`` or of its nested blocks may raise (see the module docstring)."""
    for stmt in gast.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(stmt, gast.stmt) and not (isinstance(stmt, gast.Expr) and not is_pure(stmt.value)) and any(
                _node_may_raise(node, shapes, avals) for part in own_expressions(stmt) for node in gast.walk(part)):
            return True
    return False
