"""threads: the loop ``vmap`` writes for the GPU (``anno.Key.PER_THREAD``) as one kernel, one example per thread.

Expects ``for i in range(batch):`` whose body is one example's code, reading the mapped arguments as
``x[i]`` and writing each output as ``out[i] = v``; gives a kernel whose threads run a grid-stride loop over
the examples, each running the body as it is (numbers, ``if``, ``while``, ``for ... in range``), and the
driver's launch of it::

    @cuda.jit
    def _examples_1(out, y0, k, steps, batch):
        for i in range(cuda.grid(1), batch, cuda.gridsize(1)):
            y = y0[i]
            for i_1 in range(steps):
                y = y + 0.01 * (-k[i] * y + math.sin(y))
            out[i] = y

Reverse mode's tapes in the body live in device memory, one slot per example; a ``while`` loop's, which grows,
by launching again with longer tapes when one is full (``tapes``).

``numbax.random`` draws there, each key a pair of words, each sample of shape ``()`` one thread's call (``keys``).

Arrays whose shapes the kernel can spell (``np.zeros(3)`` and what elementwise arithmetic makes of it) live
in each thread's local memory, each statement on them a loop over their elements, and reverse mode's lists
of them in device memory (``thread_arrays``, ``thread_loops``, ``thread_lists``).

Anything else in the body is refused at its user's line: arrays of other sizes per example (``x[i]`` of a
2-d ``x``, ``np.zeros(n)``), an argument's array read other than at the example's index, a tape resized
otherwise, run-time checks, calls without a kernel lowering, a value carried from one example to the next.
"""
from __future__ import annotations

from typing import Dict, List

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.ast_passes.tree_copy import copy_tree
from numbax.backends.cuda.lower import keys, probes, tapes
from numbax.backends.cuda.lower.thread_arrays import LocalArrays
from numbax.backends.cuda.lower.thread_loops import ElementLoops
from numbax.backends.cuda.lower.kernels import Operands, Unsupported, element
from numbax.backends.cuda.lower.state import LoweringState, name as _name, parse as _parse, text as _text

_BODIES = ("body", "orelse")


def _own_nodes(stmt: gast.stmt) -> List[gast.AST]:
    """The nodes of ``stmt`` outside the blocks it holds (an ``if``'s test, not its branches)."""
    fields = [value for field, value in gast.iter_fields(stmt) if field not in _BODIES]
    return [n for value in fields for item in (value if isinstance(value, list) else [value])
            if isinstance(item, gast.AST) for n in gast.walk(item)]


def _is_range(node: gast.expr) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "range" and \
        not node.keywords and 1 <= len(node.args) <= 3


