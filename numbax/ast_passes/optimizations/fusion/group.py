"""A group: statements of one block fused into one loop nest over one symbolic shape.

Statements join in order. An elementwise statement over the group's shape
joins the loop (``try_fuse``); a statement that commutes with the fused
statements before it moves before the loop, one that commutes with those
after it moves after the loop (``try_move``); anything else ends the group.
``emit`` writes the result: the statements moved before, accumulators set to
zero, arrays read after the loop allocated, the loop nest, and the statements
moved after.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.nodes import assign, name
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.shapes import dim_length
from numbax.ast_passes.optimizations.fusion.effects import Effects, statement_effects
from numbax.ast_passes.optimizations.fusion.effects import loads
from numbax.ast_passes.optimizations.fusion.elements import Trial, at_slots, broadcast_slots
from numbax.ast_passes.tree_copy import copy_tree
from numbax.primitives.kinds import argument

_ACCUMULATE = (gast.Add, gast.Sub)
_ELEMENTWISE = (gast.BinOp, gast.UnaryOp)


def _zeros_of(value: gast.expr) -> bool:
    """``rt.zeros_like(x)``: a cotangent that starts at zero."""
    app = application(value) if isinstance(value, gast.Call) else None
    return app is not None and app.name == "rt.zeros_like" and len(app.args) == 1 and not app.keywords


def _sum_operand(value: gast.expr) -> Optional[gast.expr]:
    """``a`` in ``np.sum(a)`` or ``a.sum()`` (a sum over every element; ``axis=None``, ``keepdims=False``
    spelled out or not), else None."""
    app = application(value) if isinstance(value, gast.Call) else None
    defaults = app is not None and all(
        key in ("axis", "keepdims") and isinstance(v, gast.Constant) and v.value in (None, False)
        for key, v in app.keywords.items())
    if app is None or not defaults or len(app.args) != 1 or app.name not in ("np.sum", ".sum()"):
        return None
    return app.args[0]


def _axis_sum(value: gast.expr) -> Optional[Tuple[gast.expr, int, bool]]:
    """``(a, k, keepdims)`` in ``np.sum(a, axis=k)`` or ``a.sum(k)`` of a constant int ``k``, ``keepdims=``
    a constant or not given; else None."""
    app = application(value) if isinstance(value, gast.Call) else None
    if app is None or app.name not in ("np.sum", ".sum()") or len(app.args) > 2 or \
            set(app.keywords) - {"axis", "keepdims"}:
        return None
    axis, keepdims = argument(app, 1, "axis"), app.keywords.get("keepdims", gast.Constant(value=False, kind=None))
    if not (isinstance(axis, gast.Constant) and type(axis.value) is int and isinstance(keepdims, gast.Constant)
            and keepdims.value in (False, True)):
        return None
    return app.args[0], axis.value, bool(keepdims.value)


def _unbroadcast_operands(value: gast.expr) -> Optional[Tuple[gast.expr, gast.expr]]:
    """``(g, x)`` in ``rt.unbroadcast(g, x)``, else None."""
    app = application(value) if isinstance(value, gast.Call) else None
    if app is None or app.keywords or len(app.args) != 2 or app.name != "rt.unbroadcast":
        return None
    return app.args[0], app.args[1]


def _computes(value: gast.expr) -> bool:
    """An operation the loop computes per element (a view, a copy or a runtime helper's array is not one)."""
    if isinstance(value, gast.BinOp):
        return isinstance(value.op, (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow))  # not ``@``
    if isinstance(value, gast.UnaryOp):
        return isinstance(value.op, (gast.USub, gast.UAdd))
    app = application(value) if isinstance(value, gast.Call) else None
    return app is not None and (type(app.key).__name__ == "ufunc" or app.name == "rt.unreduce")


def _loaded(node: gast.expr) -> gast.expr:
    """A copy of a name or subscript to read (a target's shape and element are a load's)."""
    out = copy_tree(node)
    out.ctx = gast.Load()
    return out


def _view(stmt: gast.stmt) -> Optional[Tuple[str, gast.Subscript]]:
    if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) and \
            isinstance(stmt.value, gast.Subscript) and isinstance(stmt.value.value, gast.Name):
        return stmt.targets[0].id, stmt.value
    return None


