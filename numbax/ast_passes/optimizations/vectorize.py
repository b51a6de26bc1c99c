"""vectorize: ``vmap``'s loop over examples as array code over blocks of examples, where that is faster.

``vmap`` writes one example per iteration (``loop``); a body that multiplies by a matrix then makes one
matrix-vector product per example. Where every statement of such a loop has a batching rule (the registry's
``batch``), the loop becomes one over blocks of up to ``BLOCK`` examples whose body computes each statement
for all the block's rows at once, a row's value along a new leading axis::

    for i in range(1, batch):                 for start in range(1, batch, 64):
        v = e[i]                                  stop = min(start + 64, batch)
        t = a @ v                     ->          rows = stop - start
        out[i] = np.tanh(t) * s                   v = e[start:stop]
                                                  t = v @ a.T
                                                  np.multiply(np.tanh(t), s, out[start:stop])

(``s``, the same in every row, broadcasts as it is; a row of fewer axes than the others gets ones after the
rows' axis). A run-time check is made row by row, as the loop made it, but one that reads only shapes is made
on the block's first row (the rows of an array share their shape). A block's value for an output that a ufunc
computes is written into the output's rows by the ufunc (``vectorize_stores``). ``vmap`` computes its first
example before the loop to learn the outputs' shapes (``out = rt.stack_buffer(first, batch)``, ``out[0] =
first``); where some output's rows would be copied from a block's value, the first block takes its place,
made before the loop, which sizes the outputs from its rows::

    start = 0
    stop = min(start + 64, batch)
    ...
    out = rt.stack_rows(t, batch)
    out[start:stop] = t
    for start in range(stop, batch, 64):
        ...

so the first example's code is left to what else reads it (``optimize`` drops the rest). The loop stays as
it is where any statement has no rule, where a value it computes is read after it or carried from one
example to the next, or where it makes no matrix product of a value that changes from row to row (scalar
code is fastest as Numba compiles the loop). Runs after ``optimize`` (invariants hoisted) on code of known
abstract values; reports whether it changed anything.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.ast_passes.analyses import avals as avals_analysis
from numbax.ast_passes.analyses import batch_loops
from numbax.ast_passes.analyses.nodes import assign
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.usage import count_in, count_names
from numbax.ast_passes.naming import Namer
from numbax.ast_passes.tree_copy import copy_tree
from numbax.ast_passes.optimizations.purity import checks_shapes, is_check, is_pure
from numbax.ast_passes.optimizations.vectorize_stores import write_in_place
from numbax.primitives import batching
from numbax.primitives.batching import Operand, call, constant, name
from numbax.primitives.registry import ELEMENTWISE, entry

BLOCK = 64
_CONTRACTIONS = (gast.MatMult, np.dot, np.matmul)


class _NoRule(Exception):
    """A statement of the loop has no batching rule: the loop stays a loop."""


def _loads(node: gast.AST) -> Set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _base(target: gast.expr) -> Optional[str]:
    while isinstance(target, gast.Subscript):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


class _Block:
    """One loop's body rewritten for a block of rows ``start:stop`` (``rows`` of them)."""

    def __init__(self, loop: gast.For, avals: Dict[str, tuple], namer: Namer):
        self.index = loop.target.id
        self.avals = avals
        self.start, self.stop, self.rows = (namer.new(n) for n in ("start", "stop", "rows"))
        self.row = namer.new("k")  # the row of a check made row by row
        self.batched: Set[str] = set()
        self.contracts = False  # a matrix product of a value that changes from row to row
        self.made = {s.targets[0].id for s in loop.body  # the names the body assigns
                     if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)}
        self.stored: Dict[str, bool] = {}  # output array -> whether the value stored into it is per row

    def rank(self, node: gast.expr) -> Optional[int]:
        aval = avals_analysis.expr_aval(node, self.avals)
        return None if aval is None else aval[1]

    def reads_rows(self, node: gast.AST) -> bool:
        """Whether ``node`` reads a value that differs from row to row."""
        return bool(_loads(node) & (self.batched | {self.index}))

    # -- which values differ from row to row -------------------------------------------------------------

    def mark(self, body: List[gast.stmt]) -> None:
        """The names the body assigns from values that change with the example, to a fixpoint (an array
        written at a row's index, or with a row's value, holds one array a row; so does every array an inner
        loop reading such a value writes)."""
        while True:
            before = len(self.batched)
            for stmt in body:
                if isinstance(stmt, gast.For) and self.reads_rows(stmt):
                    self.batched |= {_base(t) for t in _subscript_stores(stmt)} & self.made
                elif isinstance(stmt, gast.Assign) and self.reads_rows(stmt.value):
                    target = _base(stmt.targets[0])
                    if target in self.made:  # (an array made before the loop holds the outputs)
                        self.batched.add(target)
                elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript) \
                        and self.reads_rows(stmt.targets[0].slice) and _base(stmt.targets[0]) in self.made:
                    self.batched.add(_base(stmt.targets[0]))
            if len(self.batched) == before:
                return

    # -- expressions -------------------------------------------------------------------------------------

    def expr(self, node: gast.expr) -> Operand:
        """The block's expression for one row's ``node``, with one row's kind where it is known."""
        aval = avals_analysis.expr_aval(node, self.avals)
        operand = self.block_expr(node, None if aval is None else aval[1])
        operand.kind = None if aval is None else aval[0]
        return operand

    def block_expr(self, node: gast.expr, rank: Optional[int]) -> Operand:
        """The block's expression for one row's ``node``, whose rank is ``rank``."""
        if not self.reads_rows(node):
            return Operand(node, False, rank)
        if isinstance(node, gast.Name):
            if node.id == self.index:
                return Operand(call("np.arange", name(self.start), name(self.stop)), True, 0)
            return Operand(node, True, rank)
        if isinstance(node, gast.Subscript):
            return self.subscript(node, rank)
        if isinstance(node, gast.Attribute) and node.attr == "shape":
            inner = self.expr(node.value)
            rest = gast.Slice(lower=constant(1), upper=None, step=None)
            return Operand(gast.Subscript(value=gast.Attribute(value=inner.expr, attr="shape", ctx=gast.Load()),
                                          slice=rest, ctx=gast.Load()), False, None)
        if isinstance(node, gast.Attribute) and node.attr == "size":  # one row's: the block has one row or more
            row = gast.Subscript(value=self.expr(node.value).expr, slice=constant(0), ctx=gast.Load())
            return Operand(gast.Attribute(value=row, attr="size", ctx=gast.Load()), False, 0)
        if isinstance(node, gast.Compare):  # of shapes, the same in every row
            parts = [self.expr(part) for part in [node.left] + list(node.comparators)]
            if any(part.batched for part in parts):
                raise _NoRule(node)
            return Operand(gast.Compare(left=parts[0].expr, ops=node.ops, comparators=[p.expr for p in parts[1:]]),
                           False, None)
        app = application(node)
        primitive = entry(app.key) if app is not None else None
        rule = primitive.batch if primitive is not None else None
        if rule is None:
            raise _NoRule(node)
        operands = [self.expr(arg) for arg in app.args]
        keywords = {k: v for k, v in app.keywords.items()}
        if any(self.reads_rows(v) for v in keywords.values()):
            raise _NoRule(node)
        if app.key in _CONTRACTIONS:
            self.contracts = True
        if rule is ELEMENTWISE:
            out = self.elementwise(node, operands, rank) if set(keywords) <= {"dtype"} else None
        else:
            out = rule(node, operands, keywords, name(self.rows))
        if out is None:
            raise _NoRule(node)
        return Operand(out, True, rank)

    def subscript(self, node: gast.Subscript, rank: Optional[int]) -> Operand:
        """``x[i]`` (the rows of ``x`` the block takes), ``v[idx]`` of a per-row ``v`` (``v[:, idx]``), ``x[j]``
        of a per-row integer ``j`` (rows of ``x``)."""
        index = node.slice
        shape = node.value
        if isinstance(shape, gast.Attribute) and shape.attr == "shape" and self.reads_rows(shape.value) and \
                isinstance(index, gast.Constant) and isinstance(index.value, int) and index.value >= 0:
            axis = constant(index.value + 1)  # a row's length along an axis: the block's along the next
            return Operand(gast.Subscript(value=gast.Attribute(value=self.expr(shape.value).expr, attr="shape",
                                                               ctx=gast.Load()), slice=axis, ctx=gast.Load()),
                           False, rank)
        if isinstance(index, gast.Name) and index.id == self.index and not self.reads_rows(node.value):
            rows = gast.Slice(lower=name(self.start), upper=name(self.stop), step=None)
            return Operand(gast.Subscript(value=node.value, slice=rows, ctx=gast.Load()), True, rank)
        if not self.reads_rows(index) and self._basic(index):
            value = self.expr(node.value)
            parts = list(index.elts) if isinstance(index, gast.Tuple) else [index]
            every = gast.Slice(lower=None, upper=None, step=None)
            return Operand(gast.Subscript(value=value.expr, slice=gast.Tuple(elts=[every] + parts, ctx=gast.Load()),
                                          ctx=gast.Load()), True, rank)
        if isinstance(index, gast.Name) and not self.reads_rows(node.value) and self.avals.get(index.id) == ("i", 0):
            return Operand(node, True, rank)  # one integer a row: NumPy gathers the rows of x
        raise _NoRule(node)

    def _basic(self, index: gast.expr) -> bool:
        """A basic index (slices and integers) the same in every row."""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        for part in parts:
            if isinstance(part, gast.Slice):
                continue
            aval = avals_analysis.expr_aval(part, self.avals)
            if aval != ("i", 0):
                return False
        return True

    def elementwise(self, node: gast.expr, operands: List[Operand], rank: Optional[int]) -> Optional[gast.expr]:
        """An elementwise primitive: the rows lead; an operand of fewer axes a row gets ones after them."""
        if rank is None or any(op.batched and op.rank is None for op in operands):
            return None
        exprs = [batching.widened(op, rank) if op.batched else op.expr for op in operands]
        return batching.applied(node, exprs)

    # -- statements --------------------------------------------------------------------------------------

    def stmts(self, body: List[gast.stmt]) -> List[gast.stmt]:
        out: List[gast.stmt] = []
        for stmt in body:
            out.extend(self.stmt(stmt))
        return out

    def stmt(self, stmt: gast.stmt) -> List[gast.stmt]:
        """The block's statements for one row's ``stmt`` (where made anew, at its place in the user's code)."""
        return [new if new is stmt else gast.copy_location(new, stmt) for new in self._stmt(stmt)]

    def _stmt(self, stmt: gast.stmt) -> List[gast.stmt]:
        if isinstance(stmt, gast.Expr) and is_check(stmt.value):
            if not self.reads_rows(stmt.value):
                return [stmt]
            return [self.first_row(stmt)] if self.shapes_alike(stmt.value) else [self.row_by_row(stmt)]
        if isinstance(stmt, gast.For):
            return [self.inner_loop(stmt)]
        if isinstance(stmt, gast.If) and all(isinstance(s, gast.Raise) for s in stmt.body + stmt.orelse):
            test = self.expr(stmt.test)
            if test.batched:
                raise _NoRule(stmt)
            return [gast.If(test=test.expr, body=stmt.body, orelse=stmt.orelse)]
        if not isinstance(stmt, gast.Assign) or len(stmt.targets) != 1:
            raise _NoRule(stmt)
        target = stmt.targets[0]
        if isinstance(target, gast.Name):
            if target.id not in self.batched:
                if not is_pure(stmt.value):
                    raise _NoRule(stmt)
                return [stmt]  # the same in every row: made once a block
            value = stmt.value
            if not self.reads_rows(value):  # an array that rows are written into later
                return [gast.Assign(targets=[target], value=self.allocation(value))]
            return [gast.Assign(targets=[target], value=self.expr(value).expr)]
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
            array = target.value.id
            if array not in self.batched:
                if isinstance(target.slice, gast.Name) and target.slice.id == self.index:
                    rows = gast.Slice(lower=name(self.start), upper=name(self.stop), step=None)
                    value = self.expr(stmt.value)
                    whole = self.avals.get(array)
                    if value.batched and (whole is None or value.rank != whole[1] - 1):
                        raise _NoRule(stmt)  # a row of fewer axes would broadcast into its place
                    self.stored[array] = value.batched
                    return [gast.Assign(targets=[gast.Subscript(value=target.value, slice=rows, ctx=gast.Store())],
                                        value=value.expr)]
                raise _NoRule(stmt)
            return [self.row_by_row(stmt)]
        raise _NoRule(stmt)

    def inner_loop(self, loop: gast.For) -> gast.stmt:
        """A loop inside the body (elementwise code fused by a transformation) that writes only arrays the
        body made, of straight-line pure statements: made row by row, or once a block where it reads nothing
        that changes with the row."""
        for node in gast.walk(loop):
            if isinstance(node, (gast.While, gast.If, gast.Break, gast.Continue, gast.Return, gast.Raise,
                                 gast.AugAssign)) \
                    or (isinstance(node, gast.Expr) and not is_check(node.value)) \
                    or (isinstance(node, gast.Assign) and not is_pure(node.value)):
                raise _NoRule(loop)
        if not {_base(t) for t in _subscript_stores(loop)} <= self.made:
            raise _NoRule(loop)
        return self.row_by_row(loop) if self.reads_rows(loop) else loop

    def allocation(self, value: gast.expr) -> gast.expr:
        """``np.zeros(shape)`` that will hold one array a row."""
        app = application(value)
        primitive = entry(app.key) if app is not None else None
        if primitive is None or primitive.batch is None or primitive.batch is ELEMENTWISE:
            raise _NoRule(value)
        out = primitive.batch(value, [self.expr(arg) for arg in app.args], dict(app.keywords), name(self.rows))
        if out is None:
            raise _NoRule(value)
        return out

    def shapes_alike(self, check: gast.Call) -> bool:
        """Whether ``check`` reads only shapes, and reads rows only as arrays of the block (``v`` of a per-row
        array ``v``): every row's check is then the first row's."""
        return checks_shapes(check) and not check.keywords and \
            all(not self.reads_rows(arg) or (isinstance(arg, gast.Name) and arg.id in self.batched
                                             and (self.rank(arg) or 0) >= 1) for arg in check.args)

    def first_row(self, stmt: gast.Expr) -> gast.Expr:
        """The check ``stmt`` made on the block's first row alone (``shapes_alike``)."""
        check = copy_tree(stmt)
        check.value.args = [gast.Subscript(value=arg, slice=constant(0), ctx=gast.Load()) if self.reads_rows(arg)
                            else arg for arg in check.value.args]
        return check

    def row_by_row(self, stmt: gast.stmt) -> gast.For:
        """``stmt`` made for each row in turn: every per-row value read at the row (a check, a write at a
        row's own index)."""
        row = self.row

        class Rows(gast.NodeTransformer):
            def __init__(self, block):
                self.block = block

            def visit_Subscript(self, node):
                shape = node.value
                if isinstance(shape, gast.Attribute) and shape.attr == "shape" and isinstance(shape.value, gast.Name) \
                        and shape.value.id in self.block.batched and isinstance(node.slice, gast.Constant) \
                        and isinstance(node.slice.value, int) and node.slice.value >= 0:
                    return gast.Subscript(value=shape, slice=constant(node.slice.value + 1), ctx=node.ctx)  # a row's
                if isinstance(node.value, gast.Name) and node.value.id in self.block.batched:
                    index = self.visit(node.slice)
                    parts = list(index.elts) if isinstance(index, gast.Tuple) else [index]
                    return gast.Subscript(value=node.value, slice=gast.Tuple(elts=[name(row)] + parts,
                                                                             ctx=gast.Load()), ctx=node.ctx)
                return self.generic_visit(node)

            def visit_Name(self, node):
                if node.id == self.block.index:
                    return gast.BinOp(left=name(self.block.start), op=gast.Add(), right=name(row))
                if node.id in self.block.batched:
                    return gast.Subscript(value=gast.Name(id=node.id, ctx=gast.Load(), annotation=None,
                                                          type_comment=None),
                                          slice=name(row), ctx=gast.Load())
                return node

        copied = Rows(self).visit(copy_tree(stmt))
        rows = gast.For(target=gast.Name(id=row, ctx=gast.Store(), annotation=None, type_comment=None),
                        iter=call("range", name(self.rows)), body=[copied], orelse=[], type_comment=None)
        return gast.copy_location(rows, stmt)


