"""keys: ``numbax.random`` in one example's body (``threads``): keys as pairs of words, draws as one thread's calls.

A key, ``uint32`` words of shape ``(2,)``, is a pair ``(k0, k1)`` in the kernel; ``split(key, n)``'s keys a
tuple of ``n`` pairs; a sample of shape ``()`` one call of a ``numbax.runtime.random.numbers`` function, the
CPU kernel's own arithmetic on one element, so each thread draws the CPU backend's bits (the registry's
``cuda.Draw`` of each kernel says which call). The keys come from a ``uint32`` array of one key per example
(``key[i]`` of shape ``(batch, 2)``), a key shared by all examples, or ``PRNGKey`` of a number::

    key_1 = key[i]                                  key_1 = (key[i, 0], key[i, 1])
    key_1, sub = rt.random_split(key_1, (2,))       key_1, sub = (rt.random_key_at(key_1, 0),
                                                                  rt.random_key_at(key_1, 1))
    s = s + rt.random_normal(sub, (), np.float64)   s = s + rt.random_normal_number(sub, np.float64(0))

Refused at the user's line: a key used as anything but a key (its words read, arithmetic, a value of an
``if``), a sample of another shape than ``()`` (an array per example), ``split`` into another shape than
``(n,)``, its keys indexed otherwise than by a constant, and the samplers with no ``Draw`` (``randint``,
``poisson``, ``gamma``, ``permutation``, ...). The driver checks that each key array's last axis has 2 words
(``gr.check_keys``), where the CPU backend reads what it finds.
"""
from __future__ import annotations

from typing import Dict, Optional, Set

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.primitives import application
from numbax.backends.cuda.lower import probes
from numbax.backends.cuda.lower.kernels import Unsupported
from numbax.backends.cuda.lower.state import LoweringState, parse as _parse, text as _text
from numbax.primitives.cuda import Draw
from numbax.primitives.registry import entry

_PAIR, _BLOCK = "key", "keys"
_DTYPED = frozenset(f"rt.random_{name}" for name in ("normal", "uniform", "exponential", "gumbel"))


def draw_of(node: gast.AST) -> Optional[Draw]:
    """The ``Draw`` of a call of a ``numbax.random`` kernel, or None."""
    app = application(node) if isinstance(node, gast.Call) else None
    lowering = getattr(entry(app.key), "cuda", None) if app is not None else None
    return lowering if isinstance(lowering, Draw) else None


def is_random(node: gast.AST) -> bool:
    """Whether ``node`` calls a ``numbax.random`` kernel (``rt.random_...``), lowered here or not."""
    func = node.func if isinstance(node, gast.Call) else None
    return isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.value.id == "rt" and \
        func.attr.startswith("random_")


def sample(node: gast.AST, env: Dict[str, object]) -> Optional[np.generic]:
    """The stand-in (``probes``) of a number drawn, ``rt.random_normal(key, (), np.float64)``: one of the dtype
    written as its third argument (``normal``, ``uniform``, ``exponential``, ``gumbel``), so that what is computed
    from it has a dtype; None for anything else."""
    draw = draw_of(node)
    if draw is None or draw.result != "number" or _text(node.func) not in _DTYPED or len(node.args) < 3 or \
            not (isinstance(node.args[1], gast.Tuple) and not node.args[1].elts):
        return None
    try:
        dtype = np.dtype(probes.evaluate(node.args[2], env))
    except Exception:  # noqa: BLE001 - a dtype the stand-ins cannot give: no stand-in, as for any key's value
        return None
    return dtype.type(1) if dtype.kind == "f" else None


def user_name(node: gast.Call) -> str:
    """How the user wrote the ``numbax.random`` function that ``node`` calls the kernel of."""
    return f"`numbax.random.{_text(node.func)[len('rt.random_'):]}`"


def _split_rows(node: gast.Call) -> Optional[int]:
    """``n`` of ``rt.random_split(key, (n,))``, or None for another shape."""
    shape = node.args[1] if len(node.args) == 2 else None
    if isinstance(shape, gast.Tuple) and len(shape.elts) == 1 and isinstance(shape.elts[0], gast.Constant) and \
            type(shape.elts[0].value) is int:
        return shape.elts[0].value
    return None


