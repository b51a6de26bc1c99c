"""The GPU lowering's control flow, all of it in the host driver: ``if`` and ``while`` on numbers computed on the
host (reductions launched first), ``for`` over ``range`` and over arrays' rows; a variable's dtype and number of
dimensions must stay the same through a loop and agree after a branch (the kernels are compiled for one), but
for a host number that a loop widens from integers to floats (lowered again, in the joined dtype from the
start), and which arrays the driver owns or views are joined after each.
"""
from __future__ import annotations

import collections
import copy
from typing import Any, Callable, Dict, List, Set, Tuple

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.backends.cuda.lower import indexing, probes, tapes
from numbax.backends.cuda.lower.launches import Launches
from numbax.backends.cuda.lower.state import name as _name, parse as _parse, text as _text


def call_of(node: gast.expr, function: str, count: int = 0) -> bool:
    """Whether ``node`` calls the builtin ``function``, with ``count`` positional arguments (any, for 0) only."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == function and \
        not node.keywords and bool(node.args) and len(node.args) == (count or len(node.args))


class _Widen(Exception):
    """A loop's body gave host numbers another dtype (``s = 0`` before ``s = s + x[i]``): each name's stand-in of
    the joined dtype, and where the first was assigned."""

    def __init__(self, numbers: Dict[str, Any], name: str, origin: Any):
        super().__init__(name)
        self.numbers, self.name, self.origin = numbers, name, origin


_CONTAINERS = (dict, set, list, collections.Counter)


class ControlFlow(Launches):
    """The lowering of branches and loops."""

    def widened(self, stmt: gast.stmt, lower: Callable[[gast.stmt], List[gast.stmt]]) -> List[gast.stmt]:
        """``lower(stmt)`` of a loop; where its body gives a host number another dtype, the loop lowered again
        from its start with that number in the joined dtype (a Python ``0`` that a float is added to is a
        float throughout), as the CPU backend's Numba unifies it; a second change is refused."""
        original, state = copy.deepcopy(stmt), {k: copy.copy(v) if isinstance(v, _CONTAINERS) else v
                                                for k, v in vars(self).items()}
        try:
            return lower(stmt)
        except _Widen as widen:
            for key, value in state.items():
                setattr(self, key, value)
            self.env.update(widen.numbers)
            try:
                return lower(original)
            except _Widen as again:
                raise self.refuse(f"`{again.name}`, which changes its dtype or number of dimensions in a loop,",
                                  again.origin) from None

    def block(self, stmts: List[gast.stmt]) -> List[gast.stmt]:
        """The statements lowered (``driver``)."""
        raise NotImplementedError

    def branch(self, stmt: gast.If) -> List[gast.stmt]:
        """``if``: its test a number on the host; both branches must leave each variable one dtype."""
        self.pre = []
        test = self.host_test(stmt.test)
        pre, before, owned, views = self.pre, dict(self.env), set(self.owned), dict(self.views)
        body = self.block(stmt.body) or [gast.Pass()]
        after_body, self.env = self.env, dict(before)
        owned_after_body, self.owned = self.owned, owned
        views_after_body, self.views = self.views, views
        orelse = self.block(stmt.orelse)
        self.owned &= owned_after_body
        for name in set(views_after_body) | set(self.views):
            if views_after_body.get(name) != self.views.get(name):
                self.views[name] = indexing.AMBIGUOUS
        for name in set(after_body) & set(self.env):
            if probes.signature(after_body[name]) != probes.signature(self.env[name]):
                raise self.refuse(f"`{name}`, given another dtype or number of dimensions on each branch,",
                                  self.assigned_at.get(name))
        self.env = {**after_body, **self.env}
        return pre + [gast.If(test=test, body=body, orelse=orelse)]

    def loop_while(self, stmt: gast.While) -> List[gast.stmt]:
        """``while``: its test read on the host before each iteration."""
        return self.widened(stmt, self._loop_while)

    def _loop_while(self, stmt: gast.While) -> List[gast.stmt]:
        self.pre = []
        test = self.host_test(stmt.test)
        pre = self.pre
        before, owned, views = dict(self.env), set(self.owned), dict(self.views)
        self.forget_aliases(stmt.body)
        body = self.block(stmt.body)
        self.check_loop(before)
        self.join_aliases(stmt.body, before, owned, views)
        if not pre:
            return [gast.While(test=test, body=body, orelse=[])]
        exit_ = gast.If(test=gast.UnaryOp(op=gast.Not(), operand=test), body=[gast.Break()], orelse=[])
        return [gast.While(test=gast.Constant(value=True, kind=None), body=pre + [exit_] + body, orelse=[])]

    def over_rows(self, stmt: gast.For) -> Tuple[List[gast.stmt], gast.For]:
        """``for v in x``, ``enumerate(x)``, ``zip(x, y)`` and ``enumerate(zip(x, y))`` of arrays (their rows,
        or elements): each array held by a name of its own first (the loop iterates over the array ``x`` held
        when it began, whatever the body binds to ``x``), then a loop over ``range`` of the (shortest) first
        extent, whose body first reads each row, ``v = held[k]``, as NumPy's iteration reads them."""
        target, it, counter = stmt.target, stmt.iter, None
        if call_of(it, "enumerate", 1) and isinstance(target, gast.Tuple) and len(target.elts) == 2 and \
                isinstance(target.elts[0], gast.Name):
            (counter, target), it = target.elts, it.args[0]
        arrays, targets = ([it], [target]) if not call_of(it, "zip") else (it.args, target.elts) \
            if isinstance(target, gast.Tuple) and len(target.elts) == len(it.args) else (None, None)
        if arrays and all(isinstance(t, (gast.Name, gast.Tuple)) for t in targets) and \
                any(isinstance(t, gast.Tuple) for t in targets):
            raise self.refuse(f"`for {_text(stmt.target)} in {_text(stmt.iter)}:`, a row unpacked into names,")
        if not arrays or not all(isinstance(a, gast.Name) and probes.is_array(self.env.get(a.id)) and
                                 self.env[a.id].ndim for a in arrays) or \
                not all(isinstance(t, gast.Name) for t in targets):
            raise self.refuse(f"`for {_text(stmt.target)} in {_text(stmt.iter)}:` (loops over `range`, and over "
                              "arrays' rows, `enumerate` and `zip` of arrays, run on the host)")
        index = counter.id if counter is not None else self.fresh("k")
        held = [self.fresh("rows") for _ in arrays]
        holds = [gast.Assign(targets=[_name(h, gast.Store())], value=_name(a.id), type_comment=None)
                 for h, a in zip(held, arrays)]
        length = ", ".join(f"{h}.shape[0]" for h in held)
        rows = [gast.Assign(targets=[t], value=_parse(f"{h}[{index}]")[0].value, type_comment=None)
                for h, t in zip(held, targets)]
        for made in holds + rows:
            anno.setanno(made, anno.Key.ORIGIN, self.origin)
        return holds, gast.For(target=_name(index, gast.Store()),
                               iter=_parse(f"range({length if len(arrays) == 1 else f'min({length})'})")[0].value,
                               body=rows + stmt.body, orelse=[], type_comment=None)

    def loop_for(self, stmt: gast.For) -> List[gast.stmt]:
        """``for i in range(...)``: a host loop."""
        return self.widened(stmt, self._loop_for)

    def _loop_for(self, stmt: gast.For) -> List[gast.stmt]:
        it = stmt.iter
        for arg in it.args:
            self.check_host(arg)
        before, owned, views = dict(self.env), set(self.owned), dict(self.views)
        self.env[stmt.target.id] = 1
        self.forget_aliases(stmt.body)
        body = self.block(stmt.body)
        self.check_loop(before)
        self.join_aliases(stmt.body, before, owned, views)
        return [gast.For(target=stmt.target, iter=it, body=body, orelse=[], type_comment=None)]

    def forget_aliases(self, body: List[gast.stmt]) -> None:
        """Before a loop: a name the body binds to another array (or a view of one) may hold an argument's,
        or view any array, at its start."""
        for node in gast.walk(gast.Module(body=body, type_ignores=[])):
            if isinstance(node, gast.Assign) and isinstance(node.value, (gast.Name, gast.Attribute, gast.Subscript,
                                                                         gast.Tuple)):
                names = {n.id for t in node.targets for n in (t.elts if isinstance(t, gast.Tuple) else [t])
                         if isinstance(n, gast.Name)}
                self.owned -= names
                self.views.update(dict.fromkeys(names, indexing.AMBIGUOUS))

    def join_aliases(self, body: List[gast.stmt], before: Dict[str, Any], owned: Set[str],
                     views: Dict[str, str]) -> None:
        """After a loop, which may run no iteration: a name its body binds, bound before it too, is the driver's
        own only if it was before, and views an array only if the same one as before."""
        for name in tapes.stored(body) & set(before):
            if name not in owned:
                self.owned.discard(name)
            if self.views.get(name) != views.get(name):
                self.views[name] = indexing.AMBIGUOUS

    def check_loop(self, before: Dict[str, Any]) -> None:
        """Refuse a variable that a loop's body gives another dtype or ndim than it had at the loop's start:
        the kernels compiled for its first value would compute the next ones in the wrong dtype. A host number
        of integers or floats given another such dtype is widened instead (``widened``)."""
        numbers, first = {}, None
        for name, value in before.items():
            if name in self.env and probes.signature(self.env[name]) != probes.signature(value):
                after = self.env[name]
                kinds = {np.asarray(v).dtype.kind for v in (value, after)}
                if np.ndim(value) or np.ndim(after) or probes.is_array(value) or probes.is_array(after) or \
                        not kinds <= set("iuf"):
                    raise self.refuse(f"`{name}`, which changes its dtype or number of dimensions in a loop,",
                                      self.assigned_at.get(name))
                numbers[name] = np.result_type(np.asarray(value).dtype, np.asarray(after).dtype).type(0)
                first = first or name
        if numbers:
            raise _Widen(numbers, first, self.assigned_at.get(first))

    def host_test(self, test: gast.expr) -> gast.expr:
        """A branch's or loop's test, computed on the host (hoisted reductions into ``self.pre``)."""
        test = self.hoist(test)
        if probes.is_array(self.probe(test)):
            raise self.refuse(f"a test of an array, `{_text(test)}`, (NumPy refuses its truth value too)")
        self.check_host(test)
        return test
