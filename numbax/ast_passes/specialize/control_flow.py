"""Statements during specialization: compile-time branches and loops vanish, run-time ones stay."""
from __future__ import annotations

import operator
from typing import Any, Dict, List, Optional, Tuple

import gast
import numpy as np

from numbax.ast_passes import anno, exits, run_time_checks
from numbax.ast_passes.analyses import nodes
from numbax.ast_passes.analyses.assigned import stored_names
from numbax.ast_passes.specialize import checks, dtypes
from numbax.ast_passes.specialize.materialize import name_node
from numbax.ast_passes.specialize.values import (AVal, Dyn, LocalFunction, MaybeBound, NeedStatic, Poison, RunTimeList,
                                                 contains_dyn, is_static_scalar)
from numbax.ast_passes.tree_copy import copy_tree

MAX_UNROLL = 1000


def _same(a: Any, b: Any) -> bool:
    """Whether two compile-time values are interchangeable at a join."""
    if a is b:
        return True
    if isinstance(a, Dyn) and isinstance(b, Dyn):
        return a.name is not None and a.name == b.name
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if is_static_scalar(a) or isinstance(a, (str, type(None))):
        return a == b
    return False


# the augmented assignments that change a compile-time list or dict itself, as Python's do
_IN_PLACE = {(list, gast.Add): operator.iadd, (list, gast.Mult): operator.imul, (dict, gast.BitOr): operator.ior}


def _flagged(stmts: List[gast.stmt], flags: Dict[str, str]) -> List[gast.stmt]:
    """``stmts`` with ``flag = True`` after each assignment of a name in ``flags`` (name -> flag), nested blocks
    too, and at the top of a loop whose target it is."""
    out = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list) and not isinstance(stmt, gast.FunctionDef):
                setattr(stmt, field, _flagged(getattr(stmt, field), flags))
        out.append(stmt)
        if isinstance(stmt, gast.For):
            stmt.body = [_set(stmt, flags[n]) for n in stored_names(stmt.target) if n in flags] + stmt.body
        elif isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
            out += [_set(stmt, flags[n]) for t in targets for n in stored_names(t) if n in flags]
    return out


def _set(origin: gast.stmt, flag: str) -> gast.stmt:
    stmt = gast.copy_location(nodes.assign(flag, gast.Constant(value=True, kind=None)), origin)
    anno.copyanno(origin, stmt)
    return stmt


def unread_flags_dropped(stmts: List[gast.stmt], flags: set) -> List[gast.stmt]:
    """``stmts`` without the assignments of the flags in ``flags`` that nothing reads (a variable assigned on
    some paths that no code after them reads); a flag read only into another flag lives as long as that one."""
    nodes = [n for s in stmts for n in gast.walk(s)]
    copies = [n for n in nodes if isinstance(n, gast.Assign) and len(n.targets) == 1 and
              isinstance(n.targets[0], gast.Name) and n.targets[0].id in flags and
              isinstance(n.value, gast.Name) and n.value.id in flags]
    copied = {id(n.value) for n in copies}
    live = {n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in flags and
            id(n) not in copied}
    grown = True
    while grown:
        more = {n.value.id for n in copies if n.targets[0].id in live} - live
        live |= more
        grown = bool(more)
    return _without_flags(stmts, flags - live)


def _without_flags(stmts: List[gast.stmt], dead: set) -> List[gast.stmt]:
    out = []
    for stmt in stmts:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) and \
                stmt.targets[0].id in dead:
            continue
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list) and not isinstance(stmt, gast.FunctionDef):
                setattr(stmt, field, _without_flags(getattr(stmt, field), dead) or
                        ([gast.Pass()] if field == "body" else []))
        out.append(stmt)
    return out