class Keys:
    """The keys of one example's body: which names hold one (``pairs``) or a split's rows (``blocks``: name ->
    rows), and which of the host's arrays hold them (``batched``: one per example, read as ``key[i]``;
    ``shared``: one for all examples)."""

    def __init__(self, state: LoweringState, body, index: str):
        self.state, self.index = state, index
        nodes = list(gast.walk(gast.Module(body=body, type_ignores=[])))
        self.batched: Set[str] = {n.value.id for n in nodes if self._host_read(n)}
        indexed = {id(n.value) for n in nodes if isinstance(n, gast.Subscript)}  # ``x[i]``: numbers, not keys
        self.shared: Set[str] = {n.id for n in nodes if isinstance(n, gast.Name) and id(n) not in indexed and
                                 self._host_key(n.id, 1)}
        self.pairs: Set[str] = set()
        self.blocks: Dict[str, int] = {}
        assigns = [n for n in nodes if isinstance(n, gast.Assign) and len(n.targets) == 1]
        changed = True
        while changed:  # a key copied, split or folded in is a key: to a fixpoint
            changed = False
            for stmt in assigns:
                for target, kind in self._bound(stmt):
                    if kind == _PAIR and target not in self.pairs:
                        self.pairs.add(target)
                        changed = True
                    elif kind != _PAIR and kind is not None and target not in self.blocks:
                        self.blocks[target] = kind
                        changed = True
        self._consistent(assigns)

    def _host_key(self, name: str, ndim: int) -> bool:
        value = self.state.env.get(name)
        return probes.is_array(value) and value.dtype == np.uint32 and value.ndim == ndim

    def _host_read(self, node: gast.AST) -> bool:
        """``key[i]`` of an array of one key per example."""
        return isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
            self._host_key(node.value.id, 2) and isinstance(node.slice, gast.Name) and node.slice.id == self.index

    def kind(self, node: gast.expr):
        """``"key"`` for an expression of one key, the number of rows for a split's, else None."""
        if isinstance(node, gast.Name):
            return _PAIR if node.id in self.pairs or node.id in self.shared else self.blocks.get(node.id)
        if self._host_read(node):
            return _PAIR
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and node.value.id in self.blocks:
            return _PAIR
        draw = draw_of(node)
        if draw is not None and draw.result == _PAIR:
            return _PAIR
        if draw is not None and draw.result == _BLOCK:
            return _split_rows(node)
        return None

    def _bound(self, stmt: gast.Assign):
        """``(name, kind)`` for each name ``stmt`` binds to a key or a split's rows."""
        target, kind = stmt.targets[0], self.kind(stmt.value)
        if isinstance(target, gast.Name):
            return [(target.id, kind)]
        if isinstance(target, gast.Tuple) and kind not in (None, _PAIR):
            return [(elt.id, _PAIR) for elt in target.elts if isinstance(elt, gast.Name)]
        return []

    def _consistent(self, assigns) -> None:
        """Refuse a name that holds a key in one place and something else in another."""
        for stmt in assigns:
            bound = self._bound(stmt)
            names = [t.id for t in gast.walk(stmt.targets[0]) if isinstance(t, gast.Name)]
            for name in names:
                kind = dict(bound).get(name)
                expected = _PAIR if name in self.pairs else self.blocks.get(name)
                if expected is not None and kind != expected:
                    self.state.origin = anno.getanno(stmt, anno.Key.ORIGIN) or self.state.origin
                    raise self.state.refuse(f"`{name}`, a key in one place and another value in another,")

    def names(self) -> Set[str]:
        """Every name of the body or the host that holds keys."""
        return self.pairs | set(self.blocks) | self.shared

    def binds(self, stmt: gast.stmt) -> bool:
        """Whether ``stmt`` assigns keys (a key, a split's rows, or its rows unpacked)."""
        return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            any(name in self.names() for name in (t.id for t in gast.walk(stmt.targets[0])
                                                  if isinstance(t, gast.Name)))

    def owns(self, node: gast.Subscript) -> bool:
        """Whether ``node`` reads a key (``key[i]``, a split's row), which ``text`` writes."""
        return self._host_read(node) or isinstance(node.value, gast.Name) and node.value.id in self.blocks

    def row(self, node: gast.Subscript) -> int:
        """The constant row a split's rows are indexed at, counted from the front."""
        rows = self.blocks[node.value.id]
        index = node.slice
        if isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub) and \
                isinstance(index.operand, gast.Constant):
            index = gast.Constant(value=-index.operand.value, kind=None)
        if not (isinstance(index, gast.Constant) and type(index.value) is int and -rows <= index.value < rows):
            raise Unsupported(f"indexing the keys `{_text(node)}` other than by a constant row")
        return index.value % rows

    def holds_by_construction(self, stmt: gast.stmt) -> bool:
        """Whether ``stmt`` is the run-time check of indexing a split's rows by a constant (``rt.check_index``),
        or that a key has two words (``rt.check_key``), true here by construction (a pair, or a row of an array
        the driver checks: ``checks``); an index by anything else is refused."""
        call = stmt.value if isinstance(stmt, gast.Expr) else None
        if isinstance(call, gast.Call) and _text(call.func) == "rt.check_key" and call.args and \
                self.kind(call.args[0]) == _PAIR:
            return True
        if not (isinstance(call, gast.Call) and _text(call.func) == "rt.check_index" and call.args and
                isinstance(call.args[0], gast.Name) and call.args[0].id in self.names()):
            return False
        if call.args[0].id not in self.blocks:
            raise Unsupported(f"reading the words of the key `{call.args[0].id}`")
        self.row(gast.Subscript(value=call.args[0], slice=call.args[1], ctx=gast.Load()))
        return True

    def text(self, node: gast.expr, translate) -> str:
        """The kernel text of a key or a split's rows, or of a number drawn (``translate`` writes the numbers
        the draw reads)."""
        names = translate.operands.names
        if isinstance(node, gast.Name) and node.id in self.shared:
            return f"({names[node.id]}[0], {names[node.id]}[1])"
        if isinstance(node, gast.Name) and node.id in self.names():
            return names[node.id]
        if self._host_read(node):
            array = names[node.value.id]
            return f"({array}[{self.index}, 0], {array}[{self.index}, 1])"
        if isinstance(node, gast.Subscript) and self.owns(node):
            return f"{names[node.value.id]}[{self.row(node)}]"
        draw = draw_of(node)
        if draw is None:
            what = user_name(node) if is_random(node) else f"`{_text(node)}`"
            raise Unsupported(f"{what} as a key")
        return self._draw(node, draw, translate)

    def _draw(self, node: gast.Call, draw: Draw, translate) -> str:
        if draw.result == "number" and not (len(node.args) > 1 and isinstance(node.args[1], gast.Tuple) and
                                            not node.args[1].elts):
            raise Unsupported(f"an array per example ({user_name(node)} of shape {_text(node.args[1])}): one "
                              "thread draws numbers,")
        if draw.takes_key and self.kind(node.args[0]) != _PAIR:
            raise Unsupported(f"{user_name(node)} of `{_text(node.args[0])}`, which is not a key")
        key = self.text(node.args[0], translate) if draw.takes_key else ""
        args = [translate.text(arg) if k in draw.values else _text(arg) for k, arg in enumerate(node.args)]
        dtype = np.dtype(self.state.probe(node.args[2])) if len(node.args) > 2 and draw.dtypes else None
        if draw.dtypes and dtype not in draw.dtypes:
            raise Unsupported(f"{user_name(node)} of {dtype}")
        wide = dtype is not None and dtype.itemsize == 8
        if draw.result == _BLOCK:
            rows = _split_rows(node)
            if rows is None:
                raise Unsupported(f"{user_name(node)} into the shape {_text(node.args[1])} (only `(n,)`)")
            return "(" + "".join(draw.template.format(key=key, row=row) + ", " for row in range(rows)) + ")"
        return draw.template.format(key=key, args=args, wide=wide)

    def checks(self) -> list:
        """The driver's checks, before the launch, that each key array holds keys of 2 words."""
        where = self.state.origin.position() if self.state.origin is not None else ""
        return [stmt for array in sorted(self.batched | self.shared)
                for stmt in _parse(f"gr.check_keys({array}, {where!r})")]
