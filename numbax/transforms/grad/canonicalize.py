"""canonicalize: the structured subset reverse mode reads, from a function in A-normal form.

Expects one function in A-normal form. Guarantees:

- one ``return`` of atoms, last in the body (early returns store into ``out``
  slots and clear a ``live`` flag that guards what follows);
- no ``break``/``continue``: each loop that has them gets a ``go`` flag (the
  loop keeps running) and a ``run`` flag (this iteration keeps running) that
  guard the rest of the body; every ``while`` reads ``while go:``;
- ``if`` tests and ``while`` tests are names (a ``while`` loop that cannot
  exit early computes its test before the loop and again at the end of its
  body; others read ``while go:`` with the flags below);
- ``for`` loops run over ``range(...)`` (a loop over an array's rows reads
  ``row = x[k]`` at the top of a range loop, one over ``enumerate(...)`` or
  ``zip(...)`` of arrays and ranges reads each part by index too);
- no ``x op= v`` on names (``x = x op v``), no tuple targets;
- no tuple of results indexed: ``r = np.linalg.slogdet(a)`` read only as
  ``r[1]`` becomes ``logabs = rt.slogdet_logabs(a)``, read as ``logabs``.

The flags and slots cost a few scalar assignments; Numba keeps them in
registers.
"""
from __future__ import annotations

import copy
from typing import List, Optional, Set

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses import nodes
from numbax.ast_passes.analyses.nodes import loads as _loads
from numbax.ast_passes.analyses.nodes import name as _name
from numbax.ast_passes.exits import ExitLowering, has_exit
from numbax.ast_passes.naming import Namer
from numbax.errors import NumbaxSyntaxError
from numbax.transforms.grad import inplace
from numbax.transforms.grad.differentiable import is_differentiable


def _assign(target: str, value: gast.expr, origin: Optional[gast.AST] = None) -> gast.Assign:
    stmt = nodes.assign(target, value)
    if origin is not None:
        gast.copy_location(stmt, origin)
        anno.copyanno(origin, stmt)
    return stmt


def _const(value) -> gast.Constant:
    return gast.Constant(value=value, kind=None)


def _fail(node: gast.AST, message: str, hint: str) -> None:
    raise NumbaxSyntaxError(message, anno.getanno(node, anno.Key.ORIGIN), hint=hint)


class _Rename(gast.NodeTransformer):
    """Loads of renamed names read their newest version."""

    def __init__(self, current):
        self.current = current

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.current:
            node.id = self.current[node.id]
        return node


def _target(stmt) -> gast.expr:
    return stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target