class _Body:
    """One example's body: its locals and tapes, the host's arrays it reads and writes at the example's index
    and the host's numbers it reads (gathered first: the kernel's parameters), each checked at its statement."""

    def __init__(self, state: LoweringState, loop: gast.For):
        self.state, self.index = state, loop.target.id
        self.tapes, self.growing = tapes.of_body(loop.body)
        # the tapes' allocations move to the driver: what only they read is the host's, not the kernel's
        kernel_body = [stmt for stmt in loop.body if not any(stmt is a for a in self.tapes.values())]
        nodes = list(gast.walk(gast.Module(body=kernel_body, type_ignores=[])))
        tapes.refuse_resizing(state, loop.body, self.tapes)
        # a growing tape's overflow flag, set by a thread whose tape is full (``tapes``)
        self.overflow = state.fresh("overflow") if self.growing else ""
        self.locals = tapes.stored(loop.body) - set(self.tapes) | {self.index}
        self.inputs: Dict[str, int] = {}
        self.outputs: Dict[str, int] = {}
        self.numbers: List[str] = []
        self.keys = keys.Keys(state, loop.body, self.index)
        self.inputs.update(dict.fromkeys(sorted(self.keys.shared), 1))
        self.arrays = LocalArrays(state, loop.body, self.index, self.keys.names(), self.tapes)
        self.locals -= set(self.arrays.lists)  # reverse mode's lists: tapes in device memory (``thread_lists``)
        self.loops = ElementLoops(state, self.arrays)
        for node in nodes:
            if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
                    probes.is_array(state.env.get(node.value.id)) and node.value.id not in self.locals:
                (self.outputs if isinstance(node.ctx, gast.Store) else self.inputs)[node.value.id] = 1
            elif isinstance(node, gast.Name) and node.id not in self.locals and node.id in state.env and \
                    not probes.is_array(state.env[node.id]) and node.id not in self.numbers:
                self.numbers.append(node.id)

    def allocations(self, count: str, scale: str) -> List[gast.stmt]:
        """The driver's allocation of each tape, for ``count`` examples (``tapes.allocation``); the growing ones
        ``scale`` times as long, and after them the overflow flag, cleared."""
        fixed = [stmt for name, tape in self.tapes.items() if name not in self.growing
                 for stmt in tapes.allocation(self.state, tape, self.locals, count)]
        grown = [stmt for name, tape in self.tapes.items() if name in self.growing
                 for stmt in tapes.allocation(self.state, tape, self.locals, count, scale)]
        flag = _parse(f"{self.overflow} = gr.full(1, 0, np.int32)") if self.overflow else []
        return fixed + grown + self.loops.allocations(count) + flag

    def check(self, stmt: gast.stmt) -> None:
        """Refuse what ``stmt`` itself reads or writes that one thread cannot (see the module docstring)."""
        nodes = _own_nodes(stmt)
        # not values: what is indexed (checked as such), called or a module (``element`` checks those)
        named = {id(n.value) for n in nodes if isinstance(n, (gast.Subscript, gast.Attribute))} | \
            {id(n.func) for n in nodes if isinstance(n, gast.Call)}
        named |= {id(a) for n in nodes if isinstance(n, gast.Call) and _text(n.func) == "len" for a in n.args
                  if isinstance(a, gast.Name) and a.id in self.tapes}
        for node in nodes:
            if self.arrays.is_element(node) or isinstance(node, gast.Name) and node.id in self.arrays.lists:
                continue  # checked by ``LocalArrays``
            if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and node.value.id in self.tapes:
                self._slot(node)
            elif isinstance(node, gast.Subscript) and not self.keys.owns(node):
                self._element(node)
            elif isinstance(node, gast.Name) and node.id in self.tapes and id(node) not in named:
                raise self.state.refuse(f"the tape `{node.id}` as a value in one example's body")
            elif isinstance(node, gast.Name) and node.id not in self.locals and id(node) not in named and \
                    node.id not in self.keys.shared:
                if node.id not in self.state.env:
                    raise self.state.refuse(f"the value `{node.id}` in one example's body")
                if probes.is_array(self.state.env[node.id]):
                    raise self.state.refuse(f"the array `{node.id}` in one example's body (one thread reads "
                                            f"`{node.id}[{self.index}]`)")

    def _slot(self, node: gast.Subscript) -> None:
        """``tape[row, 0]``: one slot of a tape, a number at each index."""
        if not tapes.is_slot(node, self.tapes[node.value.id]):
            raise self.state.refuse(f"`{_text(node)}`, not one slot of the tape, in one example's body")

    def _element(self, node: gast.Subscript) -> None:
        """``x[i]``: a mapped argument's number read, or an output's number written."""
        array = node.value.id if isinstance(node.value, gast.Name) else None
        value = self.state.env.get(array)
        if array not in self.inputs and array not in self.outputs or \
                not (isinstance(node.slice, gast.Name) and node.slice.id == self.index):
            raise self.state.refuse(f"indexing `{_text(node)}` in one example's body (it reads its arguments' "
                                    f"numbers as `x[{self.index}]`)")
        if value.ndim != 1:
            raise self.state.refuse(f"an array per example (`{_text(node)}` of the {value.ndim}-d `{array}`, whose "
                                    "size is known only when called, not when the kernel compiles: map the "
                                    "state's components as separate 1-d arguments, or build it with "
                                    "`np.zeros(3)`),")
        if array in self.outputs and array not in self.state.owned:
            raise self.state.refuse(f"writing into the argument `{array}` in one example's body")
        if array in self.inputs and array in self.outputs:
            raise self.state.refuse(f"`{array}`, both read and written in one example's body,")

    def operands(self) -> Operands:
        """The kernel's operands: each array read as ``x[i]``, every local and host number by its name."""
        arrays = {**self.outputs, **self.inputs, **dict.fromkeys(self.tapes, 1), **dict.fromkeys(self.arrays.lists, 1)}
        arrays.update({self.overflow: 1} if self.overflow else {})
        return Operands(arrays, self.numbers + sorted(self.locals - {self.index}), index=self.index)

    def arguments(self) -> List[str]:
        """The driver's arguments of the kernel (outputs, inputs, tapes, the overflow flag, host numbers)."""
        return list(self.outputs) + list(self.inputs) + list(self.tapes) + list(self.arrays.lists) + \
            ([self.overflow] if self.overflow else []) + self.numbers


