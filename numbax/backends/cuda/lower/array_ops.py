"""array_ops: array operations the GPU lowering makes of views, copies and its other launches: ``x.item()``,
``np.concatenate`` and ``np.stack``, ``np.diag``, ``np.tril`` and ``np.triu``, ``np.moveaxis``, ``np.ravel``, and norms of orders other than
2 (``np.linalg.norm`` with ``ord``). Each gives the name (or the expression) that holds its result, in NumPy's
semantics: a view exactly where NumPy's result is one.
"""
from __future__ import annotations

import ast
from typing import Any, Tuple

import gast
import numpy as np

from numbax.backends.cuda.lower import probes
from numbax.backends.cuda.lower.kernels import Operands, elementwise_kernel
from numbax.backends.cuda.lower.rewrites import Rewrites
from numbax.backends.cuda.lower.state import name as _name, parse as _parse, text as _text
from numbax.errors import NumbaxShapeError
from numbax.primitives.cuda import Triangle

JOINS = frozenset({"np.concatenate", "np.concat", "rt.stack", "np.stack"})


class ArrayOps(Rewrites):
    """The array operations (see the module docstring)."""

    def copied(self, node: gast.Call) -> gast.Name:
        """A reshape or ``np.ascontiguousarray`` (``launches``)."""
        raise NotImplementedError

    def transposed(self, array: gast.expr, axes: Any) -> gast.Name:
        """A view with permuted axes (``launches``)."""
        raise NotImplementedError

    def item(self, value: gast.expr) -> gast.expr:
        """``x.item()``: of a number, the Python number of its kind (``float(x)``); of an array, its one element,
        read on the host (``gr.item``: NumPy's ``ValueError`` where it has another size)."""
        stand_in = self.probe(value)
        if not probes.is_array(stand_in):
            kind = {"b": "bool", "i": "int", "u": "int", "f": "float"}.get(np.asarray(stand_in).dtype.kind)
            if kind is None:
                raise self.refuse(f"`{_text(value)}.item()` of a {np.asarray(stand_in).dtype} number")
            return gast.Call(func=_name(kind), args=[value], keywords=[])
        array = self.temp_for(value)
        temp = self.fresh("n")
        where = self.origin.position() if self.origin is not None else ""
        self.pre += _parse(f"{temp} = gr.item({array.id}, {where!r})")
        self.env[temp] = stand_in.dtype.type(1).item()
        return _name(temp)

    def joined(self, node: gast.Call) -> gast.Name:
        """``np.concatenate(arrays, axis)`` and ``np.stack(arrays, axis)`` of a tuple or list of arrays of one
        rank (their shapes checked before, ``rt.check_concatenate``): a new array of their common dtype, each
        one copied into its part by a kernel (``gr.join``)."""
        stack = _text(node.func).endswith("stack")
        values = dict(zip(["arrays", "axis"], node.args))
        values.update({k.arg: k.value for k in node.keywords})
        if len(node.args) > 2 or set(values) - {"arrays", "axis"} or \
                not isinstance(values.get("arrays"), (gast.Tuple, gast.List)) or not values["arrays"].elts:
            raise self.refuse(f"`{_text(node)}` of other than a tuple or list of arrays and an axis")
        pieces = [self.temp_for(e).id for e in values["arrays"].elts]
        stand_ins = [self.env.get(p) for p in pieces]
        if not all(probes.is_array(v) for v in stand_ins):
            raise self.refuse(f"`{_text(node)}` of other than arrays")
        try:
            axis = ast.literal_eval(gast.gast_to_ast(values["axis"])) if "axis" in values else 0
        except ValueError:
            raise self.refuse(f"`{_text(node)}` with an axis known only at run time") from None
        if not isinstance(axis, int):
            raise self.refuse(f"`{_text(node)}` with axis={axis!r}")
        odd = next((k for k, v in enumerate(stand_ins) if v.ndim != stand_ins[0].ndim), None)
        if odd is not None:  # NumPy's error, which the run-time check before would raise
            where = self.origin.position() if self.origin is not None else ""
            if stack:
                raise NumbaxShapeError("all input arrays must have the same shape", where)
            raise NumbaxShapeError("all the input arrays must have same number of dimensions, but the array at "
                                   "index 0 has {} dimension(s) and the array at index {} has {} dimension(s)",
                                   where, stand_ins[0].ndim, odd, stand_ins[odd].ndim)
        ndim = stand_ins[0].ndim + stack
        axis = self.axes(axis, ndim)[0]
        dtype = np.result_type(*stand_ins)
        kernel = self.fresh("kernel")
        operands = Operands({"a": stand_ins[0].ndim}, [])
        self.kernels.append((elementwise_kernel(kernel, operands.element_of("a"), operands, stand_ins[0].ndim),
                             self.origin))
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.join(({', '.join(pieces)},), {axis}, {stack}, np.{dtype.name}, {kernel})")
        self.env[temp] = np.ones((1,) * ndim, dtype)
        self.owned.add(temp)
        return _name(temp)

    def spectral_norm(self, a: gast.expr, rows: int, cols: int, keepdims: bool) -> gast.Name:
        """``np.linalg.norm(a, 2, (rows, cols), keepdims)``, as NumPy's: the two axes moved last (a view), the
        stack of matrices made contiguous and 3-d, each matrix's largest singular value (``gr.spectral_norms``),
        and the result shaped as the stack (with axes of 1 at ``rows`` and ``cols``, ``keepdims``); of one
        matrix without ``keepdims``, a number on the host."""
        a = self.temp_for(a).id
        ndim = self.env[a].ndim
        if rows == cols:
            raise NumbaxShapeError("Duplicate axes given.", self.origin.position() if self.origin else "")
        stack = [k for k in range(ndim) if k not in (rows, cols)]
        view = self.transposed(_name(a), stack + [rows, cols]).id
        matrices = self.copied(_parse(f"np.ascontiguousarray({view})")[0].value).id
        flat = self.copied(_parse(f"np.reshape({matrices}, (-1, {a}.shape[{rows}], {a}.shape[{cols}]))")[0].value)
        temp = self.fresh("t")
        where = self.origin.position() if self.origin is not None else ""
        self.pre += _parse(f"{temp} = gr.spectral_norms({flat.id}, {where!r})")
        self.env[temp] = np.ones(1, self.env[a].dtype)
        self.owned.add(temp)
        shape = [f"{a}.shape[{k}]" if k in stack else "1" for k in range(ndim) if k in stack or keepdims]
        if not shape:
            return self.item(_name(temp))
        return self.copied(_parse(f"np.reshape({temp}, ({''.join(d + ', ' for d in shape)}))")[0].value)

    def diag(self, node: gast.Call) -> gast.Name:
        """``np.diag(a)`` (the main diagonal): of a matrix, a view of its diagonal (``gr.diagonal``), as NumPy's;
        of a vector, a new matrix with it on the diagonal (``gr.diag_matrix``)."""
        values = dict(zip(["v", "k"], node.args))
        values.update({k.arg: k.value for k in node.keywords})
        if len(node.args) > 2 or set(values) - {"v", "k"} or "v" not in values or \
                _text(values.get("k", gast.Constant(value=0, kind=None))) != "0":
            raise self.refuse(f"`{_text(node)}` of other than the main diagonal")
        v = self.temp_for(values["v"])
        stand_in = self.env.get(v.id)
        if not probes.is_array(stand_in) or stand_in.ndim > 2:
            raise self.refuse(f"`{_text(node)}` of other than a 1-d or 2-d array")
        temp = self.fresh("t")
        if stand_in.ndim == 2:
            self.pre += _parse(f"{temp} = gr.diagonal({v.id})")
            self.env[temp], self.views[temp] = np.ones(1, stand_in.dtype), self.base_of(v.id)
        else:
            self.pre += _parse(f"{temp} = gr.diag_matrix({v.id}, ({v.id}.shape[0], {v.id}.shape[0]), "
                               f"np.{stand_in.dtype.name})")
            self.env[temp] = np.ones((1, 1), stand_in.dtype)
            self.owned.add(temp)
        return _name(temp)

    def diag_grad(self, node: gast.Call) -> gast.Name:
        """Reverse mode's ``rt.diag_grad(g, v, k)`` (the cotangent of ``v`` in ``np.diag(v, k)``) of the main
        diagonal, as the CPU's helper: of a vector ``v``, a copy of the matrix ``g``'s diagonal; of a matrix, zeros
        of ``v``'s shape (in ``g``'s dtype promoted to a float) with the vector ``g`` on the diagonal
        (``gr.diag_matrix``)."""
        values = dict(zip(["g", "v", "k"], node.args))
        if node.keywords or len(node.args) > 3 or not {"g", "v"} <= set(values) or \
                _text(values.get("k", gast.Constant(value=0, kind=None))) != "0":
            raise self.refuse(f"`{_text(node)}` of other than the main diagonal")
        g, v = (self.temp_for(values[k]).id for k in ("g", "v"))
        cotangent, stand_in = self.env.get(g), self.env.get(v)
        if not probes.is_array(stand_in) or not probes.is_array(cotangent) or \
                (stand_in.ndim, cotangent.ndim) not in ((1, 2), (2, 1)):
            raise self.refuse(f"`{_text(node)}` of other than a 1-d or 2-d array")
        if stand_in.ndim == 1:
            return self.hoist(_parse(f"np.copy(np.diag({g}))")[0].value)
        dtype = np.result_type(cotangent.dtype, np.float64)
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.diag_matrix({g}, {v}.shape, np.{dtype.name})")
        self.env[temp] = np.ones((1, 1), dtype)
        self.owned.add(temp)
        return _name(temp)

    def triangle(self, app, lowering: Triangle) -> gast.Name:
        """``np.tril(m, k)`` and ``np.triu(m, k)`` of a matrix, ``k`` a host integer: a new matrix of ``m``'s
        dtype (``gr.triangle``)."""
        values = dict(zip(["m", "k"], app.args))
        values.update(app.keywords)
        if len(app.args) > 2 or set(values) - {"m", "k"} or "m" not in values:
            raise self.refuse(f"`{app.name}` with arguments other than m and k")
        m = self.temp_for(values["m"]).id
        k = values.get("k", gast.Constant(value=0, kind=None))
        self.check_host(k)
        stand_in = self.env.get(m)
        if not probes.is_array(stand_in) or stand_in.ndim != 2 or \
                np.asarray(self.probe(k)).dtype.kind not in "iu":
            raise self.refuse(f"`{app.name}` of other than a matrix and an integer diagonal")
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.triangle({m}, {_text(k)}, {lowering.lower})")
        self.env[temp] = np.ones((1, 1), stand_in.dtype)
        self.owned.add(temp)
        return _name(temp)

    def moveaxis_arguments(self, node: gast.Call) -> Tuple[gast.expr, tuple]:
        """The array of ``np.moveaxis(a, source, destination)`` and the order of its axes in the view, from
        constant ``source`` and ``destination`` (NumPy's ``AxisError`` and ``ValueError`` where it raises)."""
        values = dict(zip(["a", "source", "destination"], node.args))
        values.update({k.arg: k.value for k in node.keywords})
        if set(values) != {"a", "source", "destination"}:
            raise self.refuse(f"`{_text(node)}`")
        try:
            source, destination = (ast.literal_eval(gast.gast_to_ast(values[k])) for k in ("source", "destination"))
        except ValueError:
            raise self.refuse(f"`{_text(node)}` with axes known only at run time") from None
        stand_in = self.probe(values["a"])
        if not probes.is_array(stand_in):
            raise self.refuse(f"`{_text(node)}` of a number")
        try:  # NumPy's own checks and order, on a stand-in of the same rank
            axes = np.broadcast_to(np.empty(()), tuple(range(1, stand_in.ndim + 1)))  # axis k has extent k + 1
            order = np.moveaxis(axes, source, destination).shape
        except (ValueError, TypeError) as exc:
            raise NumbaxShapeError(str(exc), self.origin.position() if self.origin else "") from None
        return values["a"], tuple(extent - 1 for extent in order)

    def raveled(self, array: gast.expr) -> gast.Name:
        """``np.ravel(a)``, ``a.ravel()``: ``a`` made C-contiguous (itself where it is, else a copy) and viewed
        as one dimension, so a view of ``a`` exactly where NumPy's is one."""
        contiguous = self.copied(_parse(f"np.ascontiguousarray({self.temp_for(array).id})")[0].value)
        return self.copied(_parse(f"np.reshape({contiguous.id}, (-1,))")[0].value)

    def norm_of_order(self, app, a: gast.expr, order: Any, axis: Any, keepdims: bool) -> gast.expr:
        """``np.linalg.norm(a, ord, axis, keepdims)`` of a floating-point array with ``ord`` given, in NumPy's
        operations: of vectors (``axis`` an int, or ``a`` 1-d), the sum of magnitudes (1), the root of the sum
        of their squares (2), their maximum and minimum (``inf``, ``-inf``), ``sum(|a| ** p) ** (1 / p)``; of
        matrices (``axis`` two ints, or ``a`` 2-d), ``'fro'``, the maximum or minimum of the sums of magnitudes
        down the columns (1, -1) or along the rows (``inf``, ``-inf``), and the largest singular value (2:
        ``spectral_norm``). The others (-2, ``'nuc'``: singular values; 0) are refused."""
        stand_in = self.probe(a)
        if not probes.is_array(stand_in) or stand_in.dtype.kind != "f":
            raise self.refuse(f"`{app.name}` with ord={order!r} of other than an array of floating-point numbers")
        ndim, magnitudes = stand_in.ndim, f"np.abs({self.temp_for(a).id})"
        if isinstance(axis, int) or axis is None and ndim == 1:
            vector = {1: "np.sum({m}{k})", 2: "np.sqrt(np.sum(np.square({m}){k}))", np.inf: "np.max({m}{k})",
                      -np.inf: "np.min({m}{k})"}
            rest = f", axis={axis!r}, keepdims={keepdims!r}"
            if order in vector:
                return _parse(vector[order].format(m=magnitudes, k=rest))[0].value
            if isinstance(order, (int, float)) and order not in (0, 2) and np.isfinite(order):
                return _parse(f"np.sum({magnitudes} ** {float(order)!r}{rest}) ** {1.0 / order!r}")[0].value
            raise self.refuse(f"`{app.name}` with ord={order!r}")
        rows, cols = axis if axis is not None else (0, 1) if ndim == 2 else (None, None)
        if rows is None or not isinstance(rows, int) or not isinstance(cols, int):
            raise self.refuse(f"`{app.name}` with ord={order!r} of other than vectors or matrices")
        if order == "fro":
            return _parse(f"np.sqrt(np.sum(np.square({magnitudes}), axis={(rows, cols)!r}, "
                          f"keepdims={keepdims!r}))")[0].value
        if order == 2:
            return self.spectral_norm(a, rows % ndim, cols % ndim, keepdims)
        summed = {1: rows, -1: rows, np.inf: cols, -np.inf: cols}.get(order)
        if summed is None:
            raise self.refuse(f"`{app.name}` with ord={order!r} (singular values)")
        extreme = "max" if order > 0 else "min"
        return _parse(f"np.{extreme}(np.sum({magnitudes}, axis={summed}, keepdims=True), axis={(rows, cols)!r}, "
                      f"keepdims={keepdims!r})")[0].value
