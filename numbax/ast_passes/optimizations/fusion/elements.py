"""Per-element expressions: what an elementwise array expression computes at one index of the loop nest.

At index ``j`` of a 1-D loop over the shape of ``x[1:]``, ``x[1:] - y`` is
``x[j + 1] - y[j]``: a name of that shape is indexed, a name whose shape
broadcasts to it is indexed by the indices of the axes it has and at 0 along
its axes of length one (a bias ``b[j1]``, a row maximum kept with
``keepdims=True``, ``m[j0, 0]``), a name of a dim that a joined dim of the
loop's shape joins (``symbolic.joining``: ``-y * z`` of a ``y`` and a ``z`` of
unrelated lengths) at the index clamped to its length, a basic slice becomes an
offset, scalars stay as they are, a name the loop already computes is its
scalar, and ``rt.unreduce(g, a, axis, keepdims)`` (the adjoint of a reduction)
is ``g`` read at the indices of the axes it kept. Any other part is hoisted out
of the loop into a name of its own when it depends on nothing the loop computes
or writes.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set

import gast

from numbax.ast_passes.analyses.nodes import assign, name, rt_call
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.shapes import axis_length
from numbax.ast_passes.optimizations.fusion.effects import loads, statement_effects
from numbax.ast_passes.optimizations.fusion.recompute import at
from numbax.ast_passes.optimizations.purity import is_pure
from numbax.ast_passes.tree_copy import copy_tree
from numbax.primitives.registry import elementwise_ufunc
from numbax.primitives.kinds import argument, is_none
from numbax.primitives.symbolic import ONE, within

_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)


def _offset(index: gast.expr, lower: Optional[gast.expr]) -> gast.expr:
    if lower is None or isinstance(lower, gast.Constant) and lower.value == 0:
        return index
    return gast.BinOp(left=index, op=gast.Add(), right=lower)


def broadcast_slots(shape, full) -> Optional[List[Optional[int]]]:
    """For each axis of ``shape``, the axis of ``full`` whose index it takes where ``shape`` broadcasts to
    ``full`` (NumPy's rules from the right), or None along an axis of length one (``ONE``) that ``full``
    stretches; None when it does not broadcast."""
    if shape is None or full is None or len(shape) > len(full):
        return None
    offset = len(full) - len(shape)
    slots: List[Optional[int]] = []
    for k, dim in enumerate(shape):
        if dim == full[offset + k]:
            slots.append(offset + k)
        elif dim == ONE:
            slots.append(None)
        else:
            return None
    return slots


def at_slots(array: str, slots: List[Optional[int]], index: List[str], ctx=None) -> gast.Subscript:
    """``array`` at the loop's ``index`` through ``slots`` (``broadcast_slots``): ``m[j0, 0]``."""
    parts = [name(index[k]) if k is not None else gast.Constant(value=0, kind=None) for k in slots]
    return gast.Subscript(value=name(array), slice=parts[0] if len(parts) == 1 else
                          gast.Tuple(elts=parts, ctx=gast.Load()), ctx=ctx or gast.Load())


class Trial:
    """One statement's attempt to join a group: its per-element expression, reads and hoisted parts."""

    def __init__(self, group):
        self.group = group
        self.facts = group.facts
        self.reads: Set[str] = set()      # names from before the loop, read element by element or whole
        self.hoisted: List[gast.stmt] = []
        self.references: Dict[str, gast.expr] = {}  # arrays of the group's shape it reads, for the loop's bounds
        self.writing = False  # translating the target of ``+=``: the arrays the loop writes may be named

    @property
    def _unreadable(self) -> Set[str]:
        """Names the loop cannot read element by element: sums not complete yet, arrays it writes into."""
        return self.group.accumulators if self.writing else self.group.accumulators | self.group.written_before

    def element(self, node: gast.expr) -> Optional[gast.expr]:
        """``node`` at the loop's index, or None when it is not elementwise over the group's shape."""
        shape = self.facts.shape(node)
        aval = self.facts.aval(node)
        if isinstance(node, gast.Constant):
            return node if isinstance(node.value, (int, float)) and not isinstance(node.value, bool) else None
        if isinstance(node, gast.Name):
            return self._name(node.id, shape, aval)
        if shape is None or aval is None or aval[0] not in "if" or shape not in ((), self.group.shape):
            return None
        if not shape:
            return self._scalar(node)
        if isinstance(node, gast.BinOp) and isinstance(node.op, _OPERATORS):
            return self._combine(node, [node.left, node.right],
                                 lambda a, b: gast.BinOp(left=a, op=node.op, right=b))
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            return self._combine(node, [node.operand], lambda a: gast.UnaryOp(op=node.op, operand=a))
        if isinstance(node, gast.Subscript):
            return self._subscript(node)
        app = application(node) if isinstance(node, gast.Call) else None
        if app is not None and elementwise_ufunc(app.key) and not app.keywords and app.key.nin == len(app.args):
            return self._combine(node, app.args, lambda *a: gast.Call(func=node.func, args=list(a), keywords=[]))
        if app is not None and app.name == "rt.unreduce":
            return self._unreduce(node, app)
        if app is not None and app.name == "rt.chooser_weights":
            return self._ties(node, app)
        return self._hoist(node)

    def _unreduce(self, node: gast.Call, app) -> Optional[gast.expr]:
        """``rt.unreduce(g, a, axis, keepdims)`` at the index: ``g`` broadcast (a scalar ``g``, or one whose
        reduced axis stayed, of length one), or ``g`` read at the indices of the axes other than a constant
        ``axis`` that ``keepdims=False`` dropped; else hoisted."""
        g, axis, keepdims = app.args[0], argument(app, 2, "axis"), argument(app, 3, "keepdims")
        if app.keywords or not all(isinstance(a, gast.Constant) for a in app.args[2:]):
            return self._hoist(node)
        if is_none(axis) or keepdims is not None and keepdims.value or self.facts.shape(g) == ():
            return self.element(g)
        rank = len(self.group.shape)
        shape = self.facts.shape(g)
        if not isinstance(axis.value, int) or isinstance(axis.value, bool) or not -rank <= axis.value < rank or \
                not isinstance(g, gast.Name) or g.id in self._unreadable | set(self.group.defined) or \
                shape is None or len(shape) != rank - 1:
            return self._hoist(node)
        kept = [k for k in range(rank) if k != axis.value % rank]
        if any(shape[n] != self.group.shape[k] for n, k in enumerate(kept)):
            return self._hoist(node)
        self.reads.add(g.id)
        return at_slots(g.id, kept, self.group.index)

    def _ties(self, node: gast.Call, app) -> Optional[gast.expr]:
        """``rt.chooser_weights(a, m, axis, keepdims)`` at the index: ``share if a[j] == m else 0.0 * share``,
        ``share`` counted once before the loop, for the whole array (a scalar ``m``, ``rt.tie_share``) or
        each lane along a constant ``axis`` (``rt.tie_shares``, read as ``rt.unreduce`` would read it);
        else hoisted. Where no element equals ``m`` (a NaN), ``share`` is inf and the weights NaN, as
        ``rt.chooser_weights`` gives them."""
        array, extreme = app.args[0], app.args[1]
        axis, keepdims = argument(app, 2, "axis"), argument(app, 3, "keepdims")
        rank = len(self.group.shape)
        if app.keywords or not all(isinstance(a, gast.Constant) for a in app.args[2:]):
            return self._hoist(node)
        keepdims = keepdims or gast.Constant(value=False, kind=None)
        if is_none(axis) and not keepdims.value and self.facts.shape(extreme) == ():
            value = self.element(extreme)
            share = self._hoist(rt_call("tie_share", copy_tree(array), copy_tree(extreme)), scalar=True)
        elif isinstance(axis.value, int) and not isinstance(axis.value, bool) and rank >= 2 and \
                -rank <= axis.value < rank:
            value = self.element(rt_call("unreduce", copy_tree(extreme), copy_tree(array), copy_tree(axis),
                                         copy_tree(keepdims)))
            lanes = self._hoist(rt_call("tie_shares", copy_tree(array), copy_tree(extreme), copy_tree(axis),
                                        copy_tree(keepdims)), scalar=True)
            kept = [k for k in range(rank) if k != axis.value % rank]
            share = None if lanes is None else at_slots(lanes.id, kept, self.group.index)
        else:
            return self._hoist(node)
        element = self.element(array)
        if element is None or value is None or share is None:
            return None
        test = gast.Compare(left=element, ops=[gast.Eq()], comparators=[value])
        nan_or_zero = gast.BinOp(left=gast.Constant(value=0.0, kind=None), op=gast.Mult(), right=copy_tree(share))
        return gast.IfExp(test=test, body=share, orelse=nan_or_zero)

    def _combine(self, node, parts, build) -> Optional[gast.expr]:
        elements = [self.element(p) for p in parts]
        return None if any(e is None for e in elements) else build(*elements)

    def target(self, written: gast.expr) -> Optional[gast.Subscript]:
        """The element of the array from before the loop that ``written += ...`` writes (a name, or a basic
        slice of one), or None."""
        self.writing = True
        element = self.element(written)
        if self.hoisted:  # a copy made before the loop (``a[idx]`` of an index array): writes would be lost
            return None
        return element if isinstance(element, gast.Subscript) else None

    def _name(self, identifier: str, shape, aval) -> Optional[gast.expr]:
        group = self.group
        if identifier in self._unreadable:
            return None
        if identifier in group.defined:
            return copy_tree(group.defined[identifier])
        again = self._computed_again(identifier, shape)
        if again is not None:
            return again
        if identifier in group.views and shape == group.shape:
            return self.element(group.views[identifier])
        if aval is None or aval[0] not in "if":
            return None
        slots = broadcast_slots(shape, group.shape) if shape not in ((), group.shape) else None
        if shape not in ((), group.shape) and slots is None:
            read = self._broadcast_read(identifier, shape)
            if read is not None:
                self.reads.add(identifier)
            return read
        self.reads.add(identifier)
        if not shape:
            return name(identifier)
        if slots is not None:  # broadcast to the group's shape (a bias, a row's maximum)
            return at_slots(identifier, slots, group.index)
        self.references.setdefault(identifier, name(identifier))
        return gast.Subscript(value=name(identifier), slice=self.group.index_tuple(), ctx=gast.Load())

    def _broadcast_read(self, identifier: str, shape) -> Optional[gast.expr]:
        """An array from before the loop whose dims are the last of the group's or within them
        (``symbolic.joining``), read as NumPy broadcasts it: at the loop's index along an equal dim, at the index
        clamped to its length along a dim within a join (``min(j, t.shape[0] - 1)``: 0 where it is 1); None for
        any other shape."""
        group = self.group
        if not shape or len(shape) > len(group.shape):
            return None
        skipped = len(group.shape) - len(shape)
        parts: List[gast.expr] = []
        for axis, (dim, whole) in enumerate(zip(shape, group.shape[skipped:])):
            index = name(group.index[skipped + axis])
            if dim == whole:
                parts.append(index)
            elif within(dim, whole):
                last = gast.BinOp(left=axis_length(name(identifier), axis), op=gast.Sub(),
                                  right=gast.Constant(value=1, kind=None))
                parts.append(gast.Call(func=name("min"), args=[index, last], keywords=[]))
            else:
                return None
        return gast.Subscript(value=name(identifier), slice=parts[0] if len(parts) == 1 else
                              gast.Tuple(elts=parts, ctx=gast.Load()), ctx=gast.Load())

    def _computed_again(self, identifier: str, shape) -> Optional[gast.expr]:
        """An element of an array an earlier loop of the block computed, computed again (``recompute``)."""
        group = self.group
        element = group.recomputable.get(identifier)
        if element is None or shape != group.shape or element.shape != group.shape:
            return None
        written = set()
        for stmt in group.taken:
            written |= set(statement_effects(stmt).writes)
        if element.reads & self.facts.aliases.closure(written):
            return None
        self.reads |= element.reads
        return at(element, [name(i) for i in group.index])

    def _subscript(self, node: gast.Subscript) -> Optional[gast.expr]:
        """A basic slice of a name from before the loop: its base at the loop's index plus the offsets."""
        if not isinstance(node.value, gast.Name) or node.value.id in self.group.defined:
            return self._hoist(node)
        if node.value.id in self._unreadable:
            return None
        parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        base_aval = self.facts.aval(node.value)
        if base_aval is None or len(parts) > base_aval[1]:
            return None
        index = list(self.group.index)
        out = []
        for part in parts:
            if isinstance(part, gast.Slice):
                if part.step is not None or not index or not (
                        part.lower is None or isinstance(part.lower, gast.Constant) and isinstance(part.lower.value, int)
                        and part.lower.value >= 0):
                    return self._hoist(node)
                out.append(_offset(name(index.pop(0)), part.lower))
            elif self.facts.aval(part) == ("i", 0) and self._independent(part):
                out.append(part)
            else:
                return self._hoist(node)
        out += [name(i) for i in index]
        if len(out) != base_aval[1]:
            return None
        self.reads |= loads(node)
        self.references.setdefault(node.value.id, node)
        return gast.Subscript(value=node.value, slice=out[0] if len(out) == 1 else gast.Tuple(elts=out, ctx=gast.Load()),
                              ctx=gast.Load())

    def _scalar(self, node: gast.expr) -> Optional[gast.expr]:
        """A scalar from before the loop: kept in place when cheap, else computed once before the loop."""
        node = self._sized_by_reference(node)
        if not self._independent(node):
            return None
        self.reads |= loads(node)
        if any(isinstance(n, gast.Call) for n in gast.walk(node)):
            return self._hoist(node)
        return node

    def _sized_by_reference(self, node: gast.expr) -> gast.expr:
        """``v.size`` of an array the loop computes read off an array from before the loop of its shape."""
        references = {**self.group.references, **self.references}
        if not references:
            return node
        reference = next(iter(references.values()))

        class Swap(gast.NodeTransformer):
            def visit_Attribute(inner, attribute):
                value = attribute.value
                if attribute.attr in ("size", "shape") and isinstance(value, gast.Name) and \
                        value.id in self.group.defined and self.facts.shape(value) == self.group.shape:
                    return gast.Attribute(value=copy_tree(reference), attr=attribute.attr, ctx=gast.Load())
                return inner.generic_visit(attribute)

        return Swap().visit(copy_tree(node))

    def _independent(self, node: gast.expr) -> bool:
        group = self.group
        read = loads(node)
        return is_pure(node) and not read & (set(group.defined) | group.accumulators | group.written_before)

    def _hoist(self, node: gast.expr, scalar: bool = False) -> Optional[gast.expr]:
        """``node`` computed once before the loop into a new name, read at the loop's index if it is an array
        (``scalar``: it is not)."""
        if not self._independent(node):
            return None
        app = application(node) if isinstance(node, gast.Call) else None
        product = isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult)
        label = app.name.split(".")[-1] if app is not None else "product" if product else "value"
        hoisted = self.facts.namer.new(label)
        self.hoisted.append(assign(hoisted, node))
        self.reads |= loads(node)
        if scalar or self.facts.shape(node) == ():
            return name(hoisted)
        self.references.setdefault(hoisted, name(hoisted))
        return gast.Subscript(value=name(hoisted), slice=self.group.index_tuple(), ctx=gast.Load())
