"""kinds: the algebra that abstract-value rules are written in.

An abstract value is ``(kind, ndim)``: the kind is ``"b"``, ``"i"``, ``"f"`` or ``"c"`` (bool, integer,
float64, complex; unsigned integers count as integers), ordered so that promotion is the larger. A rule is
``rule(app, args)``: the call (``app.args``, ``app.keywords`` are its argument nodes) and the abstract
values of its positional arguments (None where unknown); it returns the result's, or None.
"""
from __future__ import annotations

from typing import Optional, Tuple

import gast
import numpy as np

Aval = Tuple[str, int]
ORDER = "bifc"


def promote(*kinds: str) -> str:
    """The kind of a result computed from operands of ``kinds`` (NumPy's promotion between kinds)."""
    return max(kinds, key=ORDER.index)


def kind_of(dtype: np.dtype) -> Optional[str]:
    """A dtype's kind (``u`` is ``i``); None for floats narrower than float64 (fusion relies on every float
    it knows of being float64) and for what is not a number."""
    kind = "i" if dtype.kind == "u" else dtype.kind
    if kind == "f" and dtype != np.float64:
        return None
    return kind if kind in ORDER else None


def dtype_kind(node: gast.expr) -> Optional[str]:
    """The kind of a dtype spelled ``np.float64``, ``np.int64``, ... in generated code; else None."""
    if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and node.value.id == "np":
        try:
            return kind_of(np.dtype(node.attr))
        except TypeError:
            return None
    return None


def is_none(node: Optional[gast.expr]) -> bool:
    """An argument that is absent or the constant None."""
    return node is None or isinstance(node, gast.Constant) and node.value is None


def argument(app, position: int, keyword: str) -> Optional[gast.expr]:
    """The argument node at ``position`` or passed as ``keyword``, else None."""
    return app.args[position] if len(app.args) > position else app.keywords.get(keyword)


UNKNOWN = object()  # ``constant_value`` of what is not a constant when compiling


def constant_value(node: Optional[gast.expr]) -> object:
    """The value of an argument written as a constant (``3``, ``'nuc'``, ``None``, absent: None), ``np.inf``, its
    negation, or a tuple of those; else ``UNKNOWN``."""
    if is_none(node):
        return None
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and node.value.id == "np" and \
            node.attr == "inf":
        return np.inf
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        value = constant_value(node.operand)
        return -value if isinstance(value, (int, float)) and not isinstance(value, bool) else UNKNOWN
    if isinstance(node, gast.Tuple):
        items = tuple(constant_value(e) for e in node.elts)
        return UNKNOWN if UNKNOWN in items else items
    return UNKNOWN


def given_axis(app, position: int = 1) -> bool:
    """Whether a call (``np.cumsum(a, 1)``, ``rt.cumsum(a, axis=0)``) names an axis at ``position`` or as
    the keyword."""
    return not is_none(argument(app, position, "axis"))


def reduced_ndim(app, ndim: int, position: int = 1) -> int:
    """The ndim of a reduction's result over ``axis`` (at ``position`` or the keyword), with ``keepdims``."""
    axis = argument(app, position, "axis") if position is not None else app.keywords.get("axis")
    keepdims = app.keywords.get("keepdims")
    if isinstance(keepdims, gast.Constant) and keepdims.value is True:
        return ndim
    if is_none(axis):
        return 0
    return ndim - len(axis.elts) if isinstance(axis, gast.Tuple) else ndim - 1


def known(*args: Optional[Aval]) -> bool:
    """Whether every one of ``args`` is known (and there is at least one)."""
    return bool(args) and None not in args


def same_as(position: int):
    """The rule ``the abstract value of argument position``."""
    def rule(app, args):
        return args[position] if len(args) > position else None

    return rule


def constant(kind: str, ndim: int):
    """The rule ``always (kind, ndim)``."""
    def rule(app, args):
        return (kind, ndim)

    return rule


def elementwise(result: Optional[str] = None, real: bool = False):
    """The rule of an elementwise function: the operands' promoted kind (at least float for ``result="f"``,
    always ``result`` for ``"b"``; complex gives float with ``real``) at their largest ndim."""
    def rule(app, args):
        if not known(*args):
            return None
        kind = promote(*(a[0] for a in args))
        if result == "b":
            kind = "b"
        elif result == "f":
            kind = promote(kind, "f")
        if real and kind == "c":
            kind = "f"
        return (kind, max(a[1] for a in args))

    return rule


