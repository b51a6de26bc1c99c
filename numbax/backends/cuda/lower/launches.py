"""The GPU lowering's launches: elementwise kernels, block reductions, matrix products and constructors.

Each writes its kernel's source (``kernels``) into the state and the driver's statements that allocate and
launch it, and gives back the name that holds its result.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Tuple

import gast
import numpy as np

from numbax.ast_passes.analyses.primitives import application
from numbax.backends.cuda.lower import probes
from numbax.backends.cuda.lower.indexing import Indexing
from numbax.backends.cuda.lower.kernels import elementwise_kernel, finisher, reduction_kernel
from numbax.backends.cuda.lower.state import name as _name, parse as _parse, text as _text
from numbax.errors import NumbaxDeviceError, NumbaxShapeError
from numbax.primitives.cuda import MATMUL, Reduction
from numbax.primitives.registry import entry

_CONSTRUCTORS = frozenset({"zeros", "ones", "empty"})
# helpers of numbers computed on the host where an array expression reads them (``state.HOST_RUNTIME``)
_NUMBERS_ON_THE_HOST = frozenset({"rt.power_exponent"})
_SEEDS = {"rt.zeros_like": "0", "rt.ones_like": "1"}  # reverse mode's cotangents of arrays, before accumulating
_MATH_AS_NUMPY = {name: name for name in ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos",
                                          "tan", "sinh", "cosh", "tanh", "fabs")}
_MATH_AS_NUMPY.update(asin="arcsin", acos="arccos", atan="arctan", asinh="arcsinh", acosh="arccosh",
                      atanh="arctanh")


class Launches(Indexing):
    """The launches of the driver's array operations."""

    def temp_for(self, node: gast.expr) -> gast.Name:
        """A name holding ``node``'s value (the driver assigns it)."""
        raise NotImplementedError

    def hoist(self, node: gast.expr) -> gast.expr:
        """``node`` with each reduction, product and constructor in it launched first (into ``self.pre``) and
        replaced by the name of its result; ``math.f(x)`` as ``np.f(x)``: on the host, NumPy gives ``nan``
        where ``math`` raises ``ValueError`` (as compiled code does on the CPU), and kernels compute either
        alike."""
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.expr):
                setattr(node, field, self.hoist(value))
            elif isinstance(value, list):
                setattr(node, field, [self.hoist(v) if isinstance(v, gast.expr) else v for v in value])
        if isinstance(node, gast.Call) and _text(node.func).startswith("math.") and \
                _text(node.func)[5:] in _MATH_AS_NUMPY and not node.keywords:
            node.func = gast.Attribute(value=_name("np"), attr=_MATH_AS_NUMPY[_text(node.func)[5:]], ctx=gast.Load())
        if isinstance(node, gast.Attribute) and node.attr == "T" and isinstance(node.value, gast.Name):
            return node  # a view, made on the host
        if self.is_indexing(node):
            return self.index_read(node)  # an element or a view, read on the host (``indexing``)
        if self.is_shape_from_the_end(node):
            return self.shape_from_the_front(node)
        if isinstance(node, gast.Call) and _text(node.func) in _NUMBERS_ON_THE_HOST and \
                not probes.is_array(self.probe(node)):
            return self.number_on_the_host(node)
        if self._same_type_cast(node):
            return node.func.value
        app = application(node) if isinstance(node, (gast.Call, gast.BinOp)) else None
        lowering = getattr(entry(app.key), "cuda", None) if app is not None else None
        if isinstance(lowering, Reduction):
            return self.launch_reduction(node, app, lowering)
        if lowering is MATMUL:
            return self.launch_matmul(node, app)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                isinstance(node.func.value, gast.Name) and node.func.value.id == "np" and \
                node.func.attr in _CONSTRUCTORS:
            return self.construct(node)
        if isinstance(node, gast.Call) and _text(node.func) == "rt.unreduce":
            return self.unreduce(node)
        if isinstance(node, gast.Call) and _text(node.func) in _SEEDS and len(node.args) == 1 and \
                isinstance(node.args[0], gast.Name) and probes.is_array(self.env.get(node.args[0].id)):
            return self.seed(node)
        return node

    def number_on_the_host(self, node: gast.Call) -> gast.Name:
        """A helper's number computed on the host first (into ``self.pre``): a kernel takes it as an argument."""
        self.check_host(node)
        temp = self.fresh("n")
        self.pre.append(gast.Assign(targets=[_name(temp, gast.Store())], value=node, type_comment=None))
        self.env[temp] = self.probe(node)
        return _name(temp)

    def _same_type_cast(self, node: gast.expr) -> bool:
        """``x.astype(t)`` where ``x`` has type ``t`` already (the CPU's pipeline casts a float32 mean back)."""
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and
                node.func.attr == "astype" and len(node.args) == 1 and not node.keywords):
            return False
        try:
            return self.probe(node.func.value).dtype == self.probe(node).dtype
        except NumbaxDeviceError:
            return False

    def launch_elementwise(self, target: str, value: gast.expr, result: Any) -> List[gast.stmt]:
        """``target = value`` for an elementwise array expression: allocate, launch its kernel."""
        return self.launch(value, target, result, allocate=True)

    def launch(self, value: gast.expr, target: str, result: Any, allocate: bool) -> List[gast.stmt]:
        """The kernel of an elementwise expression, and the driver's launch of it into ``target`` (after
        ``self.pre``)."""
        value = self.numbers_for_metadata(value)
        operands = self.operands(value)
        expr = self.element(value, operands)
        kernel = self.fresh("kernel")
        self.kernels.append((elementwise_kernel(kernel, expr, operands, result.ndim), self.origin))
        if not allocate:
            return _parse(f"{kernel}[gr.grid({target}.size)]({', '.join([target] + operands.args())})")
        out = self.fresh("t") if target in operands.arrays else target  # an operand is read after allocating
        lines = [f"{out} = gr.empty({self.shape_of(operands)}, np.{result.dtype.name})",
                 f"{kernel}[gr.grid({out}.size)]({', '.join([out] + operands.args())})"]
        return _parse("\n".join(lines + ([f"{target} = {out}"] if out != target else [])))

    def numbers_for_metadata(self, node: gast.expr) -> gast.expr:
        """``node`` with each ``x.shape[k]``, ``x.size`` and ``x.ndim`` read on the host into a number first
        (into ``self.pre``): kernels take numbers as arguments."""
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.expr):
                setattr(node, field, self.numbers_for_metadata(value))
            elif isinstance(value, list):
                setattr(node, field, [self.numbers_for_metadata(v) if isinstance(v, gast.expr) else v
                                      for v in value])
        metadata = isinstance(node, gast.Attribute) and node.attr in ("size", "ndim") or \
            isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute) and node.value.attr == "shape"
        if not metadata:
            return node
        self.check_host(node)
        temp = self.fresh("n")
        self.pre.append(gast.Assign(targets=[_name(temp, gast.Store())], value=node, type_comment=None))
        self.env[temp] = self.probe(node)
        return _name(temp)

    def launch_reduction(self, node: gast.expr, app, lowering: Reduction) -> gast.Name:
        """A reduction: its kernel (its operand's expression fused in), launched through ``gr.reduce``."""
        operand, axis, keepdims = self.reduction_arguments(app)
        operand = self.numbers_for_metadata(operand)
        stand_in = self.probe(operand)
        if not probes.is_array(stand_in):
            raise self.refuse(f"`{app.name}` of a number")
        axes = self.axes(axis, stand_in.ndim)
        result = self.probe(node)
        dtype = np.asarray(result).dtype
        operands = self.operands(operand)
        expr = self.element(operand, operands)
        kernel = self.fresh("reduce")
        self.kernels.append((reduction_kernel(kernel, expr, operands, stand_in.ndim, axes, lowering.op, dtype),
                             self.origin))
        temp = self.fresh("t")
        where = self.origin.position() if self.origin is not None else ""
        call = (f"{temp} = gr.reduce({kernel}, {finisher(lowering.op, lowering.mean)}, "
                f"{self.shape_of(operands)}, {axes!r}, {keepdims!r}, np.{dtype.name}, "
                f"({', '.join(operands.args())},), {where!r}, {lowering.op == 'sum'})")
        self.pre += _parse(call)
        self.env[temp] = result
        self.owned.add(temp)
        return _name(temp)

    def reduction_arguments(self, app) -> Tuple[gast.expr, Any, bool]:
        """The operand, ``axis`` and ``keepdims`` of a reduction (constants; anything else refused)."""
        names = ["a", "axis"]
        values: Dict[str, gast.expr] = dict(zip(names, app.args))
        if len(app.args) > len(names) or set(app.keywords) - {"axis", "keepdims"}:
            raise self.refuse(f"`{app.name}` with arguments other than axis and keepdims")
        values.update(app.keywords)
        constants = {}
        for key in ("axis", "keepdims"):
            node = values.get(key)
            try:
                constants[key] = None if node is None else ast.literal_eval(gast.gast_to_ast(node))
            except ValueError:
                raise self.refuse(f"`{app.name}` with a {key} known only at run time") from None
        return values["a"], constants["axis"], bool(constants["keepdims"])

    def axes(self, axis: Any, ndim: int) -> Tuple[int, ...]:
        """``axis`` as sorted non-negative axes of an ``ndim``-d operand."""
        given = tuple(range(ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        for a in given:
            if not isinstance(a, int) or not -ndim <= a < ndim:
                raise NumbaxShapeError("axis {} is out of bounds for array of dimension {}",
                                       self.origin.position() if self.origin else "", a, ndim)
        return tuple(sorted({a % ndim for a in given}))

    def launch_matmul(self, node: gast.expr, app) -> gast.Name:
        """``a @ b`` of 1-d or 2-d arrays: ``gr.matmul``."""
        if app.keywords or len(app.args) != 2:
            raise self.refuse(f"`{app.name}` with keyword arguments")
        names = [self.temp_for(arg) for arg in app.args]
        for name in names:
            value = self.env.get(name.id)
            if not probes.is_array(value) or value.ndim > 2:
                raise self.refuse(f"`{_text(node)}` of other than 1-d or 2-d arrays")
        result = self.probe(gast.BinOp(left=names[0], op=gast.MatMult(), right=names[1]))
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.matmul({names[0].id}, {names[1].id})")
        self.env[temp] = result
        self.owned.add(temp)
        return _name(temp)

    def seed(self, node: gast.Call) -> gast.Name:
        """Reverse mode's ``rt.zeros_like(a)``, ``rt.ones_like(a)`` of an array: filled on the device."""
        a = node.args[0].id
        result = self.probe(node)
        shape = self.shape_of(self.operands(self.folded[a])) if a in self.folded else f"{a}.shape"
        return self._filled(shape, _SEEDS[_text(node.func)], result)

    def _filled(self, shape: str, value: str, result: Any) -> gast.Name:
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.full({shape}, {value}, np.{result.dtype.name})")
        self.env[temp] = result
        self.owned.add(temp)
        return _name(temp)

    def unreduce(self, node: gast.Call) -> gast.Name:
        """Reverse mode's ``rt.unreduce(g, a, None, keepdims)``: the cotangent ``g`` of a reduction of ``a`` to a
        number, as an array of ``a``'s shape filled with it (a reduction over axes is refused)."""
        if len(node.args) != 4 or node.keywords or not isinstance(node.args[2], gast.Constant) or \
                node.args[2].value is not None or not isinstance(node.args[1], gast.Name):
            raise self.refuse(f"`{_text(node)}`, the cotangent of a reduction over axes,")
        g, a = node.args[0], node.args[1].id
        if probes.is_array(self.probe(g)) or not probes.is_array(self.env.get(a)):
            raise self.refuse(f"`{_text(node)}`")
        self.check_host(g)
        result = self.probe(node)
        shape = self.shape_of(self.operands(self.folded[a])) if a in self.folded else f"{a}.shape"
        return self._filled(shape, _text(g), result)

    def construct(self, node: gast.Call) -> gast.Name:
        """``np.zeros(shape)``, ``np.ones(shape)`` (``dtype=`` a NumPy type): made on the host, copied over;
        ``np.empty(shape)``: allocated on the device."""
        if len(node.args) != 1 or set(k.arg for k in node.keywords) - {"dtype"}:
            raise self.refuse(f"`{_text(node)}` with arguments other than a shape and dtype")
        self.check_host(node.args[0])
        result = self.probe(node)
        temp = self.fresh("t")
        fill = 1 if node.func.attr == "ones" else 0
        shape = _text(node.args[0])
        if node.func.attr == "empty":
            self.pre += _parse(f"{temp} = gr.empty({shape}, np.{result.dtype.name})")
        else:
            self.pre += _parse(f"{temp} = gr.full({shape}, {fill}, np.{result.dtype.name})")
        self.env[temp] = result
        self.owned.add(temp)
        return _name(temp)