def _stand_in(aval: AVal, materializer) -> gast.expr:
    """A value of ``aval``'s type that nothing reads as the user's: ``np.empty((0, 0), np.float64)``, or a 0."""
    dtype = materializer.reference(aval.dtype.type)
    if aval.ndim == 0:
        return gast.Call(func=dtype, args=[gast.Constant(value=0, kind=None)], keywords=[])
    shape = gast.Tuple(elts=[gast.Constant(value=0, kind=None)] * aval.ndim, ctx=gast.Load())
    return gast.Call(func=materializer.reference(np.empty), args=[shape, dtype], keywords=[])


def _materializable(value: Any) -> bool:
    """Whether a compile-time value becomes a variable where run-time code may rebind it: a number, a constant
    array (one a closure or a global holds, carried by a loop), or a list, tuple or dict holding a number or a
    run-time value (``(1.0, 0)``, a ``lax.while_loop`` carry that enters as numbers and leaves as run-time
    values)."""
    return is_static_scalar(value) or isinstance(value, np.ndarray) or \
        (isinstance(value, (list, tuple, dict)) and _holds_a_leaf(value))


def _holds_a_leaf(value: Any) -> bool:
    """Whether a (possibly nested) list, tuple or dict holds a number or a run-time value."""
    if is_static_scalar(value) or isinstance(value, Dyn):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_a_leaf(v) for v in value)
    return isinstance(value, dict) and any(_holds_a_leaf(v) for v in value.values())


def _item_aval(iterable) -> Optional[AVal]:
    """The abstract value of what a run-time loop iterates over: a Python int over a ``range``
    (weak, as NumPy 2 treats it), a row of an array of known rank."""
    node = iterable.node if isinstance(iterable, Dyn) else None
    if isinstance(iterable, range) or (isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and
                                       node.func.id == "range"):
        return AVal(np.dtype(np.int64), 0, weak=True)
    aval = iterable.aval if isinstance(iterable, Dyn) else None
    if aval is not None and aval.ndim >= 1 and not aval.weak:
        return AVal(aval.dtype, aval.ndim - 1)
    return None