def reduction(result: Optional[str] = None, real: bool = False, axis_position: Optional[int] = 1):
    """The rule of a reduction over ``axis`` (positional at ``axis_position``, or the keyword): the operand's
    kind (bools count as integers, as NumPy sums them; ``result`` ``"f"`` at least float, ``"i"``/``"b"``
    always that; complex gives float with ``real``), the ndim that ``axis`` and ``keepdims`` leave."""
    def rule(app, args):
        if not args or args[0] is None:
            return None
        kind, ndim = args[0]
        if result in ("i", "b"):
            kind = result
        elif result == "f":
            kind = promote(kind, "f")
        elif kind == "b":
            kind = "i"
        if real and kind == "c":
            kind = "f"
        accumulated = given_dtype(app, axis_position)
        if accumulated is not None:  # ``np.sum(x, dtype=np.float64)``: the dtype's kind, unknown if not spelled
            kind = None if accumulated is UNKNOWN or (result in ("i", "b") and accumulated != result) else accumulated
        return None if kind is None else (kind, reduced_ndim(app, ndim, axis_position))

    return rule


def given_dtype(app, axis_position: Optional[int] = 1):
    """The kind of a reduction's or scan's ``dtype=`` (the keyword, or positional after the axis): None where it
    is absent or None, ``UNKNOWN`` where it is not spelled as ``np.<type>`` (or is narrower than float64)."""
    node = app.keywords.get("dtype")
    if node is None and axis_position is not None:
        node = argument(app, axis_position + 1, "dtype")
    if is_none(node):
        return None
    kind = dtype_kind(node)
    return UNKNOWN if kind is None else kind


def matmul(app, args) -> Optional[Aval]:
    """``a @ b`` of vectors and matrices."""
    if len(args) != 2 or not known(*args):
        return None
    (ka, na), (kb, nb) = args
    ndim = {(2, 2): 2, (2, 1): 1, (1, 2): 1, (1, 1): 0}.get((na, nb))
    return (promote(ka, kb), ndim) if ndim is not None else None


def cast(scalar_type):
    """The rule of a NumPy scalar type called on one value (``np.float64(x)``): its kind, the value's ndim."""
    kind = kind_of(np.dtype(scalar_type))

    def rule(app, args):
        if len(args) != 1 or args[0] is None or kind is None:
            return None
        return (kind, args[0][1])

    return rule


class OfItems:
    """A rule (an abstract value's or a shape's) of a function whose first argument is a sequence of arrays
    (``np.concatenate((a, b))``): the analyses give it, in place of that argument's own value (none), the list
    of its items' where the argument is a tuple or list written out; anything else there, it is given as ever
    (and finds no list)."""

    def __init__(self, rule):
        self.rule = rule

    def __call__(self, app, args):
        return self.rule(app, args)


def items_of(args) -> Optional[list]:
    """The items' values a rule of ``OfItems`` was given (None where the sequence was not written out, or an
    item's is unknown)."""
    items = args[0] if args else None
    return items if isinstance(items, list) and items and None not in items else None


def joined(new_axis: bool) -> OfItems:
    """The rule of ``np.concatenate`` (``new_axis`` False: the items' ndim, one at least) or ``np.stack`` (one
    more): the items' promoted kind; unknown with other keywords than ``axis`` (``dtype=``), ``axis=None``, or
    items of different ndims (NumPy's error)."""
    def rule(app, args):
        items = items_of(args)
        axis = argument(app, 1, "axis")
        if items is None or set(app.keywords) - {"axis"} or (axis is not None and is_none(axis)):
            return None
        ndims = {ndim for _, ndim in items}
        if len(ndims) != 1 or (not new_axis and 0 in ndims):
            return None
        return (promote(*(kind for kind, _ in items)), ndims.pop() + int(new_axis))

    return OfItems(rule)


def _array_of(app, args):
    """``np.array(x)``, ``np.asarray(x)``: ``x``'s value (the elementwise rule), and for a list or tuple written
    out with no other argument (``np.array([v, w])``), ``np.stack``'s of its items."""
    if app.args and isinstance(app.args[0], (gast.List, gast.Tuple)):
        return _STACKED.rule(app, args) if len(app.args) == 1 and not app.keywords else None
    return _ELEMENTWISE(app, args)


_STACKED = joined(new_axis=True)
_ELEMENTWISE = elementwise()
array_of = OfItems(_array_of)
