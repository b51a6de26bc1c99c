"""saves: the values the backward sweep reads, kept where the forward sweep computed them.

The backward sweep of a statement reads primal values as they were when that
statement ran. A value assigned once, outside any loop, is still there: it is
read directly. A value that is reassigned later gets a copy of its reference
(``h_1 = h``) at top level, or, inside a loop, a tape. Scalars of known kind
go into one 2-D table per loop (and kind): a column per saved value, a row
per iteration, one row counter that the forward sweep advances at the end of
each iteration and the backward sweep steps back at the start of each. A
``for`` loop reserves its rows before it starts; a ``while`` loop doubles its
table when it is full. In a float64 program, a 1-D float array whose length
is the same in every iteration (a parameter's dim, ``row_widths``) and that
nothing writes into gets a table of its own, a row per iteration: the
forward sweep copies it in (``rt.save_row(t5_rows, row, _t5)``), the backward
sweep reads the row as a view (``t5 = t5_rows[row]``) and never writes into
it. Other values (arrays) go on lists that the forward sweep appends to and
the backward sweep pops from. In-place updates of arrays are undone during
the backward sweep, so references stay exact.
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Dict, List, Set, Tuple

import gast

from numbax.ast_passes.analyses.avals import expr_aval, row_store
from numbax.ast_passes.analyses.nodes import assign as _assign
from numbax.ast_passes.analyses.nodes import loads as _loads
from numbax.ast_passes.analyses.nodes import name as _name
from numbax.ast_passes.analyses.nodes import rt_call as _rt
from numbax.ast_passes.analyses.shapes import dim_length
from numbax.ast_passes.naming import Namer


def _row_assigned(target: gast.expr):
    """The row table that ``target`` is a row of (``t5_rows[row]``, as ``higher_order`` code saves a row), else
    None."""
    if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
        return target.value.id
    return None


def _call_method(obj: str, method: str, args: List[gast.expr]) -> gast.Call:
    return gast.Call(func=gast.Attribute(value=_name(obj), attr=method, ctx=gast.Load()), args=args, keywords=[])


@dataclasses.dataclass(frozen=True)
class _Cell:
    """Where a scalar saved in a loop lives: one column of that loop's table, one row per iteration."""

    table: str
    column: int
    row: str


@dataclasses.dataclass(frozen=True)
class _Row:
    """Where a 1-D array of one length saved in a loop lives: one row per iteration of a table of its own."""

    table: str
    row: str


def row_widths(shapes: Dict[str, tuple], avals: Dict[str, tuple], fixed: Set[str],
               unwritten: Set[str]) -> Dict[str, gast.expr]:
    """The names that may be saved in row tables, each with its length written as an expression: 1-D float
    arrays that nothing writes into, whose symbolic shape is a dim of one of ``fixed`` (parameters, and names
    assigned once, by a statement of the function's body itself: ``logits.shape[1]``) plus an offset, or a
    number (``np.array([v, w])``'s 2)."""
    out: Dict[str, gast.expr] = {}
    for name, shape in shapes.items():
        if avals.get(name) != ("f", 1) or name not in unwritten or len(shape) != 1:
            continue
        symbol, length = shape[0]
        width = gast.Constant(value=length, kind=None) if not symbol else dim_length(shape[0], fixed)
        if width is not None:
            out[name] = width
    return out