class ControlFlowMixin:
    """Statement execution for the ``Specializer``."""

    def exec_block(self, stmts: List[gast.stmt]) -> None:
        """Specialize statements in order; stop after one that always leaves the block."""
        for stmt in stmts:
            if self.terminated:
                return
            self.exec_stmt(stmt)

    def exec_stmt(self, stmt: gast.stmt) -> None:
        """Specialize one statement, reporting compile-time failures at its line."""
        outer, self.current = self.current, stmt
        try:
            method = getattr(self, "exec_" + type(stmt).__name__, None)
            if method is None:
                self.fail(stmt, f"{type(stmt).__name__} statements are not supported in compiled functions")
            method(stmt)
        except NeedStatic as exc:
            if self.builder.static_attempts:
                raise
            self.fail(stmt, f"{exc} is not supported",
                      hint="index lists and tuples with compile-time values (loop over them directly, "
                      "or over range(len(...)) of them), or use arrays.")
        finally:
            self.current = outer

    def exec_Assign(self, node):
        value = self.eval(node.value)
        if len(node.targets) > 1 and contains_dyn(value) and not isinstance(value, Dyn):
            value = self.snapshot(value)
        for target in node.targets:
            self.bind(target, value)

    def exec_AnnAssign(self, node):
        if node.value is not None:
            self.bind(node.target, self.eval(node.value))

    def exec_AugAssign(self, node):
        target = node.target
        if isinstance(target, gast.Name):
            current = self.eval(gast.Name(id=target.id, ctx=gast.Load(), annotation=None, type_comment=None))
            if isinstance(current, Dyn):
                value = self.eval(node.value)
                self.refuse_in_place(node, node.op, current.aval, value)
                check = checks.binop(node.op, current, value)
                if (check is not None and check[0] != "check_broadcast") or \
                        not self.updates_in_its_dtype(node.op, current, value):  # ``s /= d``, ``@=``, ``t += 0.5``
                    self.bind(target, self.binop(node, node.op, current, value))
                    return
                if self.builder.differentiated and self.narrows_in_place(node.op, current, value):
                    # ``y[:] = y + x``: a transformation rewrites ``y += x`` as ``y = y + x``, where NumPy casts the
                    # result to y's dtype
                    everything = gast.Slice(lower=None, upper=None, step=None)
                    self.bind(gast.Subscript(value=name_node(target.id), slice=everything, ctx=gast.Store()),
                              self.binop(node, node.op, current, value))
                    return
                written = name_node(target.id, gast.Store())
                operand = self.materialize(value)
                self.check_power_in_place(node, node.op, current, value, name_node(target.id), operand)
                if check is not None:  # arrays: updated in place (a view writes through), checked first
                    run_time_checks.mark(written, "check_in_place", self.check_origin(node))
                if not self.builder.differentiated and (dtypes.aval_of(current) is None or
                                                        checks.is_array(dtypes.aval_of(current))):
                    operand = _unaliased(operand, name_node(target.id, gast.Load()))
                self.emit(gast.AugAssign(target=written, op=node.op, value=operand))
                self.env[target.id] = Dyn(name_node(target.id), self.updated_aval(node.op, current, value))
                return
        load = copy_tree(target)
        for n in gast.walk(load):
            if hasattr(n, "ctx"):
                n.ctx = gast.Load()
        if isinstance(target, gast.Subscript):
            base = self.eval(target.value)
            if isinstance(base, Dyn):
                index = self.eval(target.slice)
                value = self.eval(node.value)
                self.refuse_in_place(node, node.op, dtypes.index(base.aval, index), value)
                operand = self.materialize(value)
                if isinstance(node.op, gast.Pow):  # ``x[i] **= k``: the element read for its check only
                    element = Dyn(self.user_subscript(target, base.expr(), index, gast.Load()),
                                  dtypes.index(base.aval, index))
                    self.check_power_in_place(node, node.op, element, value, element.node, operand)
                if not self.builder.differentiated and (dtypes.aval_of(value) is None or
                                                        checks.is_array(dtypes.aval_of(value))):
                    operand = _unaliased(operand, base.expr())  # ``x[::-1] += x[1]``: a row of x, before
                self.emit(gast.AugAssign(
                    target=self.user_subscript(target, base.expr(), index, gast.Store()),
                    op=node.op, value=operand))
                return
        current = self.eval(load)
        in_place = _IN_PLACE.get((type(current), type(node.op)))
        if in_place is not None:  # ``lst += [v]``, ``d |= {...}``: Python changes the container itself
            value = self.eval(node.value)
            self.refuse_writes_into_foreign(node, current, f"`{dtypes.operator_symbol(node.op)}=`", value)
            if self.runtime_depth > 0:
                self.fail(node, "updating a list or dict in place inside run-time control flow",
                          hint="containers are unrolled at compile time; fill a preallocated array instead.")
            self.bind(target, self.fold(node, in_place, current, self.snapshot(value)))
            return
        combined = gast.BinOp(left=load, op=node.op, right=node.value)
        self.bind(target, self.eval(combined))

    def exec_Expr(self, node):
        if isinstance(node.value, gast.Constant):
            return
        value = self.eval(node.value)
        if isinstance(value, Dyn):
            self.emit(gast.Expr(value=value.expr()))

    def exec_Pass(self, node):
        pass

    def exec_FunctionDef(self, node):
        self.env[node.name] = self.local_function(node)

    def exec_Assert(self, node):
        test = self.eval(node.test)
        msg = self.static(node.msg, "an assert message") if node.msg is not None else None
        if isinstance(test, Dyn):
            self.emit(gast.Assert(test=test.expr(), msg=None if msg is None else gast.Constant(value=msg, kind=None)))
        elif not test:
            self.fail(node, f"assertion failed while compiling: {msg or ''}")

    def exec_Raise(self, node):
        exc = self.eval(node.exc) if node.exc is not None else None
        self.emit(gast.Raise(exc=None if exc is None else self.materialize(exc), cause=None))
        self.terminated = True

    def exec_Return(self, node):
        value = self.eval(node.value) if node.value is not None else None
        self.record_return(node, value)
        self.terminated = True

    # -- branches ----------------------------------------------------------------

    def exec_If(self, node):
        test = self.eval(node.test)
        if not isinstance(test, Dyn):
            self.exec_block(node.body if test else node.orelse)
            return
        then = self.run_branch(node.body)
        orelse = self.run_branch(node.orelse)
        if not (then[2] or orelse[2]):
            self.keep_dtypes(node, "`if`", orelse[1], [then[1]])
        self.join(then, orelse)
        stmt = gast.If(test=test.expr(), body=then[0] or [gast.Pass()], orelse=orelse[0])
        self.emit(stmt)
        self.terminated = then[2] and orelse[2]

    def run_branch(self, stmts) -> Tuple[List[gast.stmt], Dict[str, Any], bool]:
        """Specialize a block under a run-time condition, on a copy of the environment."""
        saved = (self.block, self.env, self.terminated)
        self.block, self.env, self.terminated = [], dict(self.env), False
        self.runtime_depth += 1
        try:
            self.exec_block(stmts)
            return self.block, self.env, self.terminated
        finally:
            self.runtime_depth -= 1
            self.block, self.env, self.terminated = saved

    def join(self, then, orelse) -> None:
        """Merge the environments after a run-time ``if``; numbers known on one side become variables."""
        live = [b for b in (then, orelse) if not b[2]]
        if not live:
            return
        if len(live) == 1:
            self.env = dict(live[0][1])
            return
        (block_a, env_a, _), (block_b, env_b, _) = live
        merged = {}
        for name in set(env_a) | set(env_b):
            a, b = env_a.get(name, _UNSET), env_b.get(name, _UNSET)
            if _same(a, b) and (isinstance(a, MaybeBound) or isinstance(b, MaybeBound)) and \
                    getattr(a, "flag", None) != getattr(b, "flag", None):
                merged[name] = self._maybe_bound(name, a, ((block_a, a), (block_b, b)))
            elif _same(a, b):
                merged[name] = a
            elif a is _UNSET or b is _UNSET:
                value = a if b is _UNSET else b
                if isinstance(value, Dyn):
                    merged[name] = self._maybe_bound(name, value, ((block_a, a), (block_b, b)))
                else:
                    merged[name] = Poison(name, "is assigned on only some paths")
            elif (_materializable(a) or isinstance(a, Dyn)) and (_materializable(b) or isinstance(b, Dyn)):
                merged[name] = self._materialize_in(block_a, env_a, name)
                if not _same(merged[name], self._materialize_in(block_b, env_b, name)):
                    merged[name] = Poison(name, "has a different structure on different paths")
                elif isinstance(a, MaybeBound) or isinstance(b, MaybeBound):  # a side's reads still check
                    merged[name] = self._maybe_bound(name, merged[name], ((block_a, a), (block_b, b)))
            else:
                merged[name] = Poison(name, "has different compile-time values on different paths")
        self.env = merged

    def _maybe_bound(self, name: str, value: Dyn, sides) -> MaybeBound:
        """``value`` of ``name`` after a join whose ``sides`` (each its block and its value of ``name``) do not
        all assign it: a variable whose reads check a flag that each side sets, true where it assigned it
        (Python raises UnboundLocalError where it did not). A side that did not assign it gives it a stand-in of
        its type (an empty array, a zero) where its abstract value is known, so that code a transformation
        writes around it (a zero cotangent shaped like it) reads a bound name."""
        flag = self.namer.new(f"{name}_assigned")
        self.flags.add(flag)
        aval = value.aval
        stand_in = value.name == name and aval is not None and aval.dtype.kind in "biufc" and not aval.weak
        for block, side in sides:
            if side is _UNSET:
                made = [nodes.assign(flag, gast.Constant(value=False, kind=None))]
                made += [nodes.assign(name, _stand_in(aval, self.materializer))] if stand_in else []
            else:
                made = [nodes.assign(flag, name_node(side.flag) if isinstance(side, MaybeBound) else
                                gast.Constant(value=True, kind=None))]
            for stmt in made:  # at the `if`'s line, as ``emit`` places what it writes
                if self.current is not None:
                    gast.copy_location(stmt, self.current)
                    anno.copyanno(self.current, stmt)
                block.append(stmt)
        return MaybeBound(value, flag)

    def _materialize_in(self, block, env, name) -> Any:
        saved = (self.block, self.env)
        self.block, self.env = block, env
        try:
            self.materialize_name(name)
            return self.env[name]
        finally:
            self.block, self.env = saved

    # -- loops -------------------------------------------------------------------

    def exec_For(self, node):
        if node.orelse:
            self.exec_block(exits.loop_else(node, self.namer))
            return
        iterable = self.eval(node.iter)
        if isinstance(iterable, RunTimeList):  # its items are the rows of its array
            iterable = iterable.items
        if isinstance(iterable, range) and len(iterable) > MAX_UNROLL and self.lists_appended(node):
            iterable = Dyn(self.materialize(iterable))  # a list grown in a long loop: made at run time
        if isinstance(iterable, Dyn) and self.lists_appended(node):
            return self.append_loop(node, iterable, self.lists_appended(node))
        if isinstance(iterable, range) and self.lists_appended(node):
            return self.unroll(node, iterable)
        if isinstance(iterable, range):
            self.builder.static_attempts += 1
            try:
                return self.runtime_loop(node, iterable)
            except NeedStatic:
                pass
            finally:
                self.builder.static_attempts -= 1
            return self.unroll(node, iterable)
        if isinstance(iterable, Dyn):
            return self.runtime_loop(node, iterable)
        return self.unroll(node, iterable)

    def unroll(self, node, iterable) -> None:
        """A loop over a compile-time container: the body once per element."""
        try:
            items = list(iterable)
        except TypeError:
            self.fail(node.iter, f"cannot loop over a {type(iterable).__name__}")
        if len(items) > MAX_UNROLL:
            self.fail(node.iter, f"this loop would be unrolled {len(items)} times (more than {MAX_UNROLL})",
                      hint="make the bounds run-time values or loop over an array.")
        if exits.has_exit(node.body, (gast.Break, gast.Continue)):
            self.unroll_with_flags(node, items)
            return
        for item in items:
            self.bind(node.target, item)
            self.exec_block(node.body)
            if self.terminated:
                break

    def unroll_with_flags(self, node, items) -> None:
        """Unroll a loop with ``break``/``continue``: ``go``/``run`` flags, folded where the exit is static.

        Each iteration reads ``run = go``, then binds the target and runs the
        body under ``if run:``, so after a ``break`` the target keeps the value
        it had in the iteration that broke, as in Python.
        """
        flags, body = exits.ExitLowering(self.namer, native=True).unrolled_body(node)
        self.env[flags.go] = True
        item_name = self.namer.new("item")
        iteration = [at_line(node, gast.Assign(targets=[copy_tree(node.target)], value=name_node(item_name),
                                           type_comment=None))] + body
        guarded = [at_line(node, gast.If(test=name_node(flags.run), body=iteration, orelse=[]))]
        if flags.run != flags.go:
            guarded.insert(0, exits.flag(flags.run, flags.go, node))
        for item in items:
            self.env[item_name] = item
            self.exec_block(guarded)
            if self.terminated or self.env[flags.go] is False:
                break
        self.env.pop(item_name, None)

    def runtime_loop(self, node, iterable) -> None:
        """A loop kept in generated code: ``for`` over a range or array."""
        from numbax.ast_passes.specialize.specializer import target_names

        names = target_names(node.target)
        if not names:
            self.fail(node.target, "loop targets must be names")
        iter_node = self.materialize(iterable)
        body, env = self.loop_body(node, bound=names, aval=_item_aval(iterable) if len(names) == 1 else None)
        self.emit(gast.For(target=copy_tree(node.target), iter=iter_node, body=body, orelse=[],
                           type_comment=None))
        self.env = env

    def exec_While(self, node):
        if node.orelse:
            self.exec_block(exits.loop_else(node, self.namer))
            return
        self.prepare_loop(node.body)
        saved_block, self.block = self.block, []
        test = self.eval(node.test)
        setup, self.block = self.block, saved_block
        if not isinstance(test, Dyn) and not test:
            return
        if isinstance(test, Dyn) and setup:
            exit_if = gast.If(test=gast.UnaryOp(op=gast.Not(), operand=test.expr()), body=[gast.Break()], orelse=[])
            gast.copy_location(exit_if, node)
            prologue, test_node = setup + [exit_if], gast.Constant(value=True, kind=None)
        else:
            prologue, test_node = [], test.expr() if isinstance(test, Dyn) else gast.Constant(value=True, kind=None)
        body, env = self.loop_body(node, bound=[])
        self.emit(gast.While(test=test_node, body=prologue + body, orelse=[]))
        self.env = env
        # `while True:` without a `break` leaves only through `return` (or `raise`)
        self.terminated = not isinstance(test, Dyn) and not exits.has_exit(node.body, (gast.Break,))

    def prepare_loop(self, body) -> None:
        """Numbers the loop body reassigns become variables before the loop."""
        from numbax.ast_passes.specialize.specializer import assigned_names

        for name in sorted(assigned_names(body)):
            if name in self.env and _materializable(self.env[name]):
                self.materialize_name(name)

    def loop_body(self, loop: gast.stmt, bound: List[str], aval: Optional[AVal] = None):
        """Specialize a run-time loop's body; the environment must be the same at both ends, dtypes included.

        ``bound`` are the loop's targets; ``aval``, the abstract value of a single target, where known.
        """
        from numbax.ast_passes.specialize.specializer import assigned_names

        stmts = loop.body
        self.prepare_loop(stmts)
        entry = dict(self.env)
        for name in bound:
            entry[name] = Dyn(name_node(name), aval)
        # a variable the loop assigns first is unbound after it where no iteration assigned it (none ran)
        flags = {name: self.namer.new(f"{name}_assigned") for name in sorted(assigned_names(stmts))
                 if name not in entry and name in self.local_names}
        self.flags.update(flags.values())
        # one maybe-assigned before it keeps its flag, which an assignment in the body sets
        carried = {name: value.flag for name, value in entry.items() if isinstance(value, MaybeBound)}
        saved = (self.block, self.env, self.terminated)
        self.block, self.env, self.terminated = [], dict(entry), False
        self.runtime_depth += 1
        self.break_envs.append((entry, []))
        try:
            self.exec_block(stmts)
            body, after = _flagged(self.block, {**carried, **flags}), self.env
        finally:
            self.runtime_depth -= 1
            self.block, self.env, self.terminated = saved
            breaks = self.break_envs.pop()[1]
        flags = {name: flag for name, flag in flags.items() if flag in assigned_names(body)}
        for flag in flags.values():
            self.emit(nodes.assign(flag, gast.Constant(value=False, kind=None)))
        self.keep_dtypes(loop, f"`{type(loop).__name__.lower()}` loop", entry, [after] + breaks)
        self.keep_ndims(loop, entry, [after] + breaks)
        for env in breaks:  # variables first assigned on the way to a `break` live on after the loop
            after.update((k, v) for k, v in env.items() if k not in after and isinstance(v, Dyn))
        for name, value in entry.items():
            if name in after and not _same(value, after[name]) and not isinstance(after[name], LocalFunction):
                self.fail(stmts[0], f"`{name}` changes its kind or structure inside this loop",
                          hint="keep a variable's kind (array, number, container shape) the same in every "
                          "iteration.")
        flags.update(carried)
        after = {name: MaybeBound(value, flags[name]) if name in flags and isinstance(value, Dyn) else value
                 for name, value in after.items()}
        return body or [gast.Pass()], {**entry, **after}

    def keep_ndims(self, loop: gast.stmt, before: Dict[str, Any], others: List[Dict[str, Any]]) -> None:
        """Refuse, at ``loop``, a variable that the loop turns from a number into an array or changes the
        dimensions of (``total = 0.0`` summing rows): after no iteration it is still the number, which code
        compiled for the array cannot hold (as JAX's ``fori_loop`` needs one shape for its carry)."""
        for other in others:
            for name in sorted(set(before) & set(other)):
                a, b = (v.aval if isinstance(v, Dyn) else None for v in (before[name], other[name]))
                if a is not None and b is not None and a.ndim != b.ndim:
                    self.fail(loop, f"`{name}` has {_dimensions(a)} before this loop and {_dimensions(b)} after "
                              "an iteration", hint=f"give `{name}` its final shape before the loop, e.g. "
                              f"`{name} = np.zeros(...)`, so that it keeps one shape on every path.")

    def keep_dtypes(self, node: gast.stmt, construct: str, before: Dict[str, Any], others: List[Dict[str, Any]]):
        """Refuse, at ``node``, a variable that reaches a join with two dtypes (``n = n * 0.5`` of an integer
        ``n`` in a loop or a branch): NumPy's dtype after it depends on the data, which compiled code cannot
        follow (as JAX's ``while_loop`` and ``cond`` need one type on every path)."""
        from numbax.errors import NumbaxDtypeError

        for other in others:
            for name in sorted(set(before) & set(other)):
                change = dtypes.changed_dtype(before[name], other[name])
                if change is not None:
                    raise NumbaxDtypeError(
                        f"`{name}` has dtype {change[0]} or {change[1]} after this {construct}, depending on "
                        "the path taken, which compiled code cannot follow", self.origin(node),
                        hint=f"cast `{name}` before the {construct} (`{name} = {name}.astype(np."
                        f"{np.result_type(*change)})`), so that it keeps one dtype on every path.")

    def exec_Break(self, node):
        self.leave_iteration()
        self.break_envs[-1][1].append(self.env)
        self.emit(gast.Break())
        self.terminated = True

    def exec_Continue(self, node):
        self.leave_iteration()
        self.emit(gast.Continue())
        self.terminated = True

    def leave_iteration(self) -> None:
        """Before ``break``/``continue``: numbers the loop carries as variables are written to them."""
        entry = self.break_envs[-1][0]
        for name, value in list(self.env.items()):
            if isinstance(entry.get(name), Dyn) and _materializable(value):
                self.materialize_name(name)