def _subscript_stores(node: gast.AST) -> List[gast.Subscript]:
    return [n for n in gast.walk(node) if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)]


def _vectorized(loop: gast.For, avals, namer: Namer, read_after: Set[str], before: List[gast.stmt]) \
        -> Optional[List[gast.stmt]]:
    """The loop over blocks of rows that computes ``loop``, or None; ``before``, the statements of the block
    before the loop, loses ``vmap``'s first example's stores where the first block takes their place."""
    bounds = batch_loops.bounds(loop)
    if bounds is None or loop.orelse:
        return None
    stores, _ = count_in(loop.body)
    assigned = {n for n, c in stores.items() if c}
    if any(c > 1 for c in stores.values()) or assigned & read_after:
        return None
    if loop.target.id in read_after:
        return None
    if batch_loops.carried(loop.body, assigned, set()):
        return None
    outputs = {_base(t) for t in _subscript_stores(gast.Module(body=loop.body, type_ignores=[]))} - assigned
    if any(_loads(stmt) & outputs - {_base(t) for t in getattr(stmt, "targets", [])} - _shape_read(stmt)
           for stmt in loop.body) \
            or any(len(getattr(stmt, "targets", [])) == 1 and _loads(stmt.value) & outputs for stmt in loop.body):
        return None  # an array the loop fills, read in it: a row may read another's
    block = _Block(loop, avals, namer)
    block.mark(loop.body)
    try:
        body = block.stmts(loop.body)
    except _NoRule:
        return None
    if not block.contracts:
        return None
    first, last = bounds
    out: List[gast.stmt] = []
    peeled = batch_loops.peeled(before, first, outputs)
    direct = [copy_tree(stmt) for stmt in body]
    if write_in_place(direct, {a for a, per_row in block.stored.items() if per_row}) == outputs:
        body, peeled = direct, None  # vmap's first example sizes the outputs: no block's rows are copied
    if peeled is not None:
        first_block = _first_block(block, [copy_tree(stmt) for stmt in body], peeled, namer)
        before[:] = [stmt for stmt in before if all(stmt is not s for pair in peeled.values() for s in pair)]
        out = [gast.copy_location(stmt, loop) for stmt in gast.parse(f"{block.start} = 0").body + _head(block, last)]
        out += first_block
        first = name(block.stop)
    blocks = gast.For(target=gast.Name(id=block.start, ctx=gast.Store(), annotation=None, type_comment=None),
                      iter=call("range", first, last, constant(BLOCK)), body=_head(block, last) + body, orelse=[],
                      type_comment=None)
    return out + [gast.copy_location(blocks, loop)]