def update_views(views: Dict[str, gast.Subscript], stmt: gast.stmt) -> None:
    """After ``stmt`` runs: forget views whose names or operands it assigns; learn the view it defines."""
    effects = statement_effects(stmt)
    written = effects.writes if effects is not None else None
    for view in list(views):
        if written is None or view in written or loads(views[view]) & written:
            del views[view]
    defined = _view(stmt)
    if defined is not None and defined[0] not in loads(defined[1]):
        views[defined[0]] = defined[1]


class Group:
    """The statements fused so far, and what the loop reads, defines and writes."""

    def __init__(self, facts, views: Dict[str, gast.Subscript], recomputable=None):
        self.facts = facts
        self.views = dict(views)
        self.recomputable = dict(recomputable or {})  # array -> an earlier loop's ``recompute.Element``
        self.shape: Optional[tuple] = None
        self.index: List[str] = []
        self.defined: Dict[str, gast.expr] = {}  # array -> its element in the loop: a scalar name or constant
        self.accumulators: Set[str] = set()    # sums, complete only after the loop
        self.partials: Dict[str, List[Optional[int]]] = {}  # arrays summed into -> ``broadcast_slots``
        self.scalars: Set[str] = set()         # the names the group made for elements
        self.written_before: Set[str] = set()  # arrays from before the loop that it writes, aliases included
        self.references: Dict[str, gast.expr] = {}
        self.reads: Set[str] = set()           # names from before the loop that it reads
        self.read_then_defined: Set[str] = set()
        self.body: List[gast.stmt] = []
        self.hoisted: List[gast.stmt] = []
        self.deferred: List[Tuple[gast.stmt, Effects]] = []
        self.taken: List[gast.stmt] = []       # every statement the group took, in the original order
        self.fused: List[gast.stmt] = []

    def index_tuple(self) -> gast.expr:
        """The loop nest's index: ``j``, or ``(j0, j1)``."""
        names = [name(i) for i in self.index]
        return names[0] if len(names) == 1 else gast.Tuple(elts=names, ctx=gast.Load())

    def _start(self, shape) -> bool:
        if self.shape is not None:
            return shape == self.shape
        if not shape:
            return False
        self.shape = shape
        labels = ["j"] if len(shape) == 1 else [f"j{k}" for k in range(len(shape))]
        self.index = [self.facts.namer.new(label) for label in labels]
        return True

    def _conflicts(self, a: Effects, b: Effects) -> bool:
        closure = self.facts.aliases.closure
        a_reads, a_writes = closure(a.reads), closure(a.writes)
        b_reads, b_writes = closure(b.reads), closure(b.writes)
        return bool(a_writes & (b_reads | b_writes) or a_reads & b_writes)

    def _effects(self) -> Effects:
        return Effects(frozenset(self.reads),
                       frozenset(set(self.defined) | self.accumulators | self.written_before))

    def try_fuse(self, stmt: gast.stmt) -> bool:
        """Add ``stmt`` to the loop if it is elementwise over the group's shape; whether it was."""
        started = self.shape is None
        fused = self._fuse(stmt)
        if not fused and started:
            self.shape, self.index = None, []
        return fused

    def _fuse(self, stmt: gast.stmt) -> bool:
        facts = self.facts
        if facts.varying is not None and not loads(stmt) & facts.varying:
            return False  # the same in every call: left to ``hoist_invariants``
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
            target = stmt.targets[0].id
            operand = _sum_operand(stmt.value)
            if operand is not None:
                if facts.avals.get(target) != ("f", 0) or target in self.reads | set(self.defined) | \
                        self.accumulators:
                    return False
                return self._join(stmt, operand, target, "sum")
            partial = self._partial(target, stmt.value)
            if partial is not None:
                return self._join(stmt, partial[0], target, "partial", slots=partial[1])
            if _zeros_of(stmt.value):
                return self._zeros(stmt, target)
            aval = facts.avals.get(target)
            if aval is None or aval[0] != "f" or aval[1] == 0 or target in self.accumulators or \
                    not (_computes(stmt.value) or isinstance(stmt.value, gast.Name) and stmt.value.id in self.defined):
                return False
            return self._join(stmt, stmt.value, target, "define")
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name) and \
                isinstance(stmt.op, _ACCUMULATE):
            aval = facts.avals.get(stmt.target.id)
            if aval is None or aval[0] != "f" or aval[1] == 0:
                return False
            return self._join(stmt, stmt.value, stmt.target.id, "accumulate")
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript) and \
                isinstance(stmt.op, _ACCUMULATE) and isinstance(stmt.target.value, gast.Name):
            if self._scatter(stmt):
                return True
            base = stmt.target.value.id
            aval = facts.avals.get(base)
            if aval is None or aval[0] != "f" or base in self.defined:
                return False
            return self._join(stmt, stmt.value, base, "accumulate", written=stmt.target)  # ``a[1:] += g``
        return False

    def _zeros(self, stmt: gast.Assign, target: str) -> bool:
        """``a = rt.zeros_like(x)``: ``a``'s element is 0.0, no array made (unless code after the loop reads it)."""
        aval, shape = self.facts.avals.get(target), self.facts.shape(stmt.value)
        if aval is None or aval[0] != "f" or not shape or target in self.accumulators or not self._start(shape):
            return False
        if target in self.reads:
            self.read_then_defined.add(target)
        self.defined[target] = gast.Constant(value=0.0, kind=None)
        self._taken(stmt)
        return True

    def _scatter(self, stmt: gast.AugAssign) -> bool:
        """``a[k] += v`` (scalar ints ``k``, scalar ``v``) into an array the loop defines: at the loop's index
        ``a`` gains ``v if j == k else 0.0``, ``k`` wrapped once before the loop as NumPy wraps a negative
        index (a cross-entropy's one-hot cotangent, with no array zeroed and written per row)."""
        facts, target = self.facts, stmt.target
        array = target.value.id if isinstance(target.value, gast.Name) else None
        parts = target.slice.elts if isinstance(target.slice, gast.Tuple) else [target.slice]
        if array not in self.defined or facts.aliases.closure({array}) != {array} or len(parts) != len(self.shape) \
                or facts.shape(stmt.value) != () or \
                not all(isinstance(p, gast.Name) and facts.aval(p) == ("i", 0) for p in parts):
            return False
        extents = [dim_length(dim, facts.unchanged_params) for dim in self.shape]
        trial = Trial(self)
        value = trial.element(stmt.value)
        reads = loads(stmt.value) | {p.id for p in parts}
        if value is None or any(e is None for e in extents) or \
                any(self._conflicts(Effects(frozenset(reads), frozenset({array})), d) for _, d in self.deferred):
            return False
        tests = []
        for part, extent, index in zip(parts, extents, self.index):
            wrapped = facts.namer.new(f"{part.id}_at")
            trial.hoisted.append(assign(wrapped, gast.BinOp(left=name(part.id), op=gast.Mod(), right=extent)))
            tests.append(gast.Compare(left=name(index), ops=[gast.Eq()], comparators=[name(wrapped)]))
        test = tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.And(), values=tests)
        before = self.defined[array]
        if isinstance(before, gast.Constant) and before.value == 0.0:  # the first: ``v`` or ``-v`` at k
            signed = value if isinstance(stmt.op, gast.Add) else gast.UnaryOp(op=gast.USub(), operand=value)
            element = gast.IfExp(test=test, body=signed, orelse=gast.Constant(value=0.0, kind=None))
        else:
            hit = gast.IfExp(test=test, body=value, orelse=gast.Constant(value=0.0, kind=None))
            element = gast.BinOp(left=copy_tree(before), op=stmt.op, right=hit)
        self.hoisted += trial.hoisted
        self.reads |= reads
        scalar = facts.namer.new(f"{array}_j")
        self.scalars.add(scalar)
        self.defined[array] = name(scalar)
        self.body.append(anno.copyanno(stmt, assign(scalar, element)))
        self._taken(stmt)
        return True

    def _partial(self, target: str, value: gast.expr) -> Optional[Tuple[gast.expr, List[Optional[int]]]]:
        """``(g, slots)`` for a new float array ``target`` that sums ``g`` over some of its axes: ``target =
        rt.unbroadcast(g, x)`` where ``x``'s shape broadcasts to ``g``'s (a bias's gradient, summed over the
        leading axes; a row maximum's, over an axis of length one), or ``target = np.sum(g, axis=k)`` of a
        constant ``k``, ``keepdims`` constant or not given. ``slots``: for each axis of ``target``, the axis
        of ``g`` whose index it takes, or None for an axis of length one (``elements.broadcast_slots``)."""
        aval = self.facts.avals.get(target)
        if aval is None or aval[0] != "f" or aval[1] == 0 or target in self.reads | set(self.defined) | \
                self.accumulators:
            return None
        operands = _unbroadcast_operands(value)
        if operands is not None:
            full, kept = self.facts.shape(operands[0]), self.facts.shape(operands[1])
            slots = broadcast_slots(kept, full) if kept and kept != full else None
            return None if slots is None else (operands[0], slots)
        summed = _axis_sum(value)
        full = self.facts.shape(summed[0]) if summed is not None else None
        if not full or not -len(full) <= summed[1] < len(full):
            return None
        axis = summed[1] % len(full)
        slots = [k if k != axis else None for k in range(len(full)) if k != axis or summed[2]]
        return summed[0], slots

    def _join(self, stmt: gast.stmt, value: gast.expr, target: str, how: str,
              written: Optional[gast.Subscript] = None, slots: Optional[List[Optional[int]]] = None) -> bool:
        """Add ``stmt`` (``target = value``, ``target += value`` or ``written += value`` for a basic slice
        ``written`` of the array ``target``; ``value`` summed into ``target`` at ``slots``, a ``partial``) to
        the loop, ``how`` says which; whether it was."""
        facts = self.facts
        written = written if written is not None else name(target)
        shape = facts.shape(_loaded(written)) if how == "accumulate" else facts.shape(value)
        if shape is None or not self._start(shape) or (how == "accumulate" and facts.shape(value) not in (shape, ())):
            return False
        trial = Trial(self)
        element = trial.element(value)
        if element is None:
            return False
        writes = {target}
        target_element = None
        if how == "accumulate" and (isinstance(written, gast.Subscript) or target not in self.defined):
            target_element = Trial(self).target(_loaded(written))
            if target_element is None:
                return False
            writes |= {target_element.value.id}
            if facts.aliases.closure(writes) & facts.aliases.closure(self.reads | trial.reads):
                return False  # elements read elsewhere in the loop would see the writes out of order
        reads = loads(value) | ({target} if how == "accumulate" else set())
        deferred = [d for _, d in self.deferred]
        moved = [statement_effects(h) for h in trial.hoisted]
        if any(self._conflicts(e, d) for e in [Effects(frozenset(reads), frozenset(writes))] + moved
               for d in deferred):
            return False  # it would pass a statement moved after the loop, or a part of it would
        self.hoisted += trial.hoisted
        self.reads |= trial.reads
        for key, node in trial.references.items():
            self.references.setdefault(key, node)
        if how == "define":
            if target in self.reads:
                self.read_then_defined.add(target)
            if isinstance(element, (gast.Name, gast.Constant)):  # the same value at every index: no new name
                self.defined[target] = element
                self._taken(stmt)
                return True
            scalar = facts.namer.new(f"{target}_j")
            self.scalars.add(scalar)
            self.defined[target] = name(scalar)
            new = assign(scalar, element)
            if not loads(element) & self._varying():  # the same at every index: computed once, before the loop
                self.hoisted.append(anno.copyanno(stmt, new))
                self._taken(stmt)
                return True
        elif how == "sum":
            self.accumulators.add(target)
            new = gast.AugAssign(target=name(target, True), op=gast.Add(), value=element)
        elif how == "partial":
            self.accumulators.add(target)
            self.partials[target] = slots
            new = gast.AugAssign(target=at_slots(target, slots, self.index, gast.Store()), op=gast.Add(),
                                 value=element)
        elif target_element is None:
            if not isinstance(self.defined[target], gast.Name) or self.defined[target].id not in self.scalars:
                return False  # its element is a name from before the loop: never updated in place
            new = gast.AugAssign(target=name(self.defined[target].id, True), op=stmt.op, value=element)
        else:
            self.written_before |= facts.aliases.closure(writes)
            target_element.ctx = gast.Store()
            new = gast.AugAssign(target=target_element, op=stmt.op, value=element)
        self.body.append(anno.copyanno(stmt, new))
        self._taken(stmt)
        return True

    def _varying(self) -> Set[str]:
        """The loop's index and the scalars its body assigns."""
        assigned = {n.id for stmt in self.body for n in gast.walk(stmt)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        return set(self.index) | assigned | self.accumulators

    def _taken(self, stmt: gast.stmt) -> None:
        written = stmt.target if isinstance(stmt, gast.AugAssign) else stmt.targets[0]
        target = written.value.id if isinstance(written, gast.Subscript) else written.id
        self.taken.append(stmt)
        self.fused.append(stmt)
        for view in [v for v, node in self.views.items() if v == target or target in loads(node)]:
            del self.views[view]

    def try_move(self, stmt: gast.stmt) -> bool:
        """Move ``stmt`` before the loop or after it, if it commutes with the statements it passes."""
        effects = statement_effects(stmt)
        if effects is None or self._elementwise_elsewhere(stmt):
            return False
        deferred = [d for _, d in self.deferred]
        passed = self._effects()
        if self._is_view(stmt):  # it reads where the array is, not what the loop writes into it
            passed = Effects(passed.reads, frozenset(set(self.defined) | self.accumulators))
        if not self._conflicts(effects, passed) and not any(self._conflicts(effects, d) for d in deferred):
            self.hoisted.append(stmt)
        else:
            self.deferred.append((stmt, effects))
        self.taken.append(stmt)
        update_views(self.views, stmt)
        return True

    def _is_view(self, stmt: gast.stmt) -> bool:
        """``v = a[i, 1:]``: basic indexing that leaves an array, a view of ``a``'s memory."""
        view = _view(stmt)
        if view is None or (self.facts.avals.get(view[0]) or ("", 0))[1] == 0:
            return False
        parts = view[1].slice.elts if isinstance(view[1].slice, gast.Tuple) else [view[1].slice]
        return all(isinstance(p, gast.Slice) or self.facts.aval(p) == ("i", 0) for p in parts)

    def _elementwise_elsewhere(self, stmt: gast.stmt) -> bool:
        """An array computation over another shape: better the start of its own group than moved (unless it is
        never fused: it reads nothing ``varying``)."""
        value = getattr(stmt, "value", None)
        if self.facts.varying is not None and not loads(stmt) & self.facts.varying:
            return False
        return isinstance(value, _ELEMENTWISE) and (self.facts.aval(value) or ("", 0))[1] > 0

