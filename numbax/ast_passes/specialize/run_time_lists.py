"""Lists whose length is known only at run time, held as the array that stacks their items.

A list comprehension or generator expression over a run-time ``range`` or the rows of an array, and a list
that a ``for`` loop of run-time length appends to once per iteration (``out.append(v)`` at the top level of
the loop's body), become one array with a row per item (a ``RunTimeList``). The loop stays a loop that
writes the rows, so every transformation sees index writes it knows (``lax.scan`` stacks its outputs the
same way). A list that starts empty takes its row shape from its first item: the loop's first iteration
runs before the loop, and an empty list is refused when the code runs (``rt.check_list_length``). So::

    ys = [np.sin(x[i]) for i in range(n)]

is specialized as::

    length = len(range(n))
    rt.check_list_length(length, 'f.py:2:9')
    i = 0
    item = np.sin(x[i])
    items = rt.stack_buffer(item, length)
    items[0] = item
    for k in range(1, length):
        i = 0 + k * 1
        items[k] = np.sin(x[i])   # after rt.check_list_item(items, ..., 'f.py:2:9') for array items

What such a list can do: ``np.stack`` (axis 0), ``np.array`` and ``np.asarray`` (no keywords), ``sum``,
``len``, ``list``, indexing by an integer, and ``for``; anything else is refused at the user's line.
"""
from __future__ import annotations

from typing import Any, Dict, List

import gast
import numpy as np

from numbax.ast_passes import anno, exits, tree_copy
from numbax.ast_passes.specialize.control_flow import at_line
from numbax.ast_passes.specialize.materialize import name_node
from numbax.ast_passes.specialize.values import AVal, Dyn, RunTimeList
from numbax.runtime.checks import check_list_item, check_list_length
from numbax.runtime.scan import stack_buffer

_INT = AVal(np.dtype(np.int64), 0, weak=True)
_KINDS = "biufc"  # a weak Python number of an earlier kind fits an array of a later one (NumPy 2's rule)
# consumers that take the list as the array of its items (axis 0): what they give is that array
_AS_ARRAY = {np.stack, np.array, np.asarray}
_HINT = ("a list made at run time is held as the array of its items: pass np.stack(items) (or np.array) where "
         "an array does, or write the loop into a preallocated array (out = np.empty((n,) + shape); out[i] = ...).")


def _append_item(spec, node, args: List[Any], kwargs: Dict[str, Any]) -> None:
    """``items[index] = item`` for one ``append``: refused where the item's dtype or rank is not the list's,
    checked at run time where its shape may not be (NumPy's ``stack`` needs one shape)."""
    items, index, item = args
    if getattr(items, "aval", None) is None:
        spec.fail(node, "an append, in a loop of run-time length, to a list whose items are not arrays or "
                  "numbers (such a list is held as one array, whose dtype and rank its first item sets)",
                  hint="keep arrays or numbers of one dtype in the list, or write the loop into a preallocated "
                  "array (out = np.empty((n,) + shape); out[i] = ...).")
    row = AVal(items.aval.dtype, items.aval.ndim - 1)
    aval = item.aval if isinstance(item, Dyn) else AVal.of(item)
    fits = aval is not None and aval.ndim == row.ndim and (
        aval.dtype == row.dtype or aval.weak and _KINDS.index(aval.dtype.kind) <= _KINDS.index(row.dtype.kind))
    if not fits:
        spec.fail(node, f"an item of {_described(aval)} appended to a list of items of {_described(row)}, made "
                  "at run time (held as one array, whose dtype and rank its first item sets)",
                  hint="give every item one dtype and rank (cast with .astype, or np.float64(v)).")
    if row.ndim > 0 and isinstance(item, Dyn) and item.name in _written_in_place(spec.fdef):
        spec.fail(node, f"the array `{item.name}`, written in place in this function, appended to a list made at "
                  "run time: the list holds a copy of its items, where Python's would see the later writes",
                  hint=f"append a copy (`{item.name}.copy()`) or a new array, and keep writing into the old one.")
    if row.ndim > 0:
        spec.emit(gast.Expr(value=gast.Call(func=spec.materializer.reference(check_list_item),
                                            args=[items.expr(), spec.materialize(item),
                                                  gast.Constant(value=_where(spec, node), kind=None)],
                                            keywords=[])))
    target = gast.Subscript(value=items.expr(), slice=spec.materialize(index), ctx=gast.Store())
    spec.emit(gast.Assign(targets=[target], value=spec.materialize(item), type_comment=None))


def append_item(items: np.ndarray, index: int, item: Any) -> None:
    """``items[index] = item``: one ``append`` to a list made at run time (specialized by ``_append_item``)."""
    items[index] = item