def _head(block: _Block, last: gast.expr) -> List[gast.stmt]:
    """``stop = min(start + 64, last)`` and ``rows = stop - start``: a block's extent."""
    head = gast.parse(f"{block.stop} = min({block.start} + {BLOCK}, LAST)\n{block.rows} = {block.stop} - "
                      f"{block.start}").body
    head[0].value.args[1] = copy_tree(last)
    return head


def _shape_read(stmt: gast.stmt) -> Set[str]:
    """The array whose shape alone ``stmt`` reads, ``out`` of ``rt.check_row(out, value, where)`` (``vmap``'s
    check that an example's output fits its row); else nothing."""
    app = application(stmt.value) if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) else None
    if app is not None and app.name == "rt.check_row" and app.args and isinstance(app.args[0], gast.Name):
        return {app.args[0].id}
    return set()


def _first_block(block: _Block, body: List[gast.stmt], peeled: Dict[str, Tuple[gast.Assign, gast.Assign]],
                 namer: Namer) -> List[gast.stmt]:
    """The block's ``body`` for the first rows, each output allocated from the value stored into it
    (``out = rt.stack_rows(t, n)`` before ``out[start:stop] = t``, ``t`` named first where it is an expression);
    the checks that a row fits an output sized by these rows go."""
    out: List[gast.stmt] = []
    for stmt in body:
        if _shape_read(stmt) & set(peeled):
            continue
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 else None
        array = _base(target) if isinstance(target, gast.Subscript) else None
        if array in peeled:
            if not isinstance(stmt.value, gast.Name):
                value = namer.new("first_rows")
                out.append(gast.copy_location(assign(value, stmt.value), stmt))
                stmt.value = name(value)
            length = copy_tree(application(peeled[array][0].value).args[1])
            helper = "rt.stack_rows" if block.stored[array] else "rt.stack_buffer"
            out.append(gast.copy_location(assign(array, call(helper, name(stmt.value.id), length)), stmt))
        out.append(stmt)
    return out