class Saves:
    """Where each needed value lives; the statements that keep it, before and after each statement."""

    def __init__(self, namer: Namer, single_assignment: Set[str], avals: Dict[str, tuple] = None,
                 params: Set[str] = frozenset()):
        self.namer = namer
        self.params = params  # the parameters: a row table's width that reads only them holds at the top
        self.avals = avals or {}
        self.loop_of: Dict[object, gast.stmt] = {}  # statement key -> innermost enclosing loop
        self.rows: Dict[int, str] = {}  # id(loop) -> its row counter (the iterations it has taped)
        self.tables: Dict[Tuple[int, str], str] = {}  # (id(loop), kind) -> its 2-D tape
        self.widths: Dict[str, int] = {}  # table -> number of columns
        self.loops: Dict[int, gast.stmt] = {}  # id(loop) -> loop, for the loops with tables
        self.outermost: Set[int] = set()  # ids of the loops no loop encloses: each runs at most once a call
        self.single_assignment = single_assignment
        self.before: Dict[int, List[gast.stmt]] = {}
        self.after: Dict[int, List[gast.stmt]] = {}
        self.tapes: List[str] = []  # list tapes (arrays, values of unknown type)
        self.row_widths: Dict[str, gast.expr] = {}  # name -> its length, for the arrays saved in row tables
        self.row_tables: Dict[str, Tuple[int, gast.expr]] = {}  # row table -> (id(its loop), row length)
        self._saved: Dict[Tuple, Tuple[str, object]] = {}
        self.pops: List[gast.stmt] = []
        self.higher_order = False  # the code made is to be differentiated again: rows saved by assignment

    def need_value(self, value: gast.expr, base: str, key, when: str, depth: int, ident=None,
                   popped: Set[str] = frozenset()) -> str:
        """Keep ``value`` (an expression over the statement's inputs) for the backward sweep.

        ``ident`` identifies the value (by default the expression at this
        statement); ``popped`` holds saved names the backward sweep has already
        read in the current block, which later readers reuse.
        """
        from numbax.ast_passes.unparse import unparse

        ident = ident or (key, unparse(value), when)
        if ident not in self._saved:
            saved = self.namer.new(base)
            store = self.before if when == "before" else self.after
            if depth == 0:
                store.setdefault(key, []).append(_assign(saved, value))
                self._saved[ident] = (saved, None)
            else:
                slot = self._slot(base, value, key)
                store.setdefault(key, []).append(self._push(slot, value))
                self._saved[ident] = (saved, slot)
        saved, slot = self._saved[ident]
        if slot and saved not in popped:
            self.pops.append(self._pop(slot, saved))
        return saved

    def _slot(self, base: str, value: gast.expr, key):
        """Where a value saved in a loop goes: a column of the loop's table for a scalar of known kind,
        else a list tape of its own."""
        aval = expr_aval(value, self.avals)
        if isinstance(value, gast.Name) and value.id in self.row_widths and \
                self._width_holds(self.loop_of[key], self.row_widths[value.id]):
            loop = self._numbered(key)
            table = self.namer.new(f"{base}_rows")
            self.row_tables[table] = (id(loop), self.row_widths[value.id])
            return _Row(table, self.rows[id(loop)])
        if aval is None or aval[1] != 0 or aval[0] not in _DTYPES:
            tape = self.namer.new(f"{base}_tape")
            self.tapes.append(tape)
            return tape
        loop = self._numbered(key)
        table = self.tables.get((id(loop), aval[0]))
        if table is None:
            table = self.tables[(id(loop), aval[0])] = self.namer.new(_TABLE_NAMES[aval[0]])
            self.widths[table] = 0
        self.widths[table] += 1
        return _Cell(table, self.widths[table] - 1, self.rows[id(loop)])

    def _width_holds(self, loop, width: gast.expr) -> bool:
        """Whether a row table of ``width`` can be made for ``loop``: at the top of the function for a width
        of parameters, where the loop starts (``_made_late``) for one of names assigned once."""
        names = _loads(width)
        return names <= self.params or isinstance(loop, gast.For) and id(loop) in self.outermost and \
            names <= self.single_assignment

    def _numbered(self, key) -> gast.stmt:
        """The innermost loop around statement ``key``, given a row counter if it has none yet."""
        loop = self.loop_of[key]
        if id(loop) not in self.rows:
            self.rows[id(loop)] = self.namer.new("row")
            self.loops[id(loop)] = loop
        return loop

    def _push(self, slot, value: gast.expr) -> gast.stmt:
        """``tape.append(v)``, a copy into the current row of a row table, or a store into a cell.

        Code that reverse mode will read again (``higher_order``) stores a row as an assignment
        (``t5_rows[row] = _t5``), which reverse mode differentiates, instead of ``rt.save_row``.
        """
        if isinstance(slot, str):
            return gast.Expr(value=_call_method(slot, "append", [value]))
        if isinstance(slot, _Row) and self.higher_order:
            return _assign(gast.Subscript(value=_name(slot.table), slice=_name(slot.row), ctx=gast.Store()), value)
        if isinstance(slot, _Row):
            return gast.Expr(value=_rt("save_row", _name(slot.table), _name(slot.row), value))
        return _assign(_cell(slot, gast.Store()), value)

    @staticmethod
    def _pop(slot, saved: str) -> gast.stmt:
        """``v = tape.pop()``, a view of the current row of a row table, or a read of a cell."""
        if isinstance(slot, str):
            return _assign(saved, _call_method(slot, "pop", []))
        if isinstance(slot, _Row):
            return _assign(saved, gast.Subscript(value=_name(slot.table), slice=_name(slot.row), ctx=gast.Load()))
        return _assign(saved, _cell(slot, gast.Load()))

    def _tables_of(self, loop) -> List[str]:
        return [t for (loop_id, _), t in self.tables.items() if loop_id == id(loop)] + \
            [t for t, (loop_id, _) in self.row_tables.items() if loop_id == id(loop)]

    def enter(self, loop) -> List[gast.stmt]:
        """Before a ``for`` loop: make its tables hold one row per iteration more (the trip count is known).

        The tables of a loop that no loop encloses are empty when it starts: they are made here, at
        their size, instead of grown (a helper less for Numba to compile).
        """
        if not isinstance(loop, gast.For):
            return []
        out = []
        for table in self._tables_of(loop):
            trips = gast.Call(func=_name("len"), args=[copy.deepcopy(loop.iter)], keywords=[])
            if id(loop) in self.outermost:
                out.append(_assign(table, self._allocation(table, trips, remade=True)))
                continue
            wanted = gast.BinOp(left=_name(self.rows[id(loop)]), op=gast.Add(), right=trips)
            out.append(_assign(table, _rt("reserve_rows", _name(table), wanted)))
        return out

    def _allocation(self, table: str, rows: gast.expr, remade: bool = False) -> gast.Call:
        """``np.empty((rows, width), dtype)`` for ``table`` (no dtype for float64); ``remade``: where its loop starts, the table
        made at the top already there."""
        if table in self.row_tables:
            width, dtype = copy.deepcopy(self.row_tables[table][1]), "float64"
            if remade and not self._made_late(table):  # its names change: the width the first table has
                width = gast.Subscript(value=gast.Attribute(value=_name(table), attr="shape", ctx=gast.Load()),
                                       slice=gast.Constant(value=1, kind=None), ctx=gast.Load())
        else:
            width, dtype = gast.Constant(value=self.widths[table], kind=None), _DTYPES[self._key_of(table)[1]]
        shape = gast.Tuple(elts=[rows, width], ctx=gast.Load())
        # float64 as np.empty's default: one Numba specialization with the code's other float64 arrays
        dtypes = [] if dtype == "float64" else [gast.Attribute(value=_name("np"), attr=dtype, ctx=gast.Load())]
        return gast.Call(func=gast.Attribute(value=_name("np"), attr="empty", ctx=gast.Load()),
                         args=[shape] + dtypes, keywords=[])

    def _made_late(self, table: str) -> bool:
        """Whether ``table`` is made only where its loop starts: a loop no loop encloses, and for a row
        table, a width of names assigned once (it means the same there as at the top)."""
        loop_id = self._loop_of_table(table)
        if not (isinstance(self.loops[loop_id], gast.For) and loop_id in self.outermost):
            return False
        return table not in self.row_tables or \
            all(n in self.single_assignment for n in _loads(self.row_tables[table][1]))

    def begin_iteration(self, loop) -> List[gast.stmt]:
        """At the top of a ``while`` loop's body: room for this iteration's row, doubling the tables if full."""
        if isinstance(loop, gast.For) or id(loop) not in self.rows:
            return []
        row = self.rows[id(loop)]
        out = []
        for table in self._tables_of(loop):
            full = gast.Compare(left=_name(row), ops=[gast.Eq()],
                                comparators=[gast.Call(func=_name("len"), args=[_name(table)], keywords=[])])
            out.append(gast.If(test=full, body=[_assign(table, _rt("grow_rows", _name(table)))], orelse=[]))
        return out

    def end_iteration(self, loop) -> List[gast.stmt]:
        """At the end of a loop's body in the forward sweep: the next row."""
        row = self.rows.get(id(loop))
        return [_assign(row, gast.BinOp(left=_name(row), op=gast.Add(), right=_one()))] if row else []

    def rewind(self, loop) -> List[gast.stmt]:
        """At the top of a loop's body in the backward sweep: back to the row of this iteration."""
        row = self.rows.get(id(loop))
        return [_assign(row, gast.BinOp(left=_name(row), op=gast.Sub(), right=_one()))] if row else []

    def need_iteration(self, name: str, key, depth: int) -> Tuple[str, gast.stmt]:
        """Keep ``name`` once per loop iteration, right after its one assignment in the loop body.

        Returns the saved name and its read, which belongs at the top of the
        backward loop body, where every later statement of the iteration reads it.
        """
        ident = (key, name, "iteration")
        if ident not in self._saved:
            saved = self.namer.new(name)
            slot = self._slot(name, _name(name), key)
            self.after.setdefault(key, []).append(self._push(slot, _name(name)))
            self._saved[ident] = (saved, slot)
        saved, slot = self._saved[ident]
        return saved, self._pop(slot, saved)

    def take_pops(self) -> List[gast.stmt]:
        """The tape reads requested since the last call, deduplicated, in request order."""
        seen, out = set(), []
        for stmt in self.pops:
            name = popped_name(stmt)
            if name not in seen:
                seen.add(name)
                out.append(stmt)
        self.pops = []
        return out

    def initial(self) -> List[gast.stmt]:
        """The tapes, at the top of the function: ``tape = []``, and each loop's tables and row counter."""
        out = [_assign(tape, gast.List(elts=[], ctx=gast.Load())) for tape in self.tapes]
        for table in list(self.tables.values()) + list(self.row_tables):
            if self._made_late(table):
                continue  # made where its loop starts (``enter``)
            rows = 0 if isinstance(self.loops[self._loop_of_table(table)], gast.For) else 16  # a for loop reserves
            out.append(_assign(table, self._allocation(table, gast.Constant(value=rows, kind=None))))
        return out + [_assign(row, gast.Constant(value=0, kind=None)) for row in self.rows.values()]

    def _loop_of_table(self, table: str) -> int:
        return self.row_tables[table][0] if table in self.row_tables else self._key_of(table)[0]

    def _key_of(self, table: str) -> Tuple[int, str]:
        """``(id(loop), kind)`` of a table of scalars."""
        return next(key for key, t in self.tables.items() if t == table)

    def drop_unread(self, body: List[gast.stmt]) -> List[gast.stmt]:
        """``body`` without the list tapes and row tables whose read values nothing reads (a rule wanted
        only a shape, which it found elsewhere)."""
        loads: Dict[str, int] = {}
        reads: Dict[str, List[str]] = {}
        for node in gast.walk(gast.Module(body=body, type_ignores=[])):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                loads[node.id] = loads.get(node.id, 0) + 1
            tape = self._read_of(node.value) if isinstance(node, gast.Assign) else None
            if tape is not None:
                reads.setdefault(tape, []).append(node.targets[0].id)
        unread = {t for t in list(self.tapes) + list(self.row_tables)
                  if not any(loads.get(v) for v in reads.get(t, []))}
        self.tapes = [t for t in self.tapes if t not in unread]
        self.row_tables = {t: v for t, v in self.row_tables.items() if t not in unread}
        return self._without(body, unread) if unread else body

    def _read_of(self, value: gast.expr):
        """The list tape or row table that ``value`` reads (``tape.pop()``, ``t5_rows[row]``), else None."""
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and \
                value.value.id in self.row_tables:
            return value.value.id
        return _tape_call(value, "pop")

    def _without(self, stmts: List[gast.stmt], tapes: Set[str]) -> List[gast.stmt]:
        """``stmts`` (recursively) without the statements that make, grow, save into or read ``tapes``."""
        out = []
        for stmt in stmts:
            if isinstance(stmt, gast.Assign) and (
                    isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in tapes or
                    _row_assigned(stmt.targets[0]) in tapes or  # a row saved by assignment (``higher_order``)
                    self._read_of(stmt.value) in tapes) or \
                    isinstance(stmt, gast.Expr) and _tape_call(stmt.value, "append") in tapes or \
                    isinstance(stmt, gast.Expr) and row_store(stmt.value) in tapes or \
                    isinstance(stmt, gast.If) and _loads(stmt.test) & tapes:  # a while loop's table full
                continue
            for field in ("body", "orelse"):
                if getattr(stmt, field, None):
                    setattr(stmt, field, self._without(getattr(stmt, field), tapes) or [gast.Pass()])
            out.append(stmt)
        return out


def _tape_call(value: gast.expr, method: str):
    """The tape that ``value`` calls ``method`` of (``tape.pop()``), else None."""
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr == method and \
            isinstance(value.func.value, gast.Name):
        return value.func.value.id
    return None


def _cell(slot: _Cell, ctx) -> gast.Subscript:
    index = gast.Tuple(elts=[_name(slot.row), gast.Constant(value=slot.column, kind=None)], ctx=gast.Load())
    return gast.Subscript(value=_name(slot.table), slice=index, ctx=ctx)


_TABLE_NAMES = {"f": "tape", "i": "int_tape", "b": "flag_tape"}
_DTYPES = {"f": "float64", "i": "int64", "b": "bool_"}


def _one() -> gast.Constant:
    return gast.Constant(value=1, kind=None)


def popped_name(stmt: gast.Assign) -> str:
    """The saved name a read of a tape defines (``x_1 = tape.pop()`` or ``x_1 = tape[row, 0]``)."""
    return stmt.targets[0].id
