"""saves: the values the backward sweep reads, kept where the forward sweep computed them.

The backward sweep of a statement reads primal values as they were when that
statement ran. A value assigned once, outside any loop, is still there: it is
read directly. A value that is reassigned later gets a copy of its reference
(``h_1 = h``) at top level, or, inside a loop, a tape: a list the forward
sweep appends to and the backward sweep pops from in reverse order, so no
Python object is made per iteration beyond the list slot. In-place updates of
arrays are undone during the backward sweep, so references stay exact.
"""
from __future__ import annotations

import copy
from typing import Dict, List, Set, Tuple

import gast

from numbax.ast_passes.naming import Namer
from numbax.transforms.grad.nodes import assign as _assign
from numbax.transforms.grad.nodes import name as _name


def _call_method(obj: str, method: str, args: List[gast.expr]) -> gast.Call:
    return gast.Call(func=gast.Attribute(value=_name(obj), attr=method, ctx=gast.Load()), args=args, keywords=[])


class Saves:
    """Where each needed value lives; the statements that keep it, before and after each statement."""

    def __init__(self, namer: Namer, single_assignment: Set[str], avals: Dict[str, tuple] = None):
        self.namer = namer
        self.avals = avals or {}
        self.counts: Dict[str, str] = {}
        self.loop_of: Dict[object, gast.stmt] = {}  # statement key -> innermost enclosing loop
        self.reserves: Dict[int, List[str]] = {}  # id(for loop) -> typed tapes sized before it runs
        self.dtypes: Dict[str, str] = {}
        self.single_assignment = single_assignment
        self.before: Dict[int, List[gast.stmt]] = {}
        self.after: Dict[int, List[gast.stmt]] = {}
        self.tapes: List[str] = []
        self._saved: Dict[Tuple, Tuple[str, bool]] = {}
        self.pops: List[gast.stmt] = []

    def need_value(self, value: gast.expr, base: str, key, when: str, depth: int, ident=None,
                   popped: Set[str] = frozenset()) -> str:
        """Keep ``value`` (an expression over the statement's inputs) for the backward sweep.

        ``ident`` identifies the value (by default the expression at this
        statement); ``popped`` holds saved names the backward sweep has already
        popped in the current block, which later readers reuse.
        """
        from numbax.ast_passes.unparse import unparse

        ident = ident or (key, unparse(value), when)
        if ident not in self._saved:
            saved = self.namer.new(base)
            store = self.before if when == "before" else self.after
            if depth == 0:
                store.setdefault(key, []).append(_assign(saved, value))
                self._saved[ident] = (saved, False)
            else:
                tape = self._tape(base, value)
                store.setdefault(key, []).extend(self._push(tape, value, key))
                self._saved[ident] = (saved, tape)
        saved, tape = self._saved[ident]
        if tape and saved not in popped:
            self.pops.append(self._pop(tape, saved))
        return saved

    def _tape(self, base: str, value: gast.expr) -> str:
        """A new tape: a typed array with a count for a scalar of known kind, else a list."""
        tape = self.namer.new(f"{base}_tape")
        self.tapes.append(tape)
        aval = self.avals.get(value.id) if isinstance(value, gast.Name) else None
        if aval is not None and aval[1] == 0 and aval[0] in _DTYPES:
            self.counts[tape] = self.namer.new(f"{base}_count")
            self.dtypes[tape] = _DTYPES[aval[0]]
        return tape

    def _push(self, tape: str, value: gast.expr, key) -> List[gast.stmt]:
        """Append ``value``: ``tape.append(v)``, or for a typed tape a plain store.

        Inside a ``for`` loop the tape is made large enough before the loop
        starts (its trip count is known then), so the store needs no check;
        growing the array inside the loop would cost five times the store.
        Inside a ``while`` loop the store checks and grows by doubling.
        """
        count = self.counts.get(tape)
        if count is None:
            return [gast.Expr(value=_call_method(tape, "append", [value]))]
        loop = self.loop_of.get(key)
        store = gast.Subscript(value=_name(tape), slice=_name(count), ctx=gast.Store())
        bump = _assign(count, gast.BinOp(left=_name(count), op=gast.Add(), right=_one()))
        if isinstance(loop, gast.For):
            reserved = self.reserves.setdefault(id(loop), [])
            if tape not in reserved:
                reserved.append(tape)
            return [gast.Assign(targets=[store], value=value, type_comment=None), bump]
        full = gast.Compare(left=_name(count), ops=[gast.Eq()],
                            comparators=[gast.Call(func=_name("len"), args=[_name(tape)], keywords=[])])
        grow = gast.Call(func=gast.Attribute(value=_name("rt"), attr="grow", ctx=gast.Load()), args=[_name(tape)],
                         keywords=[])
        return [gast.If(test=full, body=[_assign(tape, grow)], orelse=[]),
                gast.Assign(targets=[store], value=value, type_comment=None), bump]

    def reserve(self, loop: gast.For) -> List[gast.stmt]:
        """Before a ``for`` loop: make each of its typed tapes hold one value per iteration more."""
        out = []
        for tape in self.reserves.get(id(loop), []):
            trips = gast.Call(func=_name("len"), args=[copy.deepcopy(loop.iter)], keywords=[])
            wanted = gast.BinOp(left=_name(self.counts[tape]), op=gast.Add(), right=trips)
            reserve = gast.Call(func=gast.Attribute(value=_name("rt"), attr="reserve", ctx=gast.Load()),
                                args=[_name(tape), wanted], keywords=[])
            out.append(_assign(tape, reserve))
        return out

    def _pop(self, tape: str, saved: str) -> gast.stmt:
        count = self.counts.get(tape)
        if count is None:
            return _assign(saved, _call_method(tape, "pop", []))
        last = gast.BinOp(left=_name(count), op=gast.Sub(), right=_one())
        return _assign_pair(count, saved, last, gast.Subscript(value=_name(tape), slice=last, ctx=gast.Load()))

    def need_iteration(self, name: str, key, depth: int) -> Tuple[str, gast.stmt]:
        """Keep ``name`` once per loop iteration, right after its one assignment in the loop body.

        Returns the saved name and its pop, which belongs at the top of the
        backward loop body, where every later statement of the iteration reads it.
        """
        ident = (key, name, "iteration")
        if ident not in self._saved:
            saved = self.namer.new(name)
            tape = self._tape(name, _name(name))
            self.after.setdefault(key, []).extend(self._push(tape, _name(name), key))
            self._saved[ident] = (saved, tape)
        saved, tape = self._saved[ident]
        return saved, self._pop(tape, saved)

    def take_pops(self) -> List[gast.stmt]:
        """The tape pops requested since the last call, deduplicated, in request order."""
        seen, out = set(), []
        for stmt in self.pops:
            name = popped_name(stmt)
            if name not in seen:
                seen.add(name)
                out.append(stmt)
        self.pops = []
        return out

    def initial(self) -> List[gast.stmt]:
        """``tape = []`` for every tape, at the top of the function."""
        out = []
        for tape in self.tapes:
            if tape in self.counts:
                empty = gast.Call(func=gast.Attribute(value=_name("np"), attr="empty", ctx=gast.Load()),
                                  args=[gast.Constant(value=16, kind=None),
                                        gast.Attribute(value=_name("np"), attr=self.dtypes[tape], ctx=gast.Load())],
                                  keywords=[])
                out.append(_assign_pair(tape, self.counts[tape], empty, gast.Constant(value=0, kind=None)))
            else:
                out.append(_assign(tape, gast.List(elts=[], ctx=gast.Load())))
        return out


_DTYPES = {"f": "float64", "i": "int64", "b": "bool_"}


def _one() -> gast.Constant:
    return gast.Constant(value=1, kind=None)


def _assign_pair(a: str, b: str, va: gast.expr, vb: gast.expr) -> gast.Assign:
    target = gast.Tuple(elts=[_name(a, True), _name(b, True)], ctx=gast.Store())
    return gast.Assign(targets=[target], value=gast.Tuple(elts=[va, vb], ctx=gast.Load()), type_comment=None)


def popped_name(stmt: gast.Assign) -> str:
    """The saved name a pop statement defines (``x_1 = tape.pop()`` or ``n, x_1 = n - 1, tape[n - 1]``)."""
    target = stmt.targets[0]
    return target.elts[1].id if isinstance(target, gast.Tuple) else target.id