def transform(fdef: gast.FunctionDef, param_avals: Dict[str, tuple]) -> Tuple[gast.FunctionDef, bool]:
    """Vectorize ``fdef``'s batch loops where every statement has a rule; ``(fdef, changed)``."""
    loops = [n for n in gast.walk(fdef) if isinstance(n, gast.For) and anno.getanno(n, anno.Key.BATCH_LOOP, False)]
    if not loops:
        return fdef, False
    avals = avals_analysis.infer(fdef, param_avals)
    namer = Namer(n.id for n in gast.walk(fdef) if isinstance(n, gast.Name))
    _, total_loads = count_names(fdef)
    changed = False

    def block(stmts: List[gast.stmt]) -> List[gast.stmt]:
        nonlocal changed
        out: List[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, gast.For) and anno.getanno(stmt, anno.Key.BATCH_LOOP, False):
                _, inner_loads = count_in(stmt.body)
                read_after = {n for n, c in total_loads.items() if c > inner_loads.get(n, 0)}
                new = _vectorized(stmt, avals, namer, read_after, out)
                if new is not None:
                    out.extend(new)
                    changed = True
                    continue
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    setattr(stmt, field, block(inner))
            out.append(stmt)
        return out

    fdef.body = block(fdef.body)
    return fdef, changed