class _Elements(gast.NodeTransformer):
    """An expression as ``element`` reads it: ``x[i]`` as the name ``x`` (its element), a tape's slot
    ``tape[row, 0]``, ``len(tape)``, a number drawn (``keys``) and an element of a local array
    (``thread_arrays``: ``y[k]``, or ``y`` itself at the element ``at`` of an element loop) as names for their
    kernel text (``Operands.verbatim``); a key anywhere else is refused."""

    def __init__(self, translate: "_Translate", at: str = ""):
        self.translate, self.at = translate, at

    def visit_Name(self, node: gast.Name) -> gast.Name:  # noqa: N802 - gast's visitor naming
        if node.id in self.translate.body.keys.names():
            raise Unsupported(f"the key `{node.id}` as a number")
        if node.id in self.translate.body.arrays.arrays:
            if not self.at:
                raise Unsupported(f"the array `{node.id}` as a number")
            return _name(self.translate.verbatim(f"{self.translate.operands.names[node.id]}[{self.at}]"))
        return node

    def visit_Subscript(self, node: gast.Subscript) -> gast.Name:  # noqa: N802
        if self.translate.body.arrays.is_element(node):
            return _name(self.translate.element(node))
        if node.value.id in self.translate.body.tapes:
            return _name(self.translate.slot(node))
        if self.translate.body.keys.owns(node):
            raise Unsupported(f"the key `{_text(node)}` as a number")
        return _name(node.value.id)

    def visit_Call(self, node: gast.Call) -> gast.expr:  # noqa: N802
        if _text(node.func) == "len" and len(node.args) == 1 and isinstance(node.args[0], gast.Name) and \
                node.args[0].id in self.translate.body.tapes:
            return _name(self.translate.verbatim(f"{self.translate.operands.names[node.args[0].id]}.shape[0]"))
        if keys.is_random(node):
            draw = keys.draw_of(node)
            if draw is None:
                raise Unsupported(keys.user_name(node))
            if draw.result != "number":
                raise Unsupported(f"the key `{_text(node)}` as a number")
            return _name(self.translate.verbatim(self.translate.body.keys.text(node, self.translate)))
        return self.generic_visit(node)


