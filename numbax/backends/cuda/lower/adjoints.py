"""The GPU lowering of reverse mode's runtime helpers: seeds, sums of broadcasts, cotangents of reductions,
copies, and the tapes of host loops, as device arrays the driver allocates and kernels write.

Each writes its kernel's source (``kernels``) into the state and the driver's statements (into ``self.pre``),
and gives back the name that holds its result; an array it allocates is the driver's own (``owned``).
"""
from __future__ import annotations

import ast
from typing import Any, List

import gast
import numpy as np

from numbax.backends.cuda.lower import probes
from numbax.backends.cuda.lower.gathers import Gathers
from numbax.backends.cuda.lower.kernels import broadcast_kernel, unbroadcast_kernel, unreduce_kernel
from numbax.backends.cuda.lower.state import name as _name, parse as _parse, text as _text

# copies: reverse mode's ``rt.copy_of`` of an array and ``rt.unaliased(a, b)`` (``a`` where it shares no memory
# with ``b``, else a copy: a copy always, on the GPU), by a kernel; a ``while`` loop's tape grown (``gr``'s)
TAPES = {"rt.copy_of": "np.copy", "rt.unaliased": "np.copy", "rt.grow_rows": "gr.grow_rows",
         "rt.reserve_rows": "gr.reserve_rows"}  # (a for loop's tape of numbers with room for its trips)
SEEDS = {"rt.zeros_like": "0", "rt.ones_like": "1"}  # reverse mode's cotangents of arrays, before accumulating


