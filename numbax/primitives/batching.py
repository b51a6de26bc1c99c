"""What a batching rule (a registry entry's ``batch``) is given and the expressions it builds.

``vmap``'s loop over examples, written as array code over a block of ``rows`` examples
(``numbax.ast_passes.optimizations.vectorize``), computes each primitive for every row at once: an operand that
differs from row to row (``batched``) holds them along a new leading axis; one that does not is the value
every row shares. ``rank`` is the number of axes of one row's value (None where it is not known).
"""
from __future__ import annotations

import dataclasses
from typing import List, Optional

import gast

_MODULES = ("np", "rt", "math")  # what generated code imports


@dataclasses.dataclass
class Operand:
    """One operand of a primitive in a block of rows: its expression, whether it is per row, one row's rank, and
    its kind where known (``"f"``: float64, as ``kinds`` has it)."""

    expr: gast.expr
    batched: bool
    rank: Optional[int]
    kind: Optional[str] = None


def name(id_: str) -> gast.Name:
    """A load of the variable ``id_``."""
    return gast.Name(id=id_, ctx=gast.Load(), annotation=None, type_comment=None)


def call(dotted: str, *args: gast.expr, keywords=()) -> gast.Call:
    """``np.expand_dims(x, 1)`` from ``call("np.expand_dims", x, one)``."""
    head, *rest = dotted.split(".")
    func: gast.expr = name(head)
    for attr in rest:
        func = gast.Attribute(value=func, attr=attr, ctx=gast.Load())
    return gast.Call(func=func, args=list(args), keywords=list(keywords))


def constant(value) -> gast.Constant:
    """A literal."""
    return gast.Constant(value=value, kind=None)


def widened(operand: Operand, rank: int) -> gast.expr:
    """A batched operand with ones after its rows' axis, to ``rank`` axes a row (how NumPy broadcasts a row of
    fewer axes against the others: from the right)."""
    expr = operand.expr
    for _ in range(rank - operand.rank):
        expr = call("np.expand_dims", expr, constant(1))
    return expr


def with_rows(shape: gast.expr, rows: gast.expr) -> Optional[gast.expr]:
    """The shape ``(rows,) + shape`` of a shape written as a tuple or one length, else None."""
    if isinstance(shape, gast.Tuple):
        return gast.Tuple(elts=[rows] + list(shape.elts), ctx=gast.Load())
    if isinstance(shape, (gast.Name, gast.Constant, gast.Subscript, gast.BinOp)):
        return gast.Tuple(elts=[rows, shape], ctx=gast.Load())
    return None


def known_ranks(operands: List[Operand]) -> bool:
    """Whether every operand's rank is known."""
    return all(op.rank is not None for op in operands)


def is_method(node: gast.Call) -> bool:
    """Whether ``node`` calls a method of a value (``x.reshape(s)``), not a module's function (``np.reshape``)."""
    func = node.func
    return isinstance(func, gast.Attribute) and not (isinstance(func.value, gast.Name)
                                                     and func.value.id in _MODULES)


def applied(node: gast.expr, operands: List[gast.expr]) -> gast.expr:
    """``node``'s operation applied to ``operands`` (a method's receiver first), its keywords kept."""
    if isinstance(node, gast.BinOp):
        return gast.BinOp(left=operands[0], op=node.op, right=operands[1])
    if isinstance(node, gast.UnaryOp):
        return gast.UnaryOp(op=node.op, operand=operands[0])
    if is_method(node):
        func = gast.Attribute(value=operands[0], attr=node.func.attr, ctx=gast.Load())
        return gast.Call(func=func, args=operands[1:], keywords=node.keywords)
    return gast.Call(func=node.func, args=operands, keywords=node.keywords)
