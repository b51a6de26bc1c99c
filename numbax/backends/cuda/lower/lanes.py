"""The GPU lowering's operations along lanes, one thread per lane (a 1-d array's one lane, a matrix's rows or
columns): cumulative sums and products (``Scan``), and sorts and the permutations that differentiate them
(``Sort``).
"""
from __future__ import annotations

import ast
from typing import Dict

import gast
import numpy as np

from numbax.backends.cuda.lower import probes
from numbax.backends.cuda.lower.array_ops import ArrayOps
from numbax.backends.cuda.lower.state import name as _name, parse as _parse
from numbax.primitives.cuda import Scan, Sort

_SORT_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")  # NumPy's: each sorts to the same values


class Lanes(ArrayOps):
    """The launches of operations along lanes."""

    def launch_scan(self, node: gast.expr, app, lowering: Scan) -> gast.Name:
        """``np.cumsum(a, axis)`` and ``np.cumprod`` of a 1-d or 2-d array, ``axis`` a constant: ``gr.scan``."""
        values: Dict[str, gast.expr] = dict(zip(["a", "axis"], app.args))
        values.update(app.keywords)
        if len(app.args) > 2 or set(values) - {"a", "axis"}:
            raise self.refuse(f"`{app.name}` with arguments other than axis")
        a = self.temp_for(values["a"]).id
        stand_in = self.env.get(a)
        if not probes.is_array(stand_in) or stand_in.ndim > 2 or stand_in.dtype.kind not in "biuf":
            raise self.refuse(f"`{app.name}` of other than a 1-d or 2-d array of real numbers")
        try:
            axis = ast.literal_eval(gast.gast_to_ast(values["axis"])) if "axis" in values else None
        except ValueError:
            raise self.refuse(f"`{app.name}` with an axis known only at run time") from None
        result = getattr(np, f"cum{lowering.op}")(stand_in, axis=axis)
        axis = None if axis is None else self.axes(axis, stand_in.ndim)[0]
        temp = self.fresh("t")
        where = self.origin.position() if self.origin is not None else ""
        self.pre += _parse(f"{temp} = gr.scan({a}, {axis!r}, np.{result.dtype.name}, gr.{lowering.op}_rows, "
                           f"{where!r})")
        self.env[temp] = result
        self.owned.add(temp)
        return _name(temp)

    def launch_sort(self, node: gast.expr, app, lowering: Sort) -> gast.Name:
        """``np.sort(a, axis, kind)`` of a 1-d or 2-d array of real numbers (``axis`` None: flattened), reverse
        mode's ``rt.sort_grad(g, a, axis)`` and forward mode's ``rt.sort_gather(g, a, axis)`` (``axis`` an
        axis); ``axis`` and ``kind`` constants: ``gr.sort``."""
        params = ["a", "axis", "kind"] if lowering.op == "values" else ["g", "a", "axis"]
        values: Dict[str, gast.expr] = dict(zip(params, app.args))
        values.update(app.keywords)
        if len(app.args) > len(params) or set(values) - set(params) or not {"a", *params[:-2]} <= set(values):
            raise self.refuse(f"`{app.name}` with arguments other than {', '.join(params)}")
        try:
            axis, kind = (ast.literal_eval(gast.gast_to_ast(values[k])) if k in values else default
                          for k, default in (("axis", -1), ("kind", None)))
        except ValueError:
            raise self.refuse(f"`{app.name}` with an axis or kind known only at run time") from None
        if kind not in _SORT_KINDS:
            raise self.refuse(f"`{app.name}` with kind={kind!r}")
        a = self.temp_for(values["a"]).id
        g = self.temp_for(values["g"]).id if "g" in values else a
        stand_in, moved = self.env.get(a), self.env.get(g)
        if not probes.is_array(stand_in) or stand_in.ndim > 2 or stand_in.dtype.kind not in "biuf" or \
                not probes.is_array(moved) or moved.ndim != stand_in.ndim:
            raise self.refuse(f"`{app.name}` of other than a 1-d or 2-d array of real numbers")
        if axis is None and lowering.op != "values":
            raise self.refuse(f"`{app.name}` of a flattened array")
        result = np.sort(stand_in, axis=axis) if lowering.op == "values" else \
            np.ones(stand_in.shape, np.result_type(moved.dtype, np.float64))  # the CPU's helpers' dtype
        axis = None if axis is None else self.axes(axis, stand_in.ndim)[0]
        temp = self.fresh("t")
        where = self.origin.position() if self.origin is not None else ""
        self.pre += _parse(f"{temp} = gr.sort({a}, {g}, {axis!r}, {lowering.op == 'scatter'}, "
                           f"np.{result.dtype.name}, {where!r})")
        self.env[temp] = result
        self.owned.add(temp)
        return _name(temp)