class Adjoints(Gathers):
    """Reverse mode's helpers in the driver (see the module docstring)."""

    def hoist(self, node: gast.expr) -> gast.expr:
        """``node`` with its reductions, products and constructors launched first (``launches``)."""
        raise NotImplementedError

    def temp_for(self, node: gast.expr) -> gast.Name:
        """A name holding ``node``'s value (the driver assigns it)."""
        raise NotImplementedError

    def numbers_for_metadata(self, node: gast.expr) -> gast.expr:
        """``node`` with its shapes, sizes and ranks read on the host first (``launches``)."""
        raise NotImplementedError

    def axes(self, axis: Any, ndim: int) -> tuple:
        """``axis`` as sorted non-negative axes of an ``ndim``-d operand (``launches``)."""
        raise NotImplementedError

    def seed(self, node: gast.Call) -> gast.Name:
        """Reverse mode's ``rt.zeros_like(a)``, ``rt.ones_like(a)`` of an array: filled on the device."""
        a = node.args[0].id
        result = self.probe(node)
        shape = self.shape_of(self.operands(self.folded[a])) if a in self.folded else f"{a}.shape"
        return self._filled(shape, SEEDS[_text(node.func)], result)

    def _filled(self, shape: str, value: str, result: Any) -> gast.Name:
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.full({shape}, {value}, np.{result.dtype.name})")
        self.env[temp] = result
        self.owned.add(temp)
        return _name(temp)

    def unreduce(self, node: gast.Call) -> gast.Name:
        """Reverse mode's ``rt.unreduce(g, a, axis, keepdims)``: the cotangent ``g`` of a reduction of ``a``, as
        an array of ``a``'s shape: filled with ``g`` where it is a number, else each element ``g``'s at its
        kept indices (``kernels.unreduce_kernel``), or over no axis ``g`` broadcast (``kernels.broadcast_kernel``);
        ``axis`` and ``keepdims`` constants. Of a number ``a``, the number ``g``."""
        if len(node.args) != 4 or node.keywords or not isinstance(node.args[1], gast.Name):
            raise self.refuse(f"`{_text(node)}`")
        if not probes.is_array(self.env.get(node.args[1].id)):  # of a number: the number ``g``
            if probes.is_array(self.probe(node.args[0])):
                raise self.refuse(f"`{_text(node)}`")
            return self.temp_for(node.args[0])
        g, a = node.args[0], node.args[1].id
        try:
            axis, keepdims = (ast.literal_eval(gast.gast_to_ast(arg)) for arg in node.args[2:])
        except ValueError:
            raise self.refuse(f"`{_text(node)}`, the cotangent of a reduction over axes known at run time,") from None
        result = self.probe(node)
        shape = self._shape_of_name(a)
        if not probes.is_array(self.probe(g)):
            self.check_host(g)
            return self._filled(shape, _text(g), result)
        g = self.temp_for(g)
        kernel = self.fresh("unreduce")
        if axis is None:  # an array broadcast to a's shape (the cotangent of the sum that rt.unbroadcast takes)
            source = broadcast_kernel(kernel, result.ndim, self.env[g.id].ndim)
        else:
            source = unreduce_kernel(kernel, result.ndim, self.axes(axis, result.ndim), bool(keepdims))
        self.kernels.append((source, self.origin))
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.empty({shape}, np.{result.dtype.name})\n"
                           f"{kernel}[gr.grid({temp}.size)]({temp}, {g.id})")
        self.env[temp] = result
        self.owned.add(temp)
        return _name(temp)

    def prod_others(self, node: gast.Call) -> gast.expr:
        """The derivative of a product, ``rt.prod_others(a, axis)``: of a number, 1 (as the CPU's helper
        writes it); of a 1-d or 2-d array, ``gr.prod_others``'s kernel; ``axis`` a constant."""
        values = dict(zip(["a", "axis"], node.args))
        values.update({k.arg: k.value for k in node.keywords})
        if set(values) - {"a", "axis"} or "a" not in values:
            raise self.refuse(f"`{_text(node)}`")
        if not probes.is_array(self.probe(values["a"])):
            return _parse(f"1.0 + 0.0 * {_text(values['a'])}")[0].value
        try:
            axis = ast.literal_eval(gast.gast_to_ast(values["axis"])) if "axis" in values else None
        except ValueError:
            raise self.refuse(f"`{_text(node)}`, the derivative of a product over an axis known at run time,") \
                from None
        a = self.temp_for(values["a"])
        stand_in = self.env[a.id]
        if stand_in.ndim > 2 or not (axis is None or isinstance(axis, int)):
            raise self.refuse(f"`{_text(node)}`, the derivative of a product of other than a 1-d or 2-d array "
                              "over one axis or all,")
        axes = self.axes(axis, stand_in.ndim)  # NumPy's AxisError where it is out of bounds
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.prod_others({a.id}, {None if axis is None else axes[0]})")
        self.env[temp] = stand_in
        self.owned.add(temp)
        return _name(temp)

    def scan_derivative(self, node: gast.Call) -> gast.Name:
        """The derivatives of cumulative sums and products of 1-d and 2-d arrays (``axis`` a constant), lane by
        lane in the CPU's helpers' order: reverse mode's ``rt.cumsum_grad(g, a, axis)`` (``g``'s sums from each
        lane's end, ``gr.cumsum_grad``) and ``rt.cumprod_grad(g, a, axis)``, forward mode's
        ``rt.cumprod_jvp(h, a, axis)``."""
        helper = _text(node.func)
        values = dict(zip(["g", "a", "axis"], node.args))
        values.update({k.arg: k.value for k in node.keywords})
        if set(values) - {"g", "a", "axis"} or not {"g", "a"} <= set(values):
            raise self.refuse(f"`{_text(node)}`")
        g, a = (self.temp_for(values[k]) for k in ("g", "a"))
        stand_ins = [self.env.get(g.id), self.env.get(a.id)]
        try:
            axis = ast.literal_eval(gast.gast_to_ast(values["axis"])) if "axis" in values else None
        except ValueError:
            raise self.refuse(f"`{_text(node)}`, the derivative of a cumulative sum or product over an axis known "
                              "at run time,") from None
        if not all(probes.is_array(v) and v.ndim <= 2 for v in stand_ins) or \
                not (axis is None or isinstance(axis, int)):
            raise self.refuse(f"`{_text(node)}`, the derivative of a cumulative sum or product of other than a 1-d "
                              "or 2-d array,")
        if axis is not None:
            axis = self.axes(axis, stand_ins[1].ndim)[0]
        temp = self.fresh("t")
        where = self.origin.position() if self.origin is not None else ""
        flat = helper == "rt.cumprod_jvp" and axis is None  # a tangent of the flattened cumulative product
        result = np.ones((1,) * (1 if flat else stand_ins[1].ndim), np.result_type(*stand_ins))
        if helper == "rt.cumsum_grad":
            call = f"gr.cumsum_grad({g.id}, {self._shape_of_name(a.id)}, {axis!r}, {where!r})"
        else:
            call = f"gr.{helper[3:]}({g.id}, {a.id}, {axis!r}, np.{result.dtype.name}, {where!r})"
        self.pre += _parse(f"{temp} = {call}")
        self.env[temp] = result
        self.owned.add(temp)
        return _name(temp)

    def _shape_of_name(self, a: str) -> str:
        """The driver's expression of array ``a``'s shape (a folded one's from what its kernel reads)."""
        return self.shape_of(self.operands(self.folded[a])) if a in self.folded else f"{a}.shape"

    def unbroadcast(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.unbroadcast(g, x)``: the cotangent ``g`` of a broadcast summed back to ``x``'s
        shape: ``g`` itself or its sum where ``x`` is a number; an array of ``x``'s shape filled with ``g``
        where ``g`` is a number; else a kernel (``kernels.unbroadcast_kernel``) with ``g``'s expression fused."""
        if len(node.args) != 2 or node.keywords or not isinstance(node.args[1], gast.Name):
            raise self.refuse(f"`{_text(node)}`")
        g, x = node.args
        g_value, x_value = self.probe(g), self.env.get(x.id)
        if not probes.is_array(x_value):
            if not probes.is_array(g_value):
                return g
            return self.hoist(gast.Call(func=gast.Attribute(value=_name("np"), attr="sum", ctx=gast.Load()),
                                        args=[g], keywords=[]))
        result = self.probe(node)
        if not probes.is_array(g_value):
            self.check_host(g)
            return self._filled(self._shape_of_name(x.id), _text(g), result)
        if g_value.ndim < x_value.ndim:
            raise self.refuse(f"`{_text(node)}`, a cotangent of fewer dimensions than its primal,")
        g = self.numbers_for_metadata(g)
        operands = self.operands(g)
        expr = self.element(g, operands)
        kernel = self.fresh("unbroadcast")
        self.kernels.append((unbroadcast_kernel(kernel, expr, operands, g_value.ndim, x_value.ndim,
                                                result.dtype), self.origin))
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.empty({self._shape_of_name(x.id)}, np.{result.dtype.name})\n"
                           f"{kernel}[gr.grid({temp}.size)]"
                          f"({', '.join([temp, self.shape_of(operands)] + operands.args())})")
        self.env[temp] = result
        self.owned.add(temp)
        return _name(temp)

    def stack_buffer(self, node: gast.Call) -> gast.Name:
        """``rt.stack_buffer(leaf, length)`` (an unrolled ``vmap``'s stacked results): uninitialised, on the
        device, of ``leaf``'s dtype and shape after ``length`` rows; ``rt.stack_rows(rows, length)`` (a ``vmap``
        over blocks of examples): ``length`` rows like those of ``rows``."""
        rows = _text(node.func) == "rt.stack_rows"
        if len(node.args) != 2 or node.keywords or not isinstance(node.args[0], (gast.Name, gast.Constant)):
            raise self.refuse(f"`{_text(node)}`")
        self.check_host(node.args[1])
        leaf = self.probe(node.args[0])
        if rows and (not probes.is_array(leaf) or leaf.ndim < 1):
            raise self.refuse(f"`{_text(node)}` of other than an array")
        shape = f"({_text(node.args[1])},)"
        if probes.is_array(leaf):
            shape += f" + tuple({self._shape_of_name(node.args[0].id)}){'[1:]' if rows else ''}"
        dtype = np.asarray(leaf).dtype
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.empty({shape}, np.{dtype.name})")
        self.env[temp] = np.ones((1,) * (np.ndim(leaf) + (not rows)), dtype)
        self.owned.add(temp)
        return _name(temp)

    def save_row(self, stmt: gast.Expr) -> List[gast.stmt]:
        """Reverse mode's ``rt.save_row(table, row, values)`` (a ``for`` loop's tape of 1-d arrays): ``values``
        copied into the row of the tape the driver allocated, on the device (``gr.save_row``)."""
        call = stmt.value
        self.pre = []
        if len(call.args) != 3 or call.keywords or not isinstance(call.args[0], gast.Name) or \
                call.args[0].id not in self.owned or probes.signature(self.env.get(call.args[0].id)) != \
                (self.env[call.args[0].id].dtype, 2) or probes.signature(self.probe(call.args[2]))[1] != 1:
            raise self.refuse(f"`{_text(call)}`")
        self.check_host(call.args[1])
        values = self.temp_for(self.hoist(call.args[2]))
        where = self.origin.position() if self.origin is not None else ""
        return self.pre + _parse(f"gr.save_row({call.args[0].id}, {_text(call.args[1])}, {values.id}, {where!r})")

    def tape(self, node: gast.Call) -> gast.expr:
        """The copies of ``TAPES``: of a number, itself; of an array, a new array on the device (a tape whose
        rows ``rt.reserve_rows(tape, n)`` reserves: itself where it has ``n``, a host number, else a longer one)."""
        helper = TAPES[_text(node.func)]
        if len(node.args) != (2 if _text(node.func) in ("rt.unaliased", "rt.reserve_rows") else 1) or node.keywords:
            raise self.refuse(f"`{_text(node)}`")
        value = self.probe(node.args[0])
        if not probes.is_array(value):
            if helper.startswith("gr."):
                raise self.refuse(f"`{_text(node)}`")
            return node.args[0]
        if helper.startswith("np."):  # an elementwise copy: a kernel writes it
            return gast.Call(func=_parse(helper)[0].value, args=node.args[:1], keywords=[])
        array = self.temp_for(node.args[0])
        rows = ""
        if helper == "gr.reserve_rows":
            self.check_host(node.args[1])
            rows = f", {_text(node.args[1])}"
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = {helper}({array.id}{rows})")
        self.env[temp] = value
        self.owned.add(temp)
        return _name(temp)