def _dimensions(aval: AVal) -> str:
    return "0 dimensions" if aval.ndim == 0 else f"{aval.ndim} dimension{'s' * (aval.ndim > 1)}"


def at_line(origin: gast.stmt, stmt: gast.stmt) -> gast.stmt:
    """``stmt`` placed at ``origin``'s line (a statement numbax writes for the user's loop)."""
    gast.copy_location(stmt, origin)
    anno.copyanno(origin, stmt)
    return stmt


class _Unset:
    def __repr__(self):
        return "UNSET"


_UNSET = _Unset()


_FRESH = (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Constant)


def _unaliased(operand: gast.expr, array: gast.expr) -> gast.expr:
    """The operand of the user's ``array op= operand`` of arrays (``array`` the one written, or the array a
    written slice is of), read as NumPy reads it, before the update:
    ``rt.unaliased(operand, array)`` copies it where it overlaps ``array`` (``y /= y[::-1]``), which Numba's
    in-place operators would read while writing. An operand that an operation computes is fresh as it is.
    (Reverse mode reads it before the update anyway: its forward sweep writes no array in place.)"""
    if isinstance(operand, _FRESH):
        return operand
    return gast.Call(func=gast.Attribute(value=name_node("rt", gast.Load()), attr="unaliased", ctx=gast.Load()),
                     args=[operand, array], keywords=[])
