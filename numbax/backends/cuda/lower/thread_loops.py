"""thread_loops: one example's statements on its local arrays (``thread_arrays``) as loops over elements.

An assignment of an array becomes a loop nest writing each element of the name's local array; reductions,
dot products and elements read inside it are computed before it into numbers (``hoist``), so each element
reads its operands at its own index only, and ``y = y / np.sum(y)`` reads the old ``y``. Reverse mode's lists
become tapes in device memory (``thread_lists``), its run-time checks of shapes known here hold or are
refused, and its helpers on arrays become what they compute (``thread_arrays.ADJOINTS``).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.tree_copy import copy_tree
from numbax.backends.cuda.lower import probes, thread_lists
from numbax.backends.cuda.lower.state import LoweringState, name as _name, parse as _parse, text as _text
from numbax.backends.cuda.lower.thread_arrays import ADJOINTS, FILLS, LIKE, STATIC_CHECKS, LocalArrays, combined, \
    is_call, kernel_type, lowering_of
from numbax.primitives.cuda import MATMUL, Reduction

_COMBINE = {"sum": "{0} + {1}", "max": "gr.maximum({0}, {1})", "min": "gr.minimum({0}, {1})"}


class ElementLoops:
    """The kernel's statements for what ``LocalArrays`` found in one example's body."""

    def __init__(self, state: LoweringState, found: LocalArrays):
        self.state, self.found = state, found
        self.dims: List[str] = []  # the element loops' indices, one per dimension, shared by all loops

    def declarations(self, names: Dict[str, str]) -> List[gast.stmt]:
        """Each local array's ``cuda.local.array``, at the start of an example (``names``: kernel names)."""
        return [s for name, (shape, dtype) in sorted(self.found.arrays.items())
                for s in _parse(f"{names[name]} = cuda.local.array({shape!r}, {kernel_type(dtype)})")]

    def owns(self, stmt: gast.stmt) -> bool:
        """Whether ``stmt`` assigns a local array, checks the broadcasting of one, or makes, appends to or pops
        from a list (``thread_lists``)."""
        if any(stmt is made for made in self.found.made.values()) or thread_lists.appended(stmt, self.found.lists) or \
                thread_lists.popped(stmt, self.found.lists):
            return True
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, gast.AugAssign) else None
        if isinstance(target, gast.Name):
            return target.id in self.found.arrays
        if target is not None:
            return self.found.is_element(target)
        return isinstance(stmt, gast.Expr) and is_call(stmt.value, STATIC_CHECKS) and \
            any(isinstance(a, gast.Name) and a.id in self.found.arrays for a in stmt.value.args)

    def lower(self, stmt: gast.stmt, translate) -> List[gast.stmt]:
        """A statement ``owns`` claims, as the kernel's (after the numbers it hoists)."""
        listed = self._list_statement(stmt, translate)
        if listed is not None:
            return listed
        if is_call(stmt.value, {"rt.check_index"}):
            self._index_holds(stmt.value)
            return []
        if isinstance(stmt, gast.Expr):
            self._broadcasts(stmt.value)
            return []
        target, value = (stmt.target, combined(stmt)) if isinstance(stmt, gast.AugAssign) else \
            (stmt.targets[0], copy_tree(stmt.value))
        if isinstance(target, gast.Subscript):
            return [gast.Assign(targets=[translate.target(target)], value=translate.expr(value), type_comment=None)]
        shape, _ = self.found.arrays[target.id]
        if is_call(value, FILLS) and FILLS[_text(value.func)] is None:
            return []  # ``np.empty``: the local array as it is
        value = self.hoist(value, translate, elementwise=True)
        dims = self._dims(len(shape))
        element = translate.element_at(value, ", ".join(dims))
        nest = _parse(f"{translate.operands.names[target.id]}[{', '.join(dims)}] = {element}")
        for dim, extent in reversed(list(zip(dims, shape))):
            loop = gast.parse(f"for {dim} in range({extent}):\n    pass").body[0]
            loop.body = nest
            nest = [loop]
        return nest

    def _list_statement(self, stmt: gast.stmt, translate) -> Optional[List[gast.stmt]]:
        """``t = []``, ``t.append(v)``, ``v = t.pop()`` in the kernel (``thread_lists``); None for others."""
        made = next((name for name, made in self.found.made.items() if made is stmt), None)
        if made is not None:
            return _parse(f"{self.found.tops[made]} = 0")
        pushed, pulled = thread_lists.appended(stmt, self.found.lists), thread_lists.popped(stmt, self.found.lists)
        if pushed is None and pulled is None:
            return None
        name = pushed[0] if pushed else pulled[1]
        shape = self.found.lists[name][0]
        dims, tape = self._dims(len(shape)), translate.operands.names[name]
        if pushed:
            value = self.hoist(copy_tree(pushed[1]), translate, elementwise=True)
            text = translate.element_at(value, ", ".join(dims)) if shape else translate.text(value)
            return thread_lists.push(tape, self.found.tops[name], translate.body.index, dims, shape, text)
        return thread_lists.pull(tape, self.found.tops[name], translate.body.index, dims, shape,
                                 translate.operands.names[pulled[0]])

    def allocations(self, count: str) -> List[gast.stmt]:
        """The driver's allocation of each list's tape, for ``count`` examples (``thread_lists``)."""
        return [s for name in self.found.made
                for s in thread_lists.allocation(name, self.found.lengths[name], self.found.lists[name], count)]

    def _index_holds(self, call: gast.Call) -> None:
        """``rt.check_index(y, k, axis, where)`` of a literal ``k`` and ``axis``: true, or refused."""
        array, index, axis = call.args[:3]
        if not (isinstance(array, gast.Name) and array.id in self.found.arrays and isinstance(index, gast.Constant) and
                type(index.value) is int and isinstance(axis, gast.Constant) and type(axis.value) is int):
            raise self.state.refuse(f"`{_text(call)}`, a run-time check of an index, in one example's body")
        shape = self.found.arrays[array.id][0]
        extent = shape[axis.value]
        if not -extent <= index.value < extent:
            raise self.state.refuse(f"the index {index.value}, out of bounds for the axis {axis.value} of size "
                                    f"{extent} of `{array.id}`,")

    def _broadcasts(self, call: gast.Call) -> None:
        """``rt.check_broadcast(a, b, where)``, ``rt.check_where(c, a, b, where)`` of shapes known here: true,
        or refused."""
        shapes = [self.found.arrays[a.id][0] if isinstance(a, gast.Name) and a.id in self.found.arrays else
                  np.shape(probes.evaluate(a, self.found.env)) for a in call.args[:-1]]
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise self.state.refuse(f"arrays of shapes {', '.join(map(str, shapes))}, which do not broadcast "
                                    "together,") from None

    def _dims(self, ndim: int) -> List[str]:
        while len(self.dims) < ndim:
            self.dims.append(self.state.fresh("j"))
        return self.dims[:ndim]

    def hoist(self, node: gast.expr, translate, elementwise: bool = False) -> gast.expr:
        """``node`` with each reduction and dot product of local arrays (and, in an element loop, each element
        read) computed before it into a number (``translate.pending``); a like-constructor as its fill. What
        reads no local array is left to the lowering of numbers."""
        number = is_call(node, ADJOINTS | set(LIKE)) and not probes.is_array(self.found.probe(node))
        if number and is_call(node, {"rt.scalar_output", "rt.copy_of"}):
            return self.hoist(node.args[0], translate, elementwise)
        dtype = np.asarray(self.found.probe(node)).dtype if number else None
        if number and is_call(node, LIKE) and dtype.kind == "f":
            return _name(translate.verbatim(f"{kernel_type(dtype)}({LIKE[_text(node.func)]})"))
        if not self.found.reads_arrays(node):
            return node
        if is_call(node, {"rt.copy_of", "rt.unaliased", "rt.unreduce"}):  # at each element: the array's, or the number
            return self.hoist(node.args[0], translate, elementwise)
        if is_call(node, {"rt.unbroadcast"}):
            if number:  # a number's cotangent
                total = gast.parse("np.sum(_)").body[0].value
                total.args = node.args[:1]
                return self.hoist(total, translate, elementwise)
            return self.hoist(node.args[0], translate, elementwise)
        if self.found.is_element(node):
            if not elementwise:
                return node
            return self._into(translate, node, [], translate.text(node))
        if is_call(node, {"np.full"}):
            return self.hoist(node.args[1], translate, elementwise)
        if is_call(node, LIKE) or is_call(node, FILLS):
            dtype = np.asarray(self.found.probe(node)).dtype
            fill = LIKE.get(_text(node.func), FILLS.get(_text(node.func)))
            return _name(translate.verbatim(f"{kernel_type(dtype)}({fill})"))
        lowering = lowering_of(node)
        if isinstance(lowering, Reduction) or lowering is MATMUL:
            return self._reduction(node, lowering, translate)
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.expr):
                setattr(node, field, self.hoist(value, translate, elementwise))
            elif isinstance(value, list):
                setattr(node, field, [self.hoist(v, translate, elementwise) if isinstance(v, gast.expr) else v
                                      for v in value])
        return node

    def _reduction(self, node: gast.expr, lowering: Any, translate) -> gast.Name:
        app = application(node)
        dtype = np.asarray(probes.evaluate(node, self.found.env)).dtype
        shape = np.shape(probes.evaluate(app.args[0], self.found.env))
        operands = [self.hoist(a, translate, elementwise=True) for a in app.args]
        dims = self._dims(len(shape))
        at = [translate.element_at(a, ", ".join(dims)) for a in operands]
        acc = self.state.fresh("r")
        if lowering is MATMUL:
            return self._into(translate, node, shape, f"{kernel_type(dtype)}(0)",
                              _COMBINE["sum"].format(acc, f"{at[0]} * {at[1]}"), "", acc)
        first = translate.element_at(operands[0], ", ".join("0" for _ in shape))
        start = f"{kernel_type(dtype)}(0)" if lowering.op == "sum" else first
        term = f"{at[0]} * {at[0]}" if lowering.norm else at[0]
        after = f"math.sqrt({acc})" if lowering.norm else \
            f"{acc} / {int(np.prod(shape))}" if lowering.mean else ""
        return self._into(translate, node, shape, start, _COMBINE[lowering.op].format(acc, term), after, acc)

    def _into(self, translate, node: gast.expr, shape, start: str, combine: Optional[str] = None,
              after: str = "", acc: str = "") -> gast.Name:
        """A number computed before the statement: ``start``, then ``combine`` at every element of ``shape``
        (over the loop indices ``_dims``), then ``after``."""
        acc = acc or self.state.fresh("r")
        lines = [f"{acc} = {start}"]
        dims = self._dims(len(shape))
        if combine is not None:
            lines += ["    " * k + f"for {d} in range({n}):" for k, (d, n) in enumerate(zip(dims, shape))]
            lines.append("    " * len(shape) + f"{acc} = {combine}")
        if after:
            lines.append(f"{acc} = {after}")
        stmts = _parse("\n".join(lines))
        origin = anno.getanno(node, anno.Key.ORIGIN) if anno.hasanno(node, anno.Key.ORIGIN) else None
        for stmt in stmts:
            if origin is not None:
                anno.setanno(stmt, anno.Key.ORIGIN, origin)
        translate.pending += stmts
        return _name(translate.verbatim(acc))