class _Translate:
    """One example's statements as the kernel's, each checked and keeping its user's line."""

    def __init__(self, state: LoweringState, body: _Body, tag):
        self.state, self.body, self.operands = state, body, body.operands()
        self.tag = tag  # the user's line of the statement being translated (none for vmap's own code)
        self.pending: List[gast.stmt] = []  # numbers computed before the statement (``thread_arrays``)

    def text(self, node: gast.expr) -> str:
        return self.element_at(self.body.loops.hoist(copy_tree(node), self), "")

    def element_at(self, node: gast.expr, at: str) -> str:
        """The kernel text of ``node`` (hoisted), local arrays read at the element ``at`` (a number's: none)."""
        try:
            return element(_Elements(self, at).visit(copy_tree(node)), self.operands)
        except Unsupported as exc:
            raise self.state.refuse(f"{exc.what} in one example's body") from None

    def element(self, node: gast.Subscript) -> str:
        """``y[k]`` of a local array as the kernel's (its indices numbers)."""
        indices = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        return self.verbatim(f"{self.operands.names[node.value.id]}[{', '.join(self.text(i) for i in indices)}]")

    def expr(self, node: gast.expr) -> gast.expr:
        return gast.parse(self.text(node)).body[0].value

    def verbatim(self, text: str) -> str:
        """A name that ``element`` writes as ``text``."""
        self.operands.verbatim[text] = text
        return text

    def slot(self, node: gast.Subscript) -> str:
        """``tape[row, 0]`` as the kernel's ``tape[row, 0, i]``."""
        indices = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        return self.verbatim(f"{self.operands.names[node.value.id]}"
                             f"[{', '.join([self.text(i) for i in indices] + [self.body.index])}]")

    def target(self, node: gast.expr) -> gast.expr:
        if isinstance(node, gast.Name):
            return _name(self.operands.names[node.id], gast.Store())
        if self.body.arrays.is_element(node):
            return gast.parse(f"{self.element(node)} = 0").body[0].targets[0]
        if node.value.id in self.body.tapes:
            return gast.parse(f"{self.slot(node)} = 0").body[0].targets[0]
        return gast.parse(f"{self.operands.element_of(node.value.id)} = 0").body[0].targets[0]

    def block(self, stmts: List[gast.stmt]) -> List[gast.stmt]:
        out = []
        for stmt in stmts:
            own = anno.getanno(stmt, anno.Key.ORIGIN)
            saved = self.state.origin, self.tag
            self.state.origin, self.tag = own or self.state.origin, own or self.tag
            if any(stmt is allocation for allocation in self.body.tapes.values()):
                self.state.origin, self.tag = saved
                continue  # the driver allocates the tape (``allocations``)
            if tapes.is_growth(stmt) and stmt.targets[0].id in self.body.growing:
                news = _parse(f"{self.operands.names[self.body.overflow]}[0] = 1\nreturn")  # ``tapes``
            elif self.holds_by_construction(stmt):
                news = []
            else:
                self.body.check(stmt)
                pending, self.pending = self.pending, []
                try:
                    news = self.body.loops.lower(stmt, self) if self.body.loops.owns(stmt) else \
                        [self.statement(stmt)]
                finally:
                    hoisted, self.pending = self.pending, pending
                news = hoisted + news
            for new in news:
                if self.tag is not None:
                    anno.setanno(new, anno.Key.ORIGIN, self.tag)
            out += news
            self.state.origin, self.tag = saved
        return out

    def holds_by_construction(self, stmt: gast.stmt) -> bool:
        """Whether ``stmt`` checks indexing a split's keys by a constant row, or a key's two words, true by
        construction (``keys``)."""
        try:
            return self.body.keys.holds_by_construction(stmt)
        except Unsupported as exc:
            raise self.state.refuse(f"{exc.what} in one example's body") from None

    def keys_assigned(self, stmt: gast.Assign) -> gast.stmt:
        """A key, a split's keys, or those keys unpacked, assigned (``keys``)."""
        target, rows = stmt.targets[0], self.body.keys.kind(stmt.value)
        if isinstance(target, gast.Tuple):
            if not all(isinstance(e, gast.Name) for e in target.elts) or rows != len(target.elts):
                raise self.state.refuse(f"`{_text(stmt)}`, keys unpacked otherwise than one name per row,")
            target = gast.Tuple(elts=[self.target(e) for e in target.elts], ctx=gast.Store())
        else:
            target = self.target(target)
        try:
            value = self.body.keys.text(stmt.value, self)
        except Unsupported as exc:
            raise self.state.refuse(f"{exc.what} in one example's body") from None
        return gast.Assign(targets=[target], value=gast.parse(value).body[0].value, type_comment=None)

    def statement(self, stmt: gast.stmt) -> gast.stmt:
        if anno.getanno(stmt, anno.Key.PER_THREAD, False):
            raise self.state.refuse("a vmap inside a vmapped function")
        if self.body.keys.binds(stmt):
            return self.keys_assigned(stmt)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], (gast.Name, gast.Subscript)):
            return gast.Assign(targets=[self.target(stmt.targets[0])], value=self.expr(stmt.value), type_comment=None)
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            value = gast.BinOp(left=_name(stmt.target.id), op=stmt.op, right=stmt.value)
            return gast.Assign(targets=[self.target(stmt.target)], value=self.expr(value), type_comment=None)
        if isinstance(stmt, gast.If):
            return gast.If(test=self.expr(stmt.test), body=self.block(stmt.body) or [gast.Pass()],
                           orelse=self.block(stmt.orelse))
        if isinstance(stmt, gast.While) and not stmt.orelse:
            test = self.expr(stmt.test)
            hoisted, self.pending = self.pending, []  # computed again before each test
            body = self.block(stmt.body)
            if not hoisted:
                return gast.While(test=test, body=body, orelse=[])
            exit_ = gast.If(test=gast.UnaryOp(op=gast.Not(), operand=test), body=[gast.Break()], orelse=[])
            return gast.While(test=gast.Constant(value=True, kind=None), body=hoisted + [exit_] + body, orelse=[])
        if isinstance(stmt, gast.For) and not stmt.orelse and isinstance(stmt.target, gast.Name) and \
                _is_range(stmt.iter):
            trips = gast.Call(func=_name("range"), args=[self.expr(a) for a in stmt.iter.args], keywords=[])
            return gast.For(target=self.target(stmt.target), iter=trips, body=self.block(stmt.body), orelse=[],
                            type_comment=None)
        if isinstance(stmt, (gast.Break, gast.Continue, gast.Pass)):
            return stmt
        raise self.state.refuse(f"`{_text(stmt)}` in one example's body")