append_item._numbax_specialize = _append_item


def _written_in_place(fdef: gast.FunctionDef) -> set:
    """The names that ``fdef`` writes into (``x[i] = v``, ``x += v``, ``x[i] += v``)."""
    names = set()
    for node in gast.walk(fdef):
        target = node.target if isinstance(node, gast.AugAssign) else None
        for store in (node.targets if isinstance(node, gast.Assign) else [target] if target is not None else []):
            while isinstance(store, gast.Subscript):
                store = store.value
                if isinstance(store, gast.Name):
                    names.add(store.id)
            if isinstance(node, gast.AugAssign) and isinstance(store, gast.Name):
                names.add(store.id)
    return names


def _described(aval) -> str:
    if aval is None:
        return "an unknown kind"
    return f"dtype {aval.dtype} and {aval.ndim} dimension{'s' * (aval.ndim != 1)}"


def _where(spec, node) -> str:
    origin = spec.origin(node)
    return origin.position() if origin is not None else ""


def _appended(stmt: gast.stmt, lists) -> Any:
    """The name of the list ``stmt`` appends to (``name.append(v)``, ``name`` one of ``lists``), else None."""
    call = stmt.value if isinstance(stmt, gast.Expr) else None
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "append" and \
            isinstance(call.func.value, gast.Name) and call.func.value.id in lists and len(call.args) == 1 and \
            not call.keywords:
        return call.func.value.id
    return None