class _Canonicalize(ExitLowering):
    def __init__(self, fdef: gast.FunctionDef, namer: Namer, active=frozenset()):
        super().__init__(namer, on_return=self._store_return)
        self.fdef = fdef
        self.active = active
        self.out: List[str] = []
        self.tests: Set[str] = set()  # the names made for ``if`` tests, read by their ``if`` alone

    # ---- whole function
    def run(self) -> gast.FunctionDef:
        body = self.versions(self.simple(self.fdef.body))
        returns = [n for n in gast.walk(gast.Module(body=body, type_ignores=[])) if isinstance(n, gast.Return)]
        single = len(returns) == 1 and body and body[-1] is returns[0]
        if not single:
            width = self._return_width(returns)
            self.out = [self.namer.new("out") for _ in range(width)] if width != 1 else [self.namer.new("out")]
            self.live = self.namer.new("live")
            body = [_assign(self.live, _const(True))] + self.block(body)
            value = (_name(self.out[0]) if len(self.out) == 1
                     else gast.Tuple(elts=[_name(n) for n in self.out], ctx=gast.Load()))
            body.append(gast.Return(value=value))
        else:
            body = self.block(body)
        self.fdef.body = body
        return self.fdef

    def versions(self, body: List[gast.stmt]) -> List[gast.stmt]:
        """Give each top-level reassignment of a name a new name (``w``, ``w_1``): less to save for later.

        Only names assigned nowhere inside an ``if`` or a loop are renamed, so
        every read still sees the value it saw before.
        """
        nested = set()
        for stmt in body:
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                nested |= {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        assigned = {a.id for a in self.fdef.args.args}
        current = {}
        for stmt in body:
            renamed = isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
            _Rename(current).visit(stmt.value if renamed else stmt)  # ``v[::2] = 0.5`` writes the newest ``v``
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                name = stmt.targets[0].id
                if name in assigned and name not in nested:
                    current[name] = self.namer.new(name)
                    stmt.targets[0].id = current[name]
                assigned.add(name)
        return body

    @staticmethod
    def _return_width(returns: List[gast.Return]) -> int:
        for ret in returns:
            if ret.value is None:
                _fail(ret, "a function differentiated by numbax must return a value", "return a scalar.")
            if isinstance(ret.value, gast.Tuple):
                return len(ret.value.elts)
        return 1

    # ---- statements that need no control-flow context
    def simple(self, stmts: List[gast.stmt]) -> List[gast.stmt]:
        out: List[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
                value = gast.BinOp(left=_name(stmt.target.id), op=stmt.op, right=stmt.value)
                out.append(_assign(stmt.target.id, value, stmt))
                anno.setanno(out[-1], anno.Key.IN_PLACE, True)  # an array's memory changes (``aliasing``)
            elif isinstance(stmt, gast.AugAssign) and not isinstance(stmt.op, (gast.Add, gast.Sub)):
                out.extend(self._read_modify_write(stmt))
            elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Tuple):
                out.extend(self._unpack(stmt))
            elif isinstance(stmt, (gast.Assign, gast.AugAssign)) and isinstance(_target(stmt), gast.Subscript) \
                    and not isinstance(stmt.value, (gast.Name, gast.Constant)):
                temp = self.namer.temp()
                out.append(_assign(temp, stmt.value, stmt))
                stmt.value = _name(temp)
                out.extend(self.simple([stmt]))
            elif isinstance(stmt, gast.If):
                stmt.body, stmt.orelse = self.simple(stmt.body), self.simple(stmt.orelse)
                out.extend(self._named_test(stmt))
            elif isinstance(stmt, gast.For):
                stmt.iter = _inline_iterables(stmt.iter, out)
                out.extend(self._range_loop(stmt))
            elif isinstance(stmt, gast.While):
                out.extend(self._while(stmt))
            else:
                out.append(stmt)
        return out

    def _read_modify_write(self, stmt: gast.AugAssign) -> List[gast.stmt]:
        old, new = self.namer.temp(), self.namer.temp()
        target = copy.deepcopy(stmt.target)
        load = copy.deepcopy(stmt.target)
        load.ctx = gast.Load()
        write = gast.Assign(targets=[target], value=_name(new), type_comment=None)
        gast.copy_location(write, stmt)
        anno.copyanno(stmt, write)
        return [_assign(old, load, stmt), _assign(new, gast.BinOp(left=_name(old), op=stmt.op, right=stmt.value), stmt),
                write]

    def _unpack(self, stmt: gast.Assign) -> List[gast.stmt]:
        targets, value = stmt.targets[0].elts, stmt.value
        if not isinstance(value, gast.Tuple) and all(isinstance(t, gast.Name) for t in targets) and \
                not (_loads(value) & self.active and is_differentiable(value)):
            whole = self.namer.temp()
            parts = [gast.Subscript(value=_name(whole), slice=_const(i), ctx=gast.Load()) for i in range(len(targets))]
            return [_assign(whole, value, stmt)] + [_assign(t.id, p, stmt) for t, p in zip(targets, parts)]
        split = _split_results(value, len(targets))
        if split is not None and all(isinstance(t, gast.Name) for t in targets):
            return [_assign(t.id, part, stmt) for t, part in zip(targets, split)]
        if not isinstance(value, gast.Tuple) or len(value.elts) != len(targets) or \
                not all(isinstance(t, gast.Name) for t in targets):
            _fail(stmt, "unpacking a value computed at run time into several names is not differentiable yet",
                  "index the result instead (`q = r[0]`), or return the parts from a helper and unpack its call.")
        reads = {n.id for e in value.elts for n in gast.walk(e) if isinstance(n, gast.Name)}
        if not reads & {t.id for t in targets}:
            return [_assign(t.id, v, stmt) for t, v in zip(targets, value.elts)]
        temps = [self.namer.temp() for _ in targets]
        return [_assign(t, v, stmt) for t, v in zip(temps, value.elts)] + \
            [_assign(t.id, _name(s), stmt) for t, s in zip(targets, temps)]

    def _named_test(self, stmt: gast.If) -> List[gast.stmt]:
        if isinstance(stmt.test, gast.Name):
            return [stmt]
        cond = self.namer.new("cond")
        self.tests.add(cond)
        pre = _assign(cond, stmt.test, stmt)
        stmt.test = _name(cond)
        return [pre, stmt]

    def _range_loop(self, stmt: gast.For) -> List[gast.stmt]:
        body = self.simple(stmt.body)
        it = stmt.iter
        if stmt.orelse:
            _fail(stmt, "`for ... else` is not supported", "set a flag before `break` and test it after the loop.")
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range" and \
                isinstance(stmt.target, gast.Name):
            stmt.body = body
            return [stmt]
        pre: List[gast.stmt] = []
        rebound = {n.id for s in body for n in gast.walk(s)
                   if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        it = self._evaluated_once(it, pre, stmt, rebound)
        k = self._counter(it, stmt.target) or self.namer.new("k")
        lowered = self._indexed(it, stmt.target, _name(k), stmt)
        if lowered is None:
            _fail(stmt, "reverse mode runs `for` loops over `range(...)`, an array's rows, `enumerate(...)` or "
                        "`zip(...)` of those", "loop over `range(len(x))` and index, or over a container "
                                               "(unrolled at compile time).")
        length, reads = lowered
        if not isinstance(length, gast.Name) and not self._is_len(length):
            count = self.namer.new("n")
            pre.append(_assign(count, length, stmt))
            length = _name(count)
        stmt.body = reads + body
        stmt.target = _name(k, True)
        stmt.iter = gast.Call(func=_name("range"), args=[length], keywords=[])
        return pre + [stmt]

    def _evaluated_once(self, it: gast.expr, pre: List[gast.stmt], origin: gast.stmt, rebound: Set[str]) -> gast.expr:
        """``it`` with each subscript it iterates over (``x[1:]``, ``x[::-2]``, also inside ``zip`` and
        ``enumerate``), and each name that the loop's body rebinds (``for row in x: x = x - 0.5``), assigned to
        a name before the loop, as Python evaluates it once: its rows are then read by index like any array's,
        from the value the loop started with."""
        if isinstance(it, gast.Subscript) or isinstance(it, gast.Name) and it.id in rebound:
            temp = self.namer.temp()
            pre.append(_assign(temp, it, origin))
            return _name(temp)
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id in ("enumerate", "zip"):
            it.args = [self._evaluated_once(a, pre, origin, rebound) for a in it.args]
        return it

    @staticmethod
    def _counter(it: gast.expr, target: gast.expr) -> Optional[str]:
        """The name that counts ``enumerate(seq)``'s steps (``i`` in ``for i, v in ...``): the loop's index."""
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "enumerate" and \
                len(it.args) == 1 and not it.keywords and isinstance(target, gast.Tuple) and \
                isinstance(target.elts[0], gast.Name):
            return target.elts[0].id
        return None

    @staticmethod
    def _is_len(node: gast.expr) -> bool:
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "len"

    def _indexed(self, it: gast.expr, target: gast.expr, k: gast.Name, origin: gast.stmt):
        """``(trip count, statements reading target k)`` for ``for target in it``, or None if unsupported.

        ``it`` is an array (its rows), ``range(...)``, ``enumerate(seq[, start])`` or ``zip(seq, ...)``,
        nested; the trip count of a zip is the shortest of its parts'.
        """
        func = it.func.id if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and not it.keywords \
            else None
        if isinstance(it, gast.Name) and isinstance(target, gast.Name):
            row = gast.Subscript(value=_name(it.id), slice=copy.deepcopy(k), ctx=gast.Load())
            return self._len(it), [_assign(target.id, row, origin)]
        if func == "range" and isinstance(target, gast.Name) and 1 <= len(it.args) <= 3:
            start = it.args[0] if len(it.args) > 1 else _const(0)
            step = it.args[2] if len(it.args) > 2 else _const(1)
            return self._len(it), self._range_value(start, step, target.id, k, origin)
        parts = it.args if func == "zip" else it.args[:1] if func == "enumerate" else None
        if not parts or not isinstance(target, gast.Tuple) or \
                len(target.elts) != (2 if func == "enumerate" else len(parts)):
            return None
        reads, lengths = [], []
        if func == "enumerate":
            count = target.elts[0]
            if not isinstance(count, gast.Name):
                return None
            if count.id != k.id:
                start = it.args[1] if len(it.args) > 1 else _const(0)
                reads += self._range_value(start, _const(1), count.id, k, origin)
            targets = target.elts[1:]
        else:
            targets = target.elts
        for part, sub in zip(parts, targets):
            lowered = self._indexed(part, sub, k, origin)
            if lowered is None:
                return None
            lengths.append(lowered[0])
            reads += lowered[1]
        length = lengths[0] if len(lengths) == 1 else gast.Call(func=_name("min"), args=lengths, keywords=[])
        return length, reads

    @staticmethod
    def _len(seq: gast.expr) -> gast.Call:
        return gast.Call(func=_name("len"), args=[copy.deepcopy(seq)], keywords=[])

    def _range_value(self, start: gast.expr, step: gast.expr, target: str, k: gast.Name,
                     origin: gast.stmt) -> List[gast.stmt]:
        """``target = start + k * step``, one operation per statement."""
        steps = copy.deepcopy(k)
        reads = []
        if not (isinstance(step, gast.Constant) and step.value == 1):
            offset = self.namer.temp()
            reads.append(_assign(offset, gast.BinOp(left=copy.deepcopy(k), op=gast.Mult(), right=copy.deepcopy(step)),
                                 origin))
            steps = _name(offset)
        if isinstance(start, gast.Constant) and start.value == 0:
            return reads + [_assign(target, steps, origin)]
        return reads + [_assign(target, gast.BinOp(left=copy.deepcopy(start), op=gast.Add(), right=steps), origin)]

    def _while(self, stmt: gast.While) -> List[gast.stmt]:
        body = self.simple(stmt.body)
        if stmt.orelse:
            _fail(stmt, "`while ... else` is not supported", "set a flag before `break` and test it after the loop.")
        if not (isinstance(stmt.test, gast.Constant) and stmt.test.value is True):
            cond = self.namer.new("cond")
            head = [_assign(cond, gast.UnaryOp(op=gast.Not(), operand=stmt.test), stmt),
                    gast.If(test=_name(cond), body=[gast.Break()], orelse=[])]
            body = head + body
        stmt.test = _const(True)
        stmt.body = body
        return self._rotate(stmt)

    def _rotate(self, stmt: gast.While) -> List[gast.stmt]:
        """``while True:`` that opens with its exit test and cannot exit elsewhere, as ``while go:``.

        ``while True: t = ...; if not t: break; rest`` runs exactly as
        ``t = ...; go = t; while go: rest; t = ...; go = t``, which needs no
        flag saying whether each iteration ran.
        """
        body = stmt.body
        k = next((i for i, s in enumerate(body) if not (isinstance(s, gast.Assign) and
                                                        isinstance(s.targets[0], gast.Name))), len(body))
        exit_test = body[k] if k < len(body) else None
        if not (isinstance(exit_test, gast.If) and not exit_test.orelse and len(exit_test.body) == 1 and
                isinstance(exit_test.body[0], gast.Break)) or \
                has_exit(body[k + 1:], (gast.Break, gast.Continue, gast.Return)):
            return [stmt]
        test, prefix = exit_test.test, body[:k]
        if prefix and isinstance(test, gast.Name) and prefix[-1].targets[0].id == test.id and \
                isinstance(prefix[-1].value, gast.UnaryOp) and isinstance(prefix[-1].value.op, gast.Not) and \
                test.id in self.tests:
            test, prefix = prefix[-1].value, prefix[:-1]  # ``cond = not t; if cond: break``
        keep = test.operand if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not) else \
            gast.UnaryOp(op=gast.Not(), operand=test)
        go = self.namer.new("go")
        head = prefix + [_assign(go, keep, exit_test)]
        stmt.test = _name(go)
        stmt.body = body[k + 1:] + copy.deepcopy(head)
        return head + [stmt]

    # ---- exits: return, break, continue (numbax.ast_passes.exits)
    def _store_return(self, stmt: gast.Return) -> List[gast.stmt]:
        values = stmt.value.elts if isinstance(stmt.value, gast.Tuple) else [stmt.value]
        return [_assign(slot, v, stmt) for slot, v in zip(self.out, values)]


def transform(fdef: gast.FunctionDef, namer: Namer, inputs=()) -> gast.FunctionDef:
    """Rewrite ``fdef`` (A-normal form) into the structured subset described above.

    ``inputs`` are the differentiated parameters: run-time tuples computed from
    them cannot be unpacked yet (inactive ones, such as ``n, m = x.shape``, can).
    """
    from numbax.ast_passes.analyses.activity import active_names

    inplace.transform(fdef, namer)
    _IndexedResults(namer).visit(fdef)
    active = active_names(fdef, inputs, is_differentiable) if inputs else frozenset()
    return _Canonicalize(fdef, namer, active).run()


_ITERABLES = ("range", "enumerate", "zip")


def _inline_iterables(it: gast.expr, before: List[gast.stmt]) -> gast.expr:
    """``it`` with the temporaries of A-normal form that hold its parts (``_t1 = zip(x, y)``) put back.

    The assignments of those temporaries leave ``before`` (A-normal form reads each temporary once).
    """
    if isinstance(it, gast.Name) and it.id.startswith("_t"):
        for i in range(len(before) - 1, -1, -1):
            stmt = before[i]
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) and \
                    stmt.targets[0].id == it.id:
                value = stmt.value
                if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.func.id in _ITERABLES:
                    del before[i]
                    return _inline_iterables(value, before)
                return it
    if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id in ("enumerate", "zip"):
        it.args = [_inline_iterables(a, before) for a in it.args]
    return it


