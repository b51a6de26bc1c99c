"""What is known of array extents and integer indices at each statement (for ``run_time_checks``).

Reads A-normal form in order and keeps facts that hold there:

- equal sizes: ``n = x.shape[1]`` (``t = x.shape; n = t[1]``), ``n = len(x)`` (axis 0), ``m = n``;
  ``y = np.empty(n)``, ``np.zeros((n, 3))``, ``np.ones(x.shape)``; ``y = np.zeros_like(x)``, ``x.copy()``
  or ``y = x`` (every axis of ``y`` as long as ``x``'s);
- offsets: ``k = i + 1``, ``k = n - 1`` (an integer name is another plus a constant);
- loop indices: in the body of ``for i in range(a, b)`` (atoms), ``a <= i < b``, and ``b > a``;
- minimal extents: once ``x[3]`` has been checked, ``x`` has 4 entries or more along that axis; an
  index once checked stays in bounds;
- arrays of one shape, for broadcasts only: ``x[1:]`` and ``x[:-1]``, ``2.0 * y``, ``a - b`` of such.

A fact about a name goes when the name is assigned again; a loop's body starts from the facts that no
statement of the loop can undo. ``in_bounds`` answers whether an index is proven in bounds, ``span``
how one check before a loop can stand for the checks of every iteration.
"""
from __future__ import annotations

import copy
from typing import Dict, Iterable, List, Optional, Set, Tuple, Union

import gast

from numbax.ast_passes.anf import MODULES
from numbax.ast_passes.tree_copy import walk

Term = Union[str, int, Tuple[str, int]]  # an integer name, a constant, or an array's extent ``(x, axis)``
Affine = Tuple[Optional[Term], int]  # ``term + c`` (``(None, c)``: the constant ``c``)
_SIZED = {"empty", "zeros", "ones", "full"}  # ``np.zeros(n)``: the first argument is the shape
_LIKE = {"empty_like", "zeros_like", "ones_like", "full_like", "copy"}  # ``np.zeros_like(x)``: x's shape
_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.FloorDiv, gast.Mod, gast.Pow)


