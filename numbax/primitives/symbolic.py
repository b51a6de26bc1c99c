"""symbolic: the algebra that shape rules are written in.

A symbolic shape is a tuple of dims; a dim is ``(symbol, offset)``, the length ``symbol + offset`` (the
symbol ``"x.0"`` is the first dim of parameter ``x``; ``ONE``, no symbol and offset 1, is a length of one: the
axis a reduction with ``keepdims=True`` keeps). A rule is ``rule(app, args)``: the call and its
positional arguments' shapes (None where unknown); it returns the result's shape, or None.

Where two different dims meet (``a + b``, the inner dims of ``a @ b``), the result is unknown unless
``collecting`` is on: ``analyses.shapes.assumed_equal`` then takes whole dims of parameters as equal and
records the pairs, which a guard at the function's entry checks. Under ``joining``, two different whole
dims that broadcast give their join (``"a.0|y.0"``), for fusion, which reads arrays of its dims at a
clamped index.
"""
from __future__ import annotations

import contextlib
from typing import Iterator, Optional, Set, Tuple

import gast

from numbax.primitives import kinds
from numbax.primitives.kinds import argument, is_none

Dim = Tuple[str, int]
Shape = Tuple[Dim, ...]
SCALAR: Shape = ()
ONE: Dim = ("", 1)


class _Collecting:
    """What ``collecting`` gathers: the symbols it may equate, and the pairs it did."""

    def __init__(self, symbols: Set[str]):
        self.symbols = symbols
        self.pairs: Set[Tuple[str, str]] = set()


_COLLECTING: Optional[_Collecting] = None


@contextlib.contextmanager
def collecting(symbols: Set[str]) -> Iterator[Set[Tuple[str, str]]]:
    """Within the block, dims of ``symbols`` that meet may be taken as equal; the pairs that were are added
    to the set it yields."""
    global _COLLECTING
    _COLLECTING = _Collecting(symbols)
    try:
        yield _COLLECTING.pairs
    finally:
        _COLLECTING = None


def assume(a: Dim, b: Dim) -> bool:
    """Whether ``a`` and ``b`` may be taken as equal: both whole dims of parameters (a guard at the entry
    will check them) while ``collecting``; the pair is recorded."""
    if _COLLECTING is None or a[1] or b[1] or not (a[0] in _COLLECTING.symbols and b[0] in _COLLECTING.symbols):
        return False
    _COLLECTING.pairs.add(tuple(sorted((a[0], b[0]))))
    return True


_JOINING = False


@contextlib.contextmanager
def joining() -> Iterator[None]:
    """Within the block, two different whole dims that meet in a broadcast give their join, ``("a.0|y.0", 0)``:
    the length NumPy broadcasts them to. An array of that dim was made, so its dims did broadcast, and each of
    them (``within``) is that length or 1. Only for a pass that reads an array of a dim within a join at the
    loop's index clamped to its length (fusion), or compares the shapes of two arrays made (``row_checks``), never
    for one that takes a known shape to mean that a
    broadcast cannot raise (``raising``, ``proven_checks``)."""
    global _JOINING
    _JOINING = True
    try:
        yield
    finally:
        _JOINING = False


def _join(a: Dim, b: Dim) -> Optional[Dim]:
    """The join of two whole dims (of the symbols of both, sorted), under ``joining``; else None."""
    if not _JOINING or a[1] or b[1]:
        return None
    return "|".join(sorted(set(a[0].split("|")) | set(b[0].split("|")))), 0


def within(part: Dim, whole: Dim) -> bool:
    """Whether ``part`` is one of the dims that ``whole`` joins (or a join of some of them): its length is
    ``whole``'s or 1."""
    return part != whole and not part[1] and not whole[1] and set(part[0].split("|")) <= set(whole[0].split("|"))


def broadcast(*shapes: Optional[Shape]) -> Optional[Shape]:
    """The shape of an elementwise result, NumPy's rules from the right: scalars, missing leading axes and
    ``ONE`` take the other operands' dims, equal dims stay; two other different dims are unknown (one may be
    a length 1 at run time), unless ``collecting`` may take them as equal or ``joining`` joins them."""
    arrays = [s for s in shapes if s != SCALAR]
    if None in arrays:
        return None
    if not arrays:
        return SCALAR
    out = list(max(arrays, key=len))
    for shape in arrays:
        for k in range(1, len(shape) + 1):
            if out[-k] == ONE:
                out[-k] = shape[-k]
            elif shape[-k] not in (out[-k], ONE) and not assume(shape[-k], out[-k]):
                joined = _join(shape[-k], out[-k])
                if joined is None:
                    return None
                out[-k] = joined
    return tuple(out)


def matmul(a: Optional[Shape], b: Optional[Shape]) -> Optional[Shape]:
    """``a @ b`` of vectors and matrices."""
    if a is None or b is None or not a or not b or len(a) > 2 or len(b) > 2:
        return None
    assume(a[-1], b[0])  # they agree, or the product raised: what follows may take them as equal
    return a[:-1] + b[1:]