class RunTimeListsMixin:
    """Lists of run-time length for the ``Specializer``."""

    def lists_appended(self, loop: gast.For) -> Dict[str, int]:
        """The lists that ``loop``'s body appends to at its top level -> how many items each holds now."""
        lists = {name for name, value in self.env.items() if type(value) is list}
        found = [_appended(stmt, lists) for stmt in loop.body]
        return {name: len(self.env[name]) for name in found if name is not None}

    def append_loop(self, loop: gast.For, iterable: Dyn, lists: Dict[str, int]) -> None:
        """``loop`` over a run-time ``iterable``, appending to ``lists`` once per iteration: each list becomes a
        ``RunTimeList`` (module docstring)."""
        self.refuse_other_uses(loop, lists)
        length = self.held("length", Dyn(gast.Call(func=name_node("len"), args=[iterable.expr()], keywords=[]), _INT))
        items = self.item_of(loop, iterable)
        buffers = {name: self.namer.new(f"{name}_items") for name in lists}
        for name, count in lists.items():
            if count:  # its row shape is known: room for what it holds and one item per iteration
                self.start_list(loop, name, buffers[name], length, count)
        start = 0
        if not all(lists.values()):
            self.exec_stmt(at_line(loop, gast.Expr(value=self.helper_call(check_list_length, [
                tree_copy.copy_tree(length), gast.Constant(value=_where(self, loop), kind=None)]))))
            self.exec_block(self.iteration(loop, items(gast.Constant(value=0, kind=None)),
                                           gast.Constant(value=0, kind=None), lists, buffers, length, peeled=True))
            start = 1
        step = self.namer.new("k")
        body = self.iteration(loop, items(name_node(step)), name_node(step), lists, buffers, length, peeled=False)
        bounds = [gast.Constant(value=start, kind=None), tree_copy.copy_tree(length)]
        self.exec_stmt(at_line(loop, gast.For(target=name_node(step, gast.Store()),
                                          iter=gast.Call(func=name_node("range"), args=bounds, keywords=[]),
                                          body=body, orelse=[], type_comment=None)))
        for name in lists:
            self.env[name] = RunTimeList(self.env[buffers[name]])

    def refuse_other_uses(self, loop: gast.For, lists: Dict[str, int]) -> None:
        """A list that the loop appends to is written once per iteration and read nowhere in it."""
        if exits.has_exit(loop.body, (gast.Break, gast.Continue, gast.Return)):
            self.fail(loop, "a loop of run-time length that appends to a list and may leave an iteration early "
                      "(`break`, `continue`, `return`)", hint=_HINT)
        for stmt in loop.body:
            own = _appended(stmt, lists)
            for node in gast.walk(stmt):
                if isinstance(node, gast.Name) and node.id in lists and not (own == node.id and
                                                                           node is stmt.value.func.value):
                    self.fail(node, f"`{node.id}` is used inside a loop of run-time length that appends to it",
                              hint=_HINT)
        seen = [_appended(stmt, lists) for stmt in loop.body]
        for name in lists:
            if seen.count(name) > 1:
                self.fail(loop, f"`{name}` is appended to twice in one iteration of a loop of run-time length",
                          hint=_HINT)

    def start_list(self, loop: gast.For, name: str, buffer: str, length: gast.Name, count: int) -> None:
        """Room for a list that holds ``count`` items before the loop, and those items written."""
        held = self.env[name]
        room = self.call_value(loop, stack_buffer, [held[0], self.binop(loop, gast.Add(), self.eval(length), count)],
                               {})
        self.emit_assign(buffer, room)
        self.env[buffer] = Dyn(name_node(buffer), room.aval)
        for k, item in enumerate(held):
            _append_item(self, loop, [self.env[buffer], k, item], {})

    def iteration(self, loop, target_value: gast.expr, index: gast.expr, lists, buffers, length: gast.Name,
                  peeled: bool) -> List[gast.stmt]:
        """One iteration of ``loop``'s body: its target bound, each ``append`` a write at ``index``."""
        body = [at_line(loop, gast.Assign(targets=[tree_copy.copy_tree(loop.target)], value=target_value,
                                      type_comment=None))]
        for stmt in loop.body:
            name = _appended(stmt, lists)
            if name is None:
                body.append(stmt)
                continue
            item = stmt.value.args[0]
            position = index if not lists[name] else gast.BinOp(left=tree_copy.copy_tree(index), op=gast.Add(),
                                                                right=gast.Constant(value=lists[name], kind=None))
            if peeled and not lists[name]:  # the first item: the array takes its shape
                first = self.namer.new(f"{name}_first")
                body.append(at_line(stmt, gast.Assign(targets=[name_node(first, gast.Store())], value=item,
                                                  type_comment=None)))
                body.append(at_line(stmt, gast.Assign(
                    targets=[name_node(buffers[name], gast.Store())],
                    value=self.helper_call(stack_buffer, [name_node(first), tree_copy.copy_tree(length)]), type_comment=None)))
                item = name_node(first)
            body.append(at_line(stmt, gast.Expr(value=self.helper_call(
                append_item, [name_node(buffers[name]), position, item]))))
        return body

    def held(self, base: str, value: Dyn) -> gast.Name:
        """A fresh variable that holds ``value`` from now on (the statements written here are specialized,
        so they name what they read)."""
        name = self.namer.new(base)
        self.env[name] = self.snapshot(value)
        return name_node(name)

    def helper_call(self, helper, args: List[gast.expr]) -> gast.Call:
        """A call of one of numbax's own functions, bound to a fresh name (the user's names cannot hide it)."""
        name = self.namer.new(helper.__name__)
        self.env[name] = helper
        return gast.Call(func=name_node(name), args=args, keywords=[])

    def item_of(self, loop: gast.For, iterable: Dyn):
        """How the loop's target is computed from the iteration's number: ``start + k * step`` over a
        ``range``, ``x[k]`` over an array's rows."""
        node = iterable.node
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "range":
            args = [Dyn(a, _INT) for a in node.args]
            start = self.held("start", args[0]) if len(args) > 1 else gast.Constant(value=0, kind=None)
            step = self.held("step", args[2]) if len(args) > 2 else gast.Constant(value=1, kind=None)
            return lambda k: gast.BinOp(left=tree_copy.copy_tree(start), op=gast.Add(), right=gast.BinOp(
                left=k, op=gast.Mult(), right=tree_copy.copy_tree(step)))
        if iterable.aval is not None and iterable.aval.ndim >= 1:
            rows = self.held("rows", iterable)
            return lambda k: gast.Subscript(value=rows, slice=k, ctx=gast.Load())
        self.fail(loop.iter, "a list grown over this run-time iterable (only a `range` or an array's rows)",
                  hint="loop over range(len(x)) and index the arrays.")

    def run_time_comprehension(self, node: gast.expr, elt: gast.expr, gen: gast.comprehension,
                               iterable: Any) -> RunTimeList:
        """``[elt for target in iterable]`` over a run-time ``iterable``: the loop that appends ``elt``, its
        target renamed (a comprehension's variables are its own)."""
        if gen.ifs:
            self.fail(gen.ifs[0], "a condition in a comprehension over a run-time value (its length would "
                      "depend on the data)", hint="keep every item and mask with np.where, or write the loop.")
        from numbax.ast_passes.specialize.specializer import target_names

        names = target_names(gen.target)
        if not names:
            self.fail(gen.target, "comprehension targets must be names")
        fresh = {name: self.namer.new(name) for name in names}
        target, elt = (_renamed(tree_copy.copy_tree(n), fresh) for n in (gen.target, elt))
        items = self.namer.new("items")
        append = gast.Call(func=gast.Attribute(value=name_node(items), attr="append", ctx=gast.Load()),
                           args=[elt], keywords=[])
        loop = gast.For(target=target, iter=gen.iter, body=[gast.Expr(value=append)], orelse=[], type_comment=None)
        for sub in gast.walk(loop):
            if isinstance(sub, gast.stmt):
                gast.copy_location(sub, node)
                anno.setanno(sub, anno.Key.ORIGIN, self.origin(node))
        self.env[items] = []
        self.append_loop(loop, iterable.items if isinstance(iterable, RunTimeList) else iterable, {items: 0})
        return self.env.pop(items)

    def list_call(self, node: gast.expr, func: Any, args: List[Any], kwargs: Dict[str, Any]) -> Any:
        """A call of a NumPy function or builtin with a ``RunTimeList`` among its arguments."""
        held = args[0] if args and isinstance(args[0], RunTimeList) else None
        rest = [a for a in list(args[1:]) + list(kwargs.values()) if isinstance(a, RunTimeList)]
        if held is None or rest:
            self.fail(node, f"a list made at run time passed to `{_name(func)}`", hint=_HINT)
        if func is len and len(args) == 1 and not kwargs:
            return Dyn(gast.Call(func=name_node("len"), args=[held.items.expr()], keywords=[]), _INT)
        if func is list and len(args) == 1 and not kwargs:
            return held
        if func is sum and set(kwargs) <= {"start"} and len(args) + len(kwargs) <= 2:
            return self.list_sum(node, held, args[1] if len(args) == 2 else kwargs.get("start", 0))
        if func in _AS_ARRAY:
            options = dict(zip(("axis",), args[1:])) if func is np.stack else {}
            options.update(kwargs)
            if len(args) <= 1 + len(options) - len(kwargs) and options in ({}, {"axis": 0}) and \
                    (func is np.stack or not options):
                return self.call_value(node, np.copy, [held.items], {})  # NumPy's result is a new array
        self.fail(node, f"a list made at run time passed to `{_name(func)}`"
                  + (" with these arguments (held as the array of its items: axis 0, no dtype)"
                     if func in _AS_ARRAY else ""), hint=_HINT)

    def list_sum(self, node: gast.expr, held: RunTimeList, start: Any) -> Dyn:
        """Builtin ``sum`` of a list made at run time: ``start + items[0] + items[1] + ...`` in a loop, as
        Python adds them (the list is never empty)."""
        items, total, step = (self.namer.new(n) for n in ("items", "total", "k"))
        self.env[items] = held.items
        first = gast.Subscript(value=name_node(items), slice=gast.Constant(value=0, kind=None), ctx=gast.Load())
        value = self.binop(node, gast.Add(), start, self.eval(first))
        self.emit_assign(total, value)
        self.env[total] = Dyn(name_node(total), value.aval)
        add = gast.Assign(targets=[name_node(total, gast.Store())], type_comment=None, value=gast.BinOp(
            left=name_node(total), op=gast.Add(),
            right=gast.Subscript(value=name_node(items), slice=name_node(step), ctx=gast.Load())))
        bounds = [gast.Constant(value=1, kind=None), gast.Call(func=name_node("len"), args=[name_node(items)],
                                                              keywords=[])]
        loop = gast.For(target=name_node(step, gast.Store()), body=[add], orelse=[], type_comment=None,
                        iter=gast.Call(func=name_node("range"), args=bounds, keywords=[]))
        for sub in gast.walk(loop):
            if isinstance(sub, gast.stmt):
                gast.copy_location(sub, node)
                anno.setanno(sub, anno.Key.ORIGIN, self.origin(node))
        self.exec_stmt(loop)
        return self.env.pop(total)

    def list_item(self, node: gast.Subscript, held: RunTimeList, index: Any) -> Dyn:
        """``items[i]`` of a list made at run time, for an integer ``i``: a row of its array."""
        aval = index.aval if isinstance(index, Dyn) else AVal.of(index)
        if isinstance(index, (bool, np.bool_)) or aval is None or aval.ndim != 0 or aval.dtype.kind not in "iu":
            self.fail(node, "indexing a list made at run time with anything but an integer",
                      hint="index np.stack(items), the array of its items, instead.")
        row = AVal(held.items.aval.dtype, held.items.aval.ndim - 1)
        return Dyn(self.user_subscript(node, held.items.expr(), index, gast.Load()), row)


def _name(func: Any) -> str:
    return getattr(func, "__name__", type(func).__name__)


def _renamed(node: gast.AST, names: Dict[str, str]) -> gast.AST:
    """``node`` with the variables ``names`` maps renamed."""
    for sub in gast.walk(node):
        if isinstance(sub, gast.Name) and sub.id in names:
            sub.id = names[sub.id]
    return node