def rebound_names(node: gast.AST) -> Set[str]:
    """The names a statement (with its blocks) binds again (an update through a subscript keeps the shape)."""
    return {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _name(node: gast.expr) -> Optional[str]:
    return node.id if isinstance(node, gast.Name) else None


def _int(node: gast.expr) -> Optional[int]:
    """The value of an integer constant (``-1`` is ``USub`` of one), else None."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and _int(node.operand) is not None:
        return -_int(node.operand)
    return node.value if isinstance(node, gast.Constant) and type(node.value) is int else None


def _numpy(call: gast.expr) -> Optional[str]:
    """``zeros`` for ``np.zeros(...)``, ``copy`` for ``x.copy()`` too; else None."""
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)):
        return None
    owner = call.func.value
    if _name(owner) in MODULES:
        return call.func.attr
    return "copy" if call.func.attr == "copy" and _name(owner) and not call.args else None


def range_bounds(stmt: gast.stmt) -> Optional[Tuple[gast.expr, gast.expr]]:
    """``(start, stop)`` of ``for i in range(start, stop)`` (``range(stop)``: start 0), else None."""
    call = stmt.iter if isinstance(stmt, gast.For) and isinstance(stmt.target, gast.Name) else None
    if not (isinstance(call, gast.Call) and _name(call.func) == "range" and 1 <= len(call.args) <= 2
            and not call.keywords):
        return None
    return (call.args[0] if len(call.args) == 2 else gast.Constant(value=0, kind=None)), call.args[-1]


def _merged(classes: List[Set], a, b) -> List[Set]:
    """``classes`` (disjoint sets of things known equal) once ``a`` and ``b`` are known equal."""
    merged = {a, b}.union(*[s for s in classes if a in s or b in s])
    return [s for s in classes if not s & merged] + [merged]


def _number(node: gast.expr) -> Optional[float]:
    """The value of a numeric constant (not a bool), else None."""
    value = _int(node)
    if value is None and isinstance(node, gast.Constant) and type(node.value) is float:
        value = node.value
    return value


def _trimmed(index: gast.expr) -> Optional[str]:
    """``"-k"`` for a slice ``[s:e]`` of constants giving ``max(len - k, 0)`` entries (``[1:]``, ``[:-1]``,
    ``[2:-1]``), else None."""
    if not isinstance(index, gast.Slice) or index.step is not None:
        return None
    start = 0 if index.lower is None else _int(index.lower)
    stop = 0 if index.upper is None else _int(index.upper)
    if start is None or stop is None or start < 0 or stop > 0 or index.upper is not None and stop == 0:
        return None
    return f"-{start - stop}"


def _mentions(term: Optional[Term], names: Set[str]) -> bool:
    """Whether ``term`` reads one of ``names``."""
    return (term[0] if isinstance(term, tuple) else term) in names


def _carried(loop: gast.For, rebound: Set[str]) -> List[str]:
    """The names other than the index ``i`` that ``loop`` assigns only as ``name = i`` (``i`` assigned by
    the loop alone)."""
    index = loop.target.id
    stores = [n for n in walk(loop) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]
    copies = {id(a.targets[0]) for a in walk(loop) if isinstance(a, gast.Assign) and len(a.targets) == 1
              and _name(a.value) == index}
    if sum(1 for n in stores if n.id == index) != 1:
        return []
    return [name for name in rebound - {index} if all(id(n) in copies for n in stores if n.id == name)]


class Extents:
    """The facts that hold at one point of a function (see the module docstring)."""

    def __init__(self):
        self.sizes: List[Set[Term]] = []  # each set: terms known equal
        self.like: List[Set[str]] = []  # each set: arrays known to have one shape
        self.shapes: Dict[str, str] = {}  # ``t = x.shape``: t -> x
        self.offsets: Dict[str, Affine] = {}  # ``k = i + 1``: k -> (i, 1)
        self.loops: Dict[str, Tuple[Affine, Affine]] = {}  # ``start <= i < stop``
        self.minimum: Dict[Term, int] = {}  # a term at least this large
        self.checked: Set[Tuple[str, int, Affine]] = set()  # ``(x, axis, index)`` already checked
        self.aliases: Dict[str, str] = {}  # ``y = x``: y -> x (the same object)
        self.operands: List[Set[Union[str, Tuple[str, str]]]] = []  # arrays of one shape, for ``broadcasts``

    def copy(self) -> "Extents":
        return copy.deepcopy(self)

    # ---- facts from statements

    def assign(self, stmt: gast.stmt) -> None:
        """Update the facts after ``stmt``, a statement without blocks."""
        self.forget(rebound_names(stmt))
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            return
        target, value = stmt.targets[0].id, stmt.value
        self._elementwise(target, value)
        if isinstance(value, gast.Attribute) and value.attr == "shape" and _name(value.value):
            self.shapes[target] = value.value.id
        elif isinstance(value, gast.Subscript) and _name(value.value) in self.shapes and _int(value.slice) is not None:
            self._equate(target, (self.shapes[value.value.id], _int(value.slice)))
        elif isinstance(value, gast.Call) and _name(value.func) == "len" and len(value.args) == 1 and \
                _name(value.args[0]):
            self._equate(target, (value.args[0].id, 0))
        elif isinstance(value, gast.Name):
            self._copy(target, value.id)
        elif isinstance(value, (gast.Constant, gast.BinOp)):
            self._offset(target, value)
        elif _numpy(value) in _LIKE and not value.keywords:
            source = value.args[0] if value.args else value.func.value
            if _name(source):
                self._same_shape(target, source.id)
        elif _numpy(value) in _SIZED and value.args and not value.keywords:
            self._shaped(target, value.args[0])

    def _copy(self, target: str, source: str) -> None:
        self._same_shape(target, source)
        self._equate(target, source)
        self.offsets[target] = self.offsets.get(source, (source, 0))
        self.aliases[target] = self.aliases.get(source, source)
        if source in self.shapes:
            self.shapes[target] = self.shapes[source]

    def _offset(self, target: str, value: gast.expr) -> None:
        """``k = 3``, ``k = i + 1``, ``k = n - 1``."""
        if _int(value) is not None:
            self._equate(target, _int(value))
            self.offsets[target] = (None, _int(value))
            return
        if not isinstance(value, gast.BinOp) or not isinstance(value.op, (gast.Add, gast.Sub)) or \
                _int(value.right) is None:
            return
        base = self.affine(value.left)
        if base is not None:
            shift = _int(value.right) if isinstance(value.op, gast.Add) else -_int(value.right)
            self.offsets[target] = (base[0], base[1] + shift)

    def _shaped(self, target: str, shape: gast.expr) -> None:
        """``y = np.zeros(shape)``: ``shape`` an integer atom, a tuple of them or another array's shape."""
        if _name(shape) in self.shapes:
            self._same_shape(target, self.shapes[shape.id])
            return
        parts = shape.elts if isinstance(shape, gast.Tuple) else [shape]
        for axis, part in enumerate(parts):
            if _name(part) or _int(part) is not None:
                self._equate((target, axis), _name(part) or _int(part))

    def _equate(self, a: Term, b: Term) -> None:
        self.sizes = _merged(self.sizes, a, b)

    def _same_shape(self, a: str, b: str) -> None:
        self.like = _merged(self.like, a, b)

    def _elementwise(self, target: str, value: gast.expr) -> None:
        """``y = x[1:]``, ``x[:-1]`` (of shape ``len(x) - 1`` along axis 0), ``y = 2.0 * x``, ``-x``, ``a - b``
        of arrays of one shape: ``y``'s shape, where ``y`` is an array (for ``broadcasts``; a list repeats
        under ``*``, so indices learn nothing from it)."""
        if isinstance(value, gast.Subscript) and _name(value.value) and _trimmed(value.slice) is not None:
            self.operands = _merged(self.operands, target, (value.value.id, _trimmed(value.slice)))
        elif isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub) and _name(value.operand):
            self.operands = _merged(self.operands, target, value.operand.id)
        elif isinstance(value, gast.BinOp) and isinstance(value.op, _ARITHMETIC):
            left, right = (_name(v) or _number(v) for v in (value.left, value.right))
            names = [n for n in (left, right) if isinstance(n, str)]
            if len(names) == 1 and None not in (left, right) or len(names) == 2 and self.broadcasts(*names):
                self.operands = _merged(self.operands, target, names[0])

    def broadcasts(self, a: str, b: str) -> bool:
        """Whether the arrays ``a`` and ``b`` are known to have one shape."""
        found, grown = {a}, True
        while grown:
            more = set(found).union(*[s for s in self.like + self.operands if s & found])
            grown, found = len(more) > len(found), more
        return b in found

    def forget(self, names: Iterable[str]) -> None:
        """Drop every fact about ``names`` (assigned again)."""
        names = set(names)

        def gone(term) -> bool:
            return _mentions(term, names)

        self.sizes = [s for s in ({t for t in s if not gone(t)} for s in self.sizes) if len(s) > 1]
        self.like = [s for s in (s - names for s in self.like) if len(s) > 1]
        self.shapes = {k: v for k, v in self.shapes.items() if k not in names and v not in names}
        self.offsets = {k: v for k, v in self.offsets.items() if k not in names and not gone(v[0])}
        self.loops = {k: v for k, v in self.loops.items() if k not in names and not gone(v[0][0]) and not gone(v[1][0])}
        self.minimum = {k: v for k, v in self.minimum.items() if not gone(k)}
        self.checked = {c for c in self.checked if c[0] not in names and not gone(c[2][0])}
        self.aliases = {k: v for k, v in self.aliases.items() if k not in names and v not in names}
        self.operands = [s for s in ({t for t in s if not gone(t)} for s in self.operands) if len(s) > 1]

    def entering(self, stmt: gast.stmt, body: bool = True) -> "Extents":
        """The facts that hold inside ``stmt``'s ``body`` (else its ``orelse``): a loop may have assigned
        anything it assigns; in the body of ``for i in range(start, stop)``, ``start <= i < stop`` (their
        values when the loop began)."""
        inner = self.copy()
        if not isinstance(stmt, (gast.For, gast.While)):
            return inner
        rebound = rebound_names(stmt)
        inner.forget(rebound)
        bounds = range_bounds(stmt)
        if bounds is None or not body:
            return inner
        start, stop = (self._lasting(self.affine(b), rebound) for b in bounds)
        if start is None or stop is None:
            return inner
        inner.loops[stmt.target.id] = (start, stop)
        if start[0] is None and stop[0] is not None:  # the body runs: stop > start
            inner._at_least(stop[0], start[1] + 1 - stop[1])
        for name in _carried(stmt, rebound):  # ``best = 0`` before, only ``best = i`` in the loop
            first = self.offsets.get(name, (name, 0))
            if start[0] is None and first[0] is None and 0 <= first[1] <= start[1]:
                inner.loops[name] = (first, stop)
        return inner

    def _lasting(self, value: Optional[Affine], rebound: Set[str]) -> Optional[Affine]:
        """``value`` written in terms that the loop (assigning ``rebound``) leaves alone, or None."""
        if value is None or value[0] is None:
            return value
        for term in sorted(self.equal(value[0]), key=repr):
            if isinstance(term, int):
                return None, term + value[1]
            if not _mentions(term, rebound):
                return term, value[1]
        return None

    def _at_least(self, term: Term, bound: int) -> None:
        self.minimum[term] = max(self.minimum.get(term, bound), bound)

    # ---- questions

    def affine(self, node: gast.expr) -> Optional[Affine]:
        """An integer atom as ``name + c`` or a constant, or None."""
        if _int(node) is not None:
            return None, _int(node)
        name = _name(node)
        if name is None:
            return None
        return self.offsets.get(name, (name, 0))

    def equal(self, term: Term) -> Set[Term]:
        """The terms known equal to ``term`` (itself included)."""
        found, grown = {term}, True
        while grown:
            more = set(found).union(*[s for s in self.sizes if s & found])
            more |= {(b, t[1]) for t in more if isinstance(t, tuple) for s in self.like if t[0] in s for b in s}
            grown, found = len(more) > len(found), more
        return found

    def forms(self, term: Term) -> Set[Affine]:
        """``term`` as ``other + c`` in each way known (``n = k - 1``: ``(k, -1)``; a constant: ``(None, c)``)."""
        forms: Set[Affine] = set()
        for t in self.equal(term):
            forms.add((None, t) if isinstance(t, int) else (t, 0))
            if isinstance(t, str) and t in self.offsets:
                forms.add(self.offsets[t])
        return forms

    def least(self, term: Term) -> int:
        """The least value ``term`` can have (0 for an extent, which is never negative)."""
        bounds = [0]
        for base, shift in self.forms(term):
            if base is None:
                bounds.append(shift)
            else:
                bounds.extend(self.minimum[t] + shift for t in self.equal(base) if t in self.minimum)
        return max(bounds)

    def _below(self, value: Affine, size: Term) -> bool:
        """Whether ``value`` (``base + c``) is proven smaller than ``size``."""
        base, c = value
        if base is None:
            return c < self.least(size)
        return any(other is not None and base in self.equal(other) and c < shift for other, shift in self.forms(size))

    def in_bounds(self, array: str, axis: int, index: gast.expr) -> bool:
        """Whether ``index`` is proven to index ``array`` along ``axis`` (as ``check_index`` accepts)."""
        value = self.affine(index)
        if value is None:
            return False
        size = (array, axis)
        if any(t + (value,) in self.checked for t in self.equal(size) if isinstance(t, tuple)):
            return True
        name, c = value
        if name is None:
            return self.least(size) >= (c + 1 if c >= 0 else -c)
        if name not in self.loops:  # ``x[n - 1]`` with ``n = len(x)``: below, and not below ``-len(x)``
            return self._below(value, size) and any(
                other is not None and name in self.equal(other) and self.least(size) >= shift - c
                for other, shift in self.forms(size))
        (low, low_shift), (high, high_shift) = self.loops[name]
        if low is not None or not self._below((high, high_shift + c - 1), size):
            return False
        return low_shift + c >= 0 or self.least(size) >= -(low_shift + c)

    def note_checked(self, array: str, axis: int, index: gast.expr) -> None:
        """After ``check_index(array, index, axis)`` stands: the index stays in bounds, and a constant one
        says how long ``array`` is at least."""
        value = self.affine(index)
        if value is None:
            return
        self.checked.add((array, axis, value))
        if value[0] is None:
            self._at_least((array, axis), value[1] + 1 if value[1] >= 0 else -value[1])

    def span(self, loop: gast.For, array: str, index: gast.expr) -> Optional[Tuple[str, int, str]]:
        """``(x, scale, shift)``: ``index`` is ``scale * i + shift`` on every iteration of ``loop`` (``for i in
        range(...)``), for a ``shift`` (source text) that the loop does not change, into ``array``, which is
        ``x`` (a name the loop does not assign); else None."""
        rebound = rebound_names(loop)
        value = self.affine(index)
        array = array if array not in rebound else self.aliases.get(array)
        if array is None or array in rebound or value is None:
            return None
        if value[0] == loop.target.id and value[0] in self.loops:
            return array, 1, str(value[1])
        if _int(index) is not None or _name(index) and index.id not in rebound:
            return array, 0, index.id if _name(index) else str(_int(index))
        return None