# Rules, as the registry's entries name them


def elementwise(app, args) -> Optional[Shape]:
    """An elementwise function of positional operands: their broadcast (unknown with keywords)."""
    return broadcast(*args) if args and not app.keywords else None


def contraction(app, args) -> Optional[Shape]:
    """``np.dot``/``np.matmul`` of vectors and matrices."""
    return matmul(*args) if len(args) == 2 else None


def reduction(app, args) -> Optional[Shape]:
    """A reduction over everything or over one constant axis (positional or ``axis=``), the axis dropped, or
    kept as ``ONE`` with ``keepdims=True``."""
    keepdims = app.keywords.get("keepdims", gast.Constant(value=False, kind=None))
    if not (isinstance(keepdims, gast.Constant) and keepdims.value in (False, True)):
        return None
    if not args or set(app.keywords) - {"axis", "keepdims"} or len(app.args) > 2:
        return None
    axis, shape = argument(app, 1, "axis"), args[0]
    if is_none(axis) and not keepdims.value:
        return SCALAR
    if shape is None or not (is_none(axis) or isinstance(axis, gast.Constant) and isinstance(axis.value, int)):
        return None
    if is_none(axis):
        return (ONE,) * len(shape)
    if not -len(shape) <= axis.value < len(shape):  # NumPy's AxisError (a 0-d array's too): no shape
        return None
    k = axis.value % len(shape)
    return shape[:k] + ((ONE,) if keepdims.value else ()) + shape[k + 1:]


def reversed_axes(app, args) -> Optional[Shape]:
    """``np.transpose(a)``: the axes reversed."""
    return tuple(reversed(args[0])) if len(args) == 1 and args[0] is not None else None


def same_as(position: int, axis_at: Optional[int] = None, axis_given: bool = False):
    """The rule ``the shape of argument position`` (where the axis at ``axis_at``, if named, is absent or
    None, or with ``axis_given`` where it is given)."""
    def rule(app, args):
        if len(args) <= position:
            return None
        if axis_at is not None and is_none(argument(app, axis_at, "axis")) == axis_given:
            return None
        return args[position]

    return rule


def _axis(app, rank: int) -> Optional[int]:
    """The constant ``axis`` of a join (positional second, or the keyword; 0 without), counted from the front
    of ``rank`` axes; None where it is not a constant in range."""
    axis, sign = argument(app, 1, "axis"), 1
    if axis is None:
        return 0
    if isinstance(axis, gast.UnaryOp) and isinstance(axis.op, gast.USub):  # ``axis=-1``
        axis, sign = axis.operand, -1
    if not (isinstance(axis, gast.Constant) and isinstance(axis.value, int) and not isinstance(axis.value, bool)):
        return None
    value = sign * axis.value
    return value % rank if -rank <= value < rank else None


def _concatenated(app, args) -> Optional[Shape]:
    """``np.concatenate((a, b), axis)``: the items' dims, the axis's the sum of theirs (where at most one of
    them has a symbol); unknown where the items' other dims are not the same ones."""
    items = kinds.items_of(args)
    if items is None or set(app.keywords) - {"axis"} or len({len(s) for s in items}) != 1 or not items[0]:
        return None
    k = _axis(app, len(items[0]))
    if k is None or len({s[:k] + s[k + 1:] for s in items}) != 1:
        return None
    symbols = [s[k][0] for s in items if s[k][0]]
    if len(symbols) > 1:
        return None
    along: Dim = (symbols[0] if symbols else "", sum(s[k][1] for s in items))
    return items[0][:k] + (along,) + items[0][k + 1:]


def _stacked(app, args) -> Optional[Shape]:
    """``np.stack((a, b), axis)``: the items' shape (the same one), a new axis of their number at ``axis``."""
    items = kinds.items_of(args)
    if items is None or set(app.keywords) - {"axis"} or len(set(items)) != 1:
        return None
    k = _axis(app, len(items[0]) + 1)
    return None if k is None else items[0][:k] + (("", len(items)),) + items[0][k:]


def _array_of(app, args) -> Optional[Shape]:
    """``np.array([v, w])`` (a list or tuple written out, no other argument): ``np.stack``'s shape of its
    items; unknown for anything else."""
    if len(app.args) != 1 or app.keywords or not isinstance(app.args[0], (gast.List, gast.Tuple)):
        return None
    return _stacked(app, args)


concatenated = kinds.OfItems(_concatenated)
stacked = kinds.OfItems(_stacked)
array_of = kinds.OfItems(_array_of)


def filled(app, args) -> Optional[Shape]:
    """``np.zeros(shape)`` (``np.ones``, ``np.empty``, ``np.full``) of a shape written as numbers: those
    lengths; unknown for one computed at run time."""
    shape = argument(app, 0, "shape")
    lengths = shape.elts if isinstance(shape, gast.Tuple) else [shape]
    if not all(isinstance(n, gast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool)
               and n.value >= 0 for n in lengths):
        return None
    return tuple(("", n.value) for n in lengths)