def lower(state: LoweringState, loop: gast.For) -> List[gast.stmt]:
    """The kernel of a per-thread loop (into ``state.kernels``) and the driver's launch of it."""
    tag = state.origin  # the vmap call's line (none for a top-level vmap)
    # refusals point at the vmap call, or, for a top-level vmap, at the first line of the example's body
    state.origin = state.origin or next((anno.getanno(n, anno.Key.ORIGIN) for n in gast.walk(loop)
                                         if anno.hasanno(n, anno.Key.ORIGIN)), state.first_origin)
    if not _is_range(loop.iter) or len(loop.iter.args) != 1 or loop.orelse:
        raise state.refuse(f"a loop over `{_text(loop.iter)}` as one example per thread")
    for name in sorted(tapes.stored(loop.body) & set(state.env)):
        raise state.refuse(f"`{name}`, carried from one example to the next,", state.assigned_at.get(name))
    trips, pre = loop.iter.args[0], []
    state.check_host(trips)
    if not isinstance(trips, (gast.Name, gast.Constant)):
        count = state.fresh("n")
        pre = [gast.Assign(targets=[_name(count, gast.Store())], value=trips, type_comment=None)]
        state.env[count] = 1
        trips = _name(count)
    body = _Body(state, loop)
    for name in body.arguments():  # a thread's templates are for real numbers (``Elementwise.complex_numbers``)
        if np.asarray(state.env.get(name, 0)).dtype.kind == "c":
            raise state.refuse("complex numbers in one example's body")
    if isinstance(trips, gast.Name) and trips.id not in body.numbers:
        body.numbers.append(trips.id)
    translate = _Translate(state, body, tag)
    args = body.arguments()
    kernel_name = state.fresh("examples")
    count = translate.operands.names[trips.id] if isinstance(trips, gast.Name) else _text(trips)
    kernel = gast.parse(f"@cuda.jit\ndef {kernel_name}({', '.join(translate.operands.params()[:len(args)])}):\n"
                        f"    for {body.index} in range(cuda.grid(1), {count}, cuda.gridsize(1)):\n"
                        f"        pass\n").body[0]
    if tag is not None:
        anno.setanno(kernel.body[0], anno.Key.ORIGIN, tag)
    kernel.body[0].body = body.loops.declarations(translate.operands.names) + translate.block(loop.body)
    state.kernels.append((kernel, None))
    launch = _parse(f"{kernel_name}[gr.grid({_text(trips)})]({', '.join(args)})")
    pre += body.keys.checks()
    if not body.growing:
        pre += body.allocations(_text(trips), "") + launch
    else:  # until no thread's tape overflows, each growing tape twice as long (``tapes``)
        scale = state.fresh("scale")
        relaunch = gast.parse(f"{scale} = 1\nwhile True:\n    pass\n").body
        relaunch[1].body = body.allocations(_text(trips), scale) + launch + _parse(
            f"if {body.overflow}.copy_to_host()[0] == 0:\n    break\n{scale} = 2 * {scale}")
        pre += relaunch
    state.origin = tag
    return pre
