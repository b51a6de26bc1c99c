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
