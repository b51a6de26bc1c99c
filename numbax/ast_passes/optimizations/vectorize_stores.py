"""vectorize_stores: a block's rows of an output computed straight into the output, not into a temporary.

``vectorize`` writes a block's value for an output into a new array, then copies it into the output's rows
(``dw = np.expand_dims(g, 1) * x_2``, ``out[start:stop] = dw``): Numba allocates and fills the temporary, then
copies it. Where the value is the last operation of an arithmetic operator or a NumPy ufunc, read by that
store alone, the ufunc writes its result into the output's rows instead, at the place the value was made::

    dw = np.expand_dims(g, 1) * x_2                 np.multiply(np.expand_dims(g, 1), x_2, out[start:stop])
    out[start:stop] = dw                  ->

The output is read nowhere in the loop (``vectorize`` ensures it), so writing it earlier changes nothing else;
the ufunc computes the same operation on the same operands, so the values are the same to the bit, and
broadcasts them into the rows as the store did.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set

import gast
import numpy as np

from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.usage import count_in
from numbax.primitives.registry import elementwise_ufunc
from numbax.primitives.batching import call

_OPERATORS = {gast.Add: "np.add", gast.Sub: "np.subtract", gast.Mult: "np.multiply", gast.Div: "np.true_divide",
              gast.USub: "np.negative"}


def _ufunc(value: gast.expr) -> Optional[gast.Call]:
    """``value`` as a call of the ufunc that computes it with an output argument still to add, or None."""
    if isinstance(value, (gast.BinOp, gast.UnaryOp)):
        ufunc = _OPERATORS.get(type(value.op))
        operands = [value.left, value.right] if isinstance(value, gast.BinOp) else [value.operand]
        return None if ufunc is None else call(ufunc, *operands)
    app = application(value) if isinstance(value, gast.Call) else None
    if app is None or not elementwise_ufunc(app.key) or app.keywords or len(app.args) != app.key.nin \
            or not app.name.startswith("np.") or app.key.nout != 1:
        return None
    return call(app.name, *app.args)


def _rows_store(stmt: gast.stmt, outputs: Set[str]) -> Optional[str]:
    """The output of ``out[start:stop] = value`` (a block's rows of an output), or None."""
    if not isinstance(stmt, gast.Assign) or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and target.value.id in outputs \
            and isinstance(target.slice, gast.Slice):
        return target.value.id
    return None


def write_in_place(body: List[gast.stmt], outputs: Set[str]) -> Set[str]:
    """Rewrite ``body``'s stores of ``outputs`` (arrays the loop fills, one block's rows a store) whose value a
    ufunc computes into that ufunc's writes into the rows; the outputs so written."""
    _, loads = count_in(body)
    made: Dict[str, int] = {s.targets[0].id: k for k, s in enumerate(body) if isinstance(s, gast.Assign)
                            and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)}
    written: Set[str] = set()
    dropped: Set[int] = set()
    for k, stmt in enumerate(body):
        output = _rows_store(stmt, outputs)
        if output is None:
            continue
        value, at = stmt.value, k
        if isinstance(value, gast.Name) and value.id in made and loads[value.id] == 1:
            at = made[value.id]
            value = body[at].value
        ufunc = _ufunc(value)
        if ufunc is None:
            continue
        ufunc.args.append(gast.Subscript(value=stmt.targets[0].value, slice=stmt.targets[0].slice, ctx=gast.Load()))
        body[at] = gast.copy_location(gast.Expr(value=ufunc), body[at])
        if at != k:
            dropped.add(k)
        written.add(output)
    body[:] = [stmt for k, stmt in enumerate(body) if k not in dropped]
    return written
