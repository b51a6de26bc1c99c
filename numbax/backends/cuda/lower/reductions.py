"""The GPU lowering's reductions: ``sum``, ``mean``, ``max``, ``min``, ``prod``, ``any``, ``all`` and the 2-norm
(``axis``, ``keepdims``) as a block-reduction kernel with their operand's expression fused in, launched through
``gr.reduce`` (which runs the second pass); ``argmax`` and ``argmin``.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, Tuple

import gast
import numpy as np

from numbax.backends.cuda.lower import probes
from numbax.backends.cuda.lower.contractions import Contractions
from numbax.backends.cuda.lower.kernels import IDENTITY, finisher, reduction_kernel
from numbax.backends.cuda.lower.state import name as _name, parse as _parse, text as _text
from numbax.primitives.cuda import ArgExtreme, Reduction

_INFINITIES = {"np.inf": np.inf, "-np.inf": -np.inf, "math.inf": np.inf, "-math.inf": -np.inf}  # a norm's ord


class Reductions(Contractions):
    """The launches of reductions."""

    def launch_reduction(self, node: gast.expr, app, lowering: Reduction) -> gast.Name:
        """A reduction: its kernel (its operand's expression fused in), launched through ``gr.reduce``."""
        operand, axis, keepdims, order = self.reduction_arguments(app, lowering)
        if isinstance(axis, tuple) and len(axis) == 1:
            axis = axis[0]
        if order is not None:
            return self.hoist(self.norm_of_order(app, operand, order, axis, keepdims))
        operand = self.numbers_for_metadata(operand)
        stand_in = self.probe(operand)
        if not probes.is_array(stand_in) and axis is None and not lowering.norm:
            return self.number_on_the_host_of(node, operand)
        if not probes.is_array(stand_in):
            raise self.refuse(f"`{app.name}` of a number")
        if lowering.norm and stand_in.dtype.kind != "f":
            raise self.refuse(f"`{app.name}` of a {stand_in.dtype.name} array")
        axes = self.axes(axis, stand_in.ndim)
        result = self.probe(node)
        dtype = np.asarray(result).dtype
        operands = self.operands(operand)
        expr = self.element(operand, operands)
        if lowering.norm:
            expr = f"gr.square({expr})"
        if lowering.op in ("any", "all"):
            expr = f"bool({expr})"
        kernel = self.fresh("reduce")
        self.kernels.append((reduction_kernel(kernel, expr, operands, stand_in.ndim, axes, lowering.op, dtype),
                             self.origin))
        temp = self.fresh("t")
        where = self.origin.position() if self.origin is not None else ""
        call = (f"{temp} = gr.reduce({kernel}, {finisher(lowering.op, lowering.mean, lowering.norm)}, "
                f"{self.shape_of(operands)}, {axes!r}, {keepdims!r}, np.{dtype.name}, "
                f"({', '.join(operands.args())},), {where!r}, {lowering.op in IDENTITY})")
        self.pre += _parse(call)
        self.env[temp] = result
        self.owned.add(temp)
        return _name(temp)

    def reduction_arguments(self, app, lowering: Reduction) -> Tuple[gast.expr, Any, bool, Any]:
        """The operand, ``axis``, ``keepdims`` and a norm's ``ord`` of a reduction (constants; anything else
        refused)."""
        names = ["x", "ord", "axis", "keepdims"] if lowering.norm else ["a", "axis"]
        values: Dict[str, gast.expr] = dict(zip(names, app.args))
        if len(app.args) > len(names) or set(app.keywords) - set(names[1:]) - {"keepdims"}:
            raise self.refuse(f"`{app.name}` with arguments other than axis and keepdims")
        values.update(app.keywords)
        values["a"] = values.get("a", values.get("x"))
        constants = {}
        for key in ("ord", "axis", "keepdims") if lowering.norm else ("axis", "keepdims"):
            node = values.get(key)
            try:
                constants[key] = None if node is None else _INFINITIES[_text(node)] if _text(node) in _INFINITIES \
                    else ast.literal_eval(gast.gast_to_ast(node))
            except ValueError:
                raise self.refuse(f"`{app.name}` with a {key} known only at run time") from None
        return values["a"], constants["axis"], bool(constants["keepdims"]), constants.get("ord")

    def launch_arg_extreme(self, node: gast.expr, app, lowering: ArgExtreme) -> gast.Name:
        """``np.argmax(a)`` and ``np.argmin(a)`` of a whole real array: the extreme by the block reduction, then
        ``gr.first_index``, a number on the host; over an ``axis`` (``keepdims``) of a matrix, one thread per
        lane (``gr.arg_extremes``)."""
        values: Dict[str, gast.expr] = dict(zip(["a", "axis", "out"], app.args))
        values.update(app.keywords)
        a, stand_in, axis, keepdims = self.real_operand_and_axis(app, values, set(), "axis and keepdims")
        if keepdims or axis is not None and not (stand_in.ndim == 1 and axis in (0, -1)):  # else a whole vector's
            if stand_in.ndim != 2 or not isinstance(axis, int):
                raise self.refuse(f"`{app.name}` over an axis of other than a matrix")
            temp = self.fresh("t")
            where = self.origin.position() if self.origin is not None else ""
            self.pre += _parse(f"{temp} = gr.arg_extremes({a}, {self.axes(axis, 2)[0]}, {lowering.op == 'max'}, "
                               f"{bool(keepdims)}, {where!r})")
            self.env[temp] = np.ones((1,) * (1 + bool(keepdims)), np.int64)
            self.owned.add(temp)
            return _name(temp)
        extreme = self.hoist(_parse(f"np.{lowering.op}({a})")[0].value)
        temp = self.fresh("n")
        where = self.origin.position() if self.origin is not None else ""
        self.pre += _parse(f"{temp} = gr.first_index({a}, {extreme.id}, {where!r})")
        self.env[temp] = np.int64(1)
        return _name(temp)