class _IndexedResults(gast.NodeTransformer):
    """A tuple of results read only by constant indices (``r[1]``): one call per result read, in its place."""

    def __init__(self, namer: Namer):
        self.namer = namer
        self.parts = {}  # the tuple's name -> {index: the name of that result}

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        counts = {}  # (name, "load" | "store" | an index read) -> how many
        for n in gast.walk(node):
            if isinstance(n, gast.Name):
                key = (n.id, "load" if isinstance(n.ctx, gast.Load) else "store")
                counts[key] = counts.get(key, 0) + 1
            elif isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and \
                    isinstance(n.slice, gast.Constant) and type(n.slice.value) is int:
                counts[n.value.id, n.slice.value] = counts.get((n.value.id, n.slice.value), 0) + 1
            elif _checked_tuple(n) is not None:
                counts[_checked_tuple(n), "checked"] = counts.get((_checked_tuple(n), "checked"), 0) + 1
        for n in gast.walk(node):
            calls = _split_results(n.value) if isinstance(n, gast.Assign) and \
                isinstance(n.targets[0], gast.Name) else None
            if calls and counts.get((n.targets[0].id, "store")) == 1:
                name = n.targets[0].id
                uses = [i for i in range(len(calls)) if counts.get((name, i))]
                read = sum(counts[name, i] for i in uses) + counts.get((name, "checked"), 0)
                if uses and read == counts.get((name, "load")):
                    self.parts[name] = {i: self.namer.new(calls[i].func.attr.rpartition("_")[2]) for i in uses}
        return self.generic_visit(node) if self.parts else node

    def visit_Expr(self, node: gast.Expr):
        """The bounds check of a constant index into a split tuple goes (Numba checks it when compiling)."""
        return None if _checked_tuple(node.value) in self.parts else node

    def visit_Assign(self, node: gast.Assign):
        target = node.targets[0]
        if not (isinstance(target, gast.Name) and target.id in self.parts):
            return self.generic_visit(node)
        calls = _split_results(node.value)
        return [_assign(part, calls[i], node) for i, part in self.parts[target.id].items()]

    def visit_Subscript(self, node: gast.Subscript) -> gast.expr:
        if isinstance(node.value, gast.Name) and node.value.id in self.parts and isinstance(node.slice, gast.Constant):
            return _name(self.parts[node.value.id][node.slice.value])
        return self.generic_visit(node)


