"""recompute: the values the backward sweep computes again rather than reading them from a tape.

A value assigned once per loop iteration is normally taped. When it is a
cheap function of values the backward sweep has anyway (loop invariants,
other values of the same iteration, arguments that are never written), the
backward sweep evaluates it again at the top of the iteration instead:
scalar arithmetic and elementwise math on scalars, and reads of an argument
that nothing writes (``row = logits[i]``, a view). Arrays computed by
elementwise functions are taped: computing them again would allocate again.
"""
from __future__ import annotations

import math
from typing import Dict, List, Set

import gast
import numpy as np

from numbax.ast_passes.analyses.nodes import base
from numbax.ast_passes.analyses.primitives import application

_ELEMENTWISE = {np.sin, np.cos, np.tan, np.exp, np.log, np.sqrt, np.tanh, np.sinh, np.cosh, np.abs, np.absolute,
                np.negative, np.square, np.log1p, np.expm1, np.arctan, math.sin, math.cos, math.tan, math.exp,
                math.log, math.sqrt, math.tanh, math.sinh, math.cosh, math.fabs, math.log1p, math.expm1, math.atan,
                abs}


def _scalar(node: gast.expr, avals: Dict[str, tuple]) -> bool:
    if isinstance(node, gast.Constant):
        return isinstance(node.value, (int, float, bool))
    return isinstance(node, gast.Name) and (avals.get(node.id) or (None, -1))[1] == 0


def _index(node: gast.expr) -> bool:
    """An index made of names, constants and slices of them (no calls)."""
    return all(isinstance(n, (gast.Name, gast.Constant, gast.Slice, gast.Tuple, gast.Load, gast.UnaryOp,
                              gast.USub)) for n in gast.walk(node))


def cheap(value: gast.expr, avals: Dict[str, tuple], readonly: Set[str]) -> bool:
    """Whether ``value`` (the right side of an assignment in A-normal form) costs less to compute again."""
    if isinstance(value, gast.BinOp):
        return _scalar(value.left, avals) and _scalar(value.right, avals)
    if isinstance(value, gast.UnaryOp):
        return _scalar(value.operand, avals)
    if isinstance(value, gast.Subscript):
        return isinstance(value.value, gast.Name) and base(value) in readonly and _index(value.slice)
    if isinstance(value, gast.Call) and not value.keywords:
        app = application(value)
        return app is not None and app.key in _ELEMENTWISE and all(_scalar(a, avals) for a in app.args)
    return False


def inputs(value: gast.expr) -> List[str]:
    """The variables ``value`` reads (a call's arguments, not the function's module), each once, in the
    order the tree is walked: callers emit code in this order, so it must not depend on string hashing."""
    app = application(value) if isinstance(value, gast.Call) else None
    nodes = app.args if app is not None else [value]
    return list(dict.fromkeys(n.id for node in nodes for n in gast.walk(node)
                              if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)))


def readonly_names(fdef: gast.FunctionDef, single_assignment: Set[str]) -> Set[str]:
    """The names assigned once that nothing writes into (no ``x[i] = v``, no ``x[i] += v``)."""
    written = set()
    for node in gast.walk(fdef):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store):
            written.add(base(node))
    return set(single_assignment) - written