def _checked_tuple(node: gast.AST) -> Optional[str]:
    """``x`` where ``node`` is ``rt.check_index(x, k, axis, where)`` of a name and a constant ``k``, or
    ``rt.check_span(x, ...)`` of a name (both do nothing but for arrays), else None."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and
            isinstance(node.func.value, gast.Name) and node.func.value.id == "rt" and node.args and
            isinstance(node.args[0], gast.Name)):
        return None
    if node.func.attr == "check_span" or node.func.attr == "check_index" and len(node.args) == 4 and \
            isinstance(node.args[1], gast.Constant) and type(node.args[1].value) is int:
        return node.args[0].id
    return None


def _split_results(value: gast.expr, count: Optional[int] = None):
    """``np.linalg.slogdet(a)`` split: one call per result (``rt.slogdet_sign(a)``, ...), else None.

    ``count``: how many results the caller unpacks (None: any number).
    """
    from numbax.ast_passes.resolve import reference_node
    from numbax.ast_passes.analyses.primitives import application
    from numbax.primitives.linalg import SPLIT_RESULTS

    app = application(value) if isinstance(value, gast.Call) else None
    spellings = SPLIT_RESULTS.get(app.key) if app is not None and not isinstance(app.key, tuple) else None
    if spellings is None or (count is not None and len(spellings) != count):
        return None
    return [gast.Call(func=reference_node(s), args=copy.deepcopy(value.args), keywords=copy.deepcopy(value.keywords))
            for s in spellings]
