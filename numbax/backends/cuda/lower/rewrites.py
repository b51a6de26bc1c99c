"""rewrites: what the GPU lowering computes through other operations it lowers, as an expression the driver
then hoists (``launches``): reverse mode's helpers of NumPy's derivatives (the cotangents of a variance, of a
maximum's choice, of solve, of a Cholesky factor, of matrix products, of a norm and a trace, of an inner
product, a power's exponent, of a write into an array; float32 values widened and a float32 parameter's
gradient cast back), and ``np.outer``, ``np.inner``, ``np.ptp``, ``np.var``, ``np.std`` and scipy's
``logsumexp``. Each follows the CPU's helper's order of operations.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, Set, Tuple

import gast
import numpy as np

from numbax.backends.cuda.lower import probes
from numbax.backends.cuda.lower.adjoints import Adjoints
from numbax.backends.cuda.lower.state import name as _name, parse as _parse, text as _text
from numbax.primitives.cuda import Moment

# the helpers rewritten -> the method that gives the expression
REWRITTEN = {"rt.chooser_weights": "chooser_weights", "np.outer": "outer", "rt.var_grad": "var_grad",
             "rt.solve_grad_a": "solve_grad_a", "rt.trace_grad": "trace_grad", "rt.matmul_grad_a": "matmul_grad",
             "rt.matmul_grad_b": "matmul_grad", "rt.norm_grad": "norm_grad", "np.inner": "inner",
             "rt.inner": "inner", "rt.inner_vjp": "inner_vjp", "np.ptp": "ptp", "rt.power_exponent": "power_exponent",
             "rt.logsumexp": "logsumexp", "rt.stored_cotangent": "stored_cotangent",
             "rt.cholesky_grad": "cholesky_grad", "rt.primal_dtype": "primal_dtype",
             "rt.widen": "widen"}
# the cotangents of ``a @ b`` of 1-d and 2-d arrays (``rt.matmul_grad_a``, ``_b``), by the operands' ranks
_MATMUL_GRADS = {("a", 2, 1): "np.outer({g}, {b})", ("a", 1, 1): "{g} * {b}", ("a", 2, 2): "{g} @ {b}.T",
                 ("a", 1, 2): "{b} @ {g}", ("b", 1, 2): "np.outer({a}, {g})", ("b", 1, 1): "{g} * {a}",
                 ("b", 2, 2): "{a}.T @ {g}", ("b", 2, 1): "{g} @ {a}"}
# ... and of stacks of matrices (both operands at least 2-d): the product with the other's matrices transposed,
# summed back over the leading axes the operand was broadcast along
_STACKED_MATMUL_GRADS = {"a": "rt.unbroadcast({g} @ np.transpose({b}, {swap_b}), {a})",
                         "b": "rt.unbroadcast(np.transpose({a}, {swap_a}) @ {g}, {b})"}


class Rewrites(Adjoints):
    """The rewrites (see the module docstring); each method gives the expression of one call."""

    def moment(self, app, lowering: Moment) -> gast.expr:
        """``np.var(a, axis, ddof=ddof, keepdims=keepdims)`` (``Moment``): the squares of ``a`` less its mean
        (kept over ``axis``) summed over ``axis`` and divided by their count less ``ddof``; ``np.std`` its square
        root. ``axis`` and ``keepdims`` are constants; ``dtype`` and ``out`` are refused."""
        values: Dict[str, gast.expr] = dict(zip(["a", "axis", "dtype", "out", "ddof", "keepdims"], app.args))
        values.update(app.keywords)
        a, stand_in, axis, keepdims = self.real_operand_and_axis(app, values, {"ddof"}, "axis, ddof and keepdims")
        count = " * ".join(f"{a}.shape[{k}]" for k in self.axes(axis, stand_in.ndim)) or "1"
        ddof = _text(values["ddof"]) if "ddof" in values else "0"
        mean = f"np.mean({a}, axis={axis!r}, keepdims=True)"
        variance = f"np.sum(np.square({a} - {mean}), axis={axis!r}, keepdims={bool(keepdims)!r}) / ({count} - {ddof})"
        return _parse(f"np.sqrt({variance})" if lowering.root else variance)[0].value

    def real_operand_and_axis(self, app, values: Dict[str, gast.expr], others: Set[str],
                              allowed: str) -> Tuple[str, Any, Any, Any]:
        """The name of the array of real numbers that ``app`` (its arguments by name in ``values``) reduces, its
        stand-in, and the constants ``axis`` and ``keepdims`` (None where not given); ``others`` the arguments
        it takes besides those (``allowed`` says them all); anything else refused."""
        if set(values) - {"a", "axis", "keepdims"} - others or "a" not in values:
            raise self.refuse(f"`{app.name}` with arguments other than {allowed}")
        a = self.temp_for(values["a"]).id
        stand_in = self.env.get(a)
        if not probes.is_array(stand_in) or stand_in.dtype.kind not in "biuf":
            raise self.refuse(f"`{app.name}` of other than an array of real numbers")
        try:
            axis, keepdims = (ast.literal_eval(gast.gast_to_ast(values[k])) if k in values else None
                              for k in ("axis", "keepdims"))
        except ValueError:
            raise self.refuse(f"`{app.name}` with an axis or keepdims known only at run time") from None
        return a, stand_in, axis, keepdims

    def var_grad(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.var_grad(g, a, axis, ddof, keepdims)`` (the cotangent of ``a`` in its variance):
        ``g`` broadcast back over ``axis``, times twice ``a`` less its mean, over the count less ``ddof``, in the
        CPU's helper's order of operations."""
        values = dict(zip(["g", "a", "axis", "ddof", "keepdims"], node.args))
        values.update({k.arg: k.value for k in node.keywords})
        if set(values) - {"g", "a", "axis", "ddof", "keepdims"} or not {"g", "a"} <= set(values):
            raise self.refuse(f"`{_text(node)}`")
        a = self.temp_for(values["a"]).id
        if not probes.is_array(self.env.get(a)):
            raise self.refuse(f"`{_text(node)}` of a number")
        axis, ddof, keepdims = (_text(values[k]) if k in values else default for k, default in
                                (("axis", "None"), ("ddof", "0"), ("keepdims", "False")))
        try:
            axes = self.axes(ast.literal_eval(axis), self.env[a].ndim)
        except ValueError:
            raise self.refuse(f"`{_text(node)}`, the cotangent of a variance over axes known at run time,") from None
        count = " * ".join(f"{a}.shape[{k}]" for k in axes) or "1"
        return _parse(f"rt.unreduce({_text(values['g'])}, {a}, {axis}, {keepdims}) * 2.0 * "
                      f"({a} - np.mean({a}, axis={axis}, keepdims=True)) / ({count} - {ddof})")[0].value

    def chooser_weights(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.chooser_weights(a, ans, axis, keepdims)`` (the cotangent's share of each maximum or
        minimum, ``ans`` the extremes): ``hits / count``, ``hits`` where ``a`` equals its extreme (as float64,
        as the CPU's helper gives), ``count`` their number over ``axis`` (a constant)."""
        values = dict(zip(["a", "ans", "axis", "keepdims"], node.args))
        values.update({k.arg: k.value for k in node.keywords})
        if set(values) - {"a", "ans", "axis", "keepdims"} or not {"a", "ans"} <= set(values):
            raise self.refuse(f"`{_text(node)}`")
        a, ans = _text(values["a"]), _text(values["ans"])
        axis, keepdims = (_text(values[k]) if k in values else default for k, default in
                          (("axis", "None"), ("keepdims", "False")))
        if axis == "None":
            hits = f"({a} == {ans}).astype(np.float64)"
            return _parse(f"{hits} / np.sum({hits})")[0].value
        hits = f"({a} == rt.unreduce({ans}, {a}, {axis}, {keepdims})).astype(np.float64)"
        return _parse(f"{hits} / rt.unreduce(np.sum({hits}, axis={axis}), {a}, {axis}, False)")[0].value

    def solve_grad_a(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.solve_grad_a(gb, x)`` (the cotangent of the matrix in ``x = solve(a, b)``):
        ``-np.outer(gb, x)`` of vectors, ``-(gb @ x.T)`` of matrices."""
        if len(node.args) != 2 or node.keywords:
            raise self.refuse(f"`{_text(node)}`")
        gb, x = (self.temp_for(arg).id for arg in node.args)
        if not probes.is_array(self.env.get(x)):
            raise self.refuse(f"`{_text(node)}` of a number")
        product = f"np.outer({gb}, {x})" if self.env[x].ndim == 1 else f"({gb} @ {x}.T)"
        return _parse(f"-{product}")[0].value

    def matmul_grad(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.matmul_grad_a(g, a, b)`` and ``rt.matmul_grad_b`` (the cotangents of ``a @ b``) of
        1-d and 2-d arrays and of stacks of matrices: the products ``_MATMUL_GRADS`` (``_STACKED_MATMUL_GRADS``)
        gives, as the CPU's helpers compute them."""
        if len(node.args) != 3 or node.keywords:
            raise self.refuse(f"`{_text(node)}`")
        g, a, b = (self.temp_for(arg).id for arg in node.args)
        ranks = [np.ndim(self.env.get(n)) for n in (a, b)]
        which = _text(node.func)[-1]
        template = _MATMUL_GRADS.get((which, *ranks))
        if min(ranks) >= 2 and max(ranks) > 2:
            template = _STACKED_MATMUL_GRADS[which]
        if template is None or not all(probes.is_array(self.env.get(n)) for n in (a, b)):
            raise self.refuse(f"`{_text(node)}` of other than 1-d or 2-d arrays or stacks of matrices")
        swap = {n: tuple(range(rank - 2)) + (rank - 1, rank - 2) for n, rank in zip("ab", ranks)}
        return _parse(template.format(g=g, a=a, b=b, swap_a=swap["a"], swap_b=swap["b"]))[0].value

    def cholesky_grad(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.cholesky_grad(g, L)`` (the cotangent of ``a`` in ``L = cholesky(a)``), as the CPU's
        helper: ``phi = L.T @ g``, its lower triangle with the diagonal halved, sent through ``inv(L)`` on both
        sides and made symmetric."""
        if len(node.args) != 2 or node.keywords:
            raise self.refuse(f"`{_text(node)}`")
        g, factor = (self.temp_for(arg).id for arg in node.args)
        if not all(probes.is_array(self.env.get(n)) and self.env[n].ndim == 2 for n in (g, factor)):
            raise self.refuse(f"`{_text(node)}` of other than matrices")
        phi = self.temp_for(_parse(f"{factor}.T @ {g}")[0].value).id
        low = self.temp_for(_parse(f"np.tril({phi}) - 0.5 * np.diag(np.diag({phi}))")[0].value).id
        inverse = self.temp_for(_parse(f"np.linalg.inv({factor})")[0].value).id
        s = self.temp_for(_parse(f"{inverse}.T @ {low} @ {inverse}")[0].value).id
        return _parse(f"0.5 * ({s} + {s}.T)")[0].value

    def stored_cotangent(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.stored_cotangent(g, array)`` (what passes through a write into ``array``), as the
        CPU's helper: ``g`` where ``array`` holds floats, else zeros (the write casts the value); ``array`` one
        array (a tuple of ``np.split``'s is refused)."""
        if len(node.args) != 2 or node.keywords or not probes.is_array(self.probe(node.args[1])):
            raise self.refuse(f"`{_text(node)}`")
        if self.probe(node.args[1]).dtype.kind == "f":
            return node.args[0]
        g = self.temp_for(node.args[0]).id
        return _parse(f"rt.zeros_like({g})" if probes.is_array(self.env.get(g)) else "0.0")[0].value

    def primal_dtype(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.primal_dtype(g, x)`` (a gradient computed in float64 returned in its float32
        parameter's dtype), as the CPU's helper: ``g.astype(dtype)`` of an array, ``dtype(g)`` of a number."""
        if len(node.args) != 2 or node.keywords:
            raise self.refuse(f"`{_text(node)}`")
        primal = self.probe(node.args[1])
        dtype = np.asarray(primal).dtype.name
        g = self.temp_for(node.args[0]).id
        return _parse(f"{g}.astype(np.{dtype})" if probes.is_array(primal) else f"np.{dtype}({g})")[0].value

    def widen(self, node: gast.Call) -> gast.expr:
        """``rt.widen(g)`` (a float32 tangent or cotangent the caller passes, computed in float64), as the CPU's
        helper: an array cast to at least float64 (complex128 for complex), a number as a Python number."""
        if len(node.args) != 1 or node.keywords:
            raise self.refuse(f"`{_text(node)}`")
        value = self.probe(node.args[0])
        g = self.temp_for(node.args[0]).id
        if probes.is_array(value):
            wide = np.result_type(value.dtype, np.float64)
            return _name(g) if wide == value.dtype else _parse(f"{g}.astype(np.{wide.name})")[0].value
        return _parse(f"{'complex' if np.iscomplexobj(value) else 'float'}({g})")[0].value

    def norm_grad(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.norm_grad(g, ans, x, ord, axis, keepdims)`` of the 2-norm (``ord`` None, the norm
        the GPU backend computes): ``g / ans`` broadcast back over ``axis``, times ``x``, as the CPU's helper."""
        values = dict(zip(["g", "ans", "x", "ord", "axis", "keepdims"], node.args))
        values.update({k.arg: k.value for k in node.keywords})
        if set(values) - {"g", "ans", "x", "ord", "axis", "keepdims"} or not {"g", "ans", "x"} <= set(values) or \
                _text(values.get("ord", gast.Constant(value=None, kind=None))) != "None":
            raise self.refuse(f"`{_text(node)}`")
        x = self.temp_for(values["x"]).id
        axis, keepdims = (_text(values[k]) if k in values else "None" if k == "axis" else "False"
                          for k in ("axis", "keepdims"))
        return _parse(f"rt.unreduce({_text(values['g'])} / {_text(values['ans'])}, {x}, {axis}, {keepdims}) * "
                      f"{x}")[0].value

    def trace_grad(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.trace_grad(g, a, offset, axis1, axis2)`` of a matrix ``a``: ``g`` times the
        identity (made on the host) of ``a``'s shape, shifted by ``offset``."""
        values = dict(zip(["g", "a", "offset", "axis1", "axis2"], node.args))
        if node.keywords or len(node.args) > 5 or not {"g", "a"} <= set(values) or \
                [_text(values[k]) for k in ("axis1", "axis2") if k in values] not in ([], ["0"], ["0", "1"]):
            raise self.refuse(f"`{_text(node)}`")
        a = self.temp_for(values["a"]).id
        if not probes.is_array(self.env.get(a)) or self.env[a].ndim != 2:
            raise self.refuse(f"`{_text(node)}` of other than a matrix")
        offset = _text(values["offset"]) if "offset" in values else "0"
        return _parse(f"{_text(values['g'])} * np.eye({a}.shape[0], {a}.shape[1], {offset})")[0].value

    def inner(self, node: gast.Call) -> gast.expr:
        """``np.inner(a, b)`` of 1-d and 2-d arrays (their last axes checked equal before): ``a @ b``, or
        ``a @ b.T`` where ``b`` is a matrix."""
        if len(node.args) != 2 or node.keywords:
            raise self.refuse(f"`{_text(node)}`")
        a, b = (self.temp_for(arg).id for arg in node.args)
        ranks = [np.ndim(self.env.get(n)) for n in (a, b)]
        if not all(probes.is_array(self.env.get(n)) and np.ndim(self.env[n]) <= 2 for n in (a, b)):
            raise self.refuse(f"`{_text(node)}` of other than 1-d or 2-d arrays")
        return _parse(f"{a} @ {b}.T" if ranks[1] == 2 else f"{a} @ {b}")[0].value

    def inner_vjp(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.inner_vjp(g, k, a, b)`` of two vectors (``g`` a number): ``g * b`` for ``a``
        (``k`` 0), ``g * a`` for ``b``."""
        if len(node.args) != 4 or node.keywords or _text(node.args[1]) not in ("0", "1"):
            raise self.refuse(f"`{_text(node)}`")
        g, a, b = (self.temp_for(node.args[k]).id for k in (0, 2, 3))
        if probes.is_array(self.probe(_name(g))) or \
                not all(probes.is_array(self.env.get(n)) and self.env[n].ndim == 1 for n in (a, b)):
            raise self.refuse(f"`{_text(node)}`, the cotangent of an inner product of other than two vectors,")
        return _parse(f"{g} * {b if _text(node.args[1]) == '0' else a}")[0].value

    def ptp(self, node: gast.Call) -> gast.expr:
        """``np.ptp(a, axis, keepdims=...)`` of a real array: its maximum less its minimum, over ``axis``."""
        values = dict(zip(["a", "axis"], node.args))
        values.update({k.arg: k.value for k in node.keywords})
        if len(node.args) > 2 or set(values) - {"a", "axis", "keepdims"} or "a" not in values:
            raise self.refuse(f"`{_text(node)}` with arguments other than axis and keepdims")
        a = self.temp_for(values["a"]).id
        if np.asarray(self.probe(_name(a))).dtype.kind not in "iuf":
            raise self.refuse(f"`{_text(node)}` of other than an array of real numbers")
        rest = "".join(f", {k}={_text(values[k])}" for k in ("axis", "keepdims") if k in values)
        return _parse(f"np.max({a}{rest}) - np.min({a}{rest})")[0].value

    def power_exponent(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.power_exponent(p)`` of an array of exponents (of a number, ``launches`` calls the
        helper on the host): ``p - 1``, and 1 where an integer exponent is 0, as the CPU's helper."""
        stand_in = self.probe(node.args[0]) if len(node.args) == 1 and not node.keywords else None
        if not probes.is_array(stand_in):
            raise self.refuse(f"`{_text(node)}`")
        p = self.temp_for(node.args[0]).id
        if stand_in.dtype.kind in "iu":
            return _parse(f"np.where({p} == 0, 1, {p} - 1)")[0].value
        if stand_in.dtype.kind != "f":
            raise self.refuse(f"`{_text(node)}` of a {stand_in.dtype} array")
        return _parse(f"{p} - 1")[0].value

    def logsumexp(self, node: gast.Call) -> gast.expr:
        """``rt.logsumexp(a, axis, keepdims)`` of a float64 array, as the CPU's helper computes it: the largest
        value ``m`` (over ``axis``, kept; 0 where it is not finite) plus the log of the sum of ``exp(a - m)``."""
        values = dict(zip(["a", "axis", "keepdims"], node.args))
        values.update({k.arg: k.value for k in node.keywords})
        if set(values) - {"a", "axis", "keepdims"} or "a" not in values:
            raise self.refuse(f"`{_text(node)}`")
        a = self.temp_for(values["a"]).id
        if not probes.is_array(self.env.get(a)) or self.env[a].dtype != np.float64:
            raise self.refuse(f"`{_text(node)}` of other than a float64 array")
        axis, keepdims = (_text(values[k]) if k in values else default for k, default in
                          (("axis", "None"), ("keepdims", "False")))
        if axis == "None" and keepdims == "False":
            largest = self.temp_for(self.hoist(_parse(f"np.max({a})")[0].value)).id
            shift = self.temp_for(_parse(f"{largest} if np.isfinite({largest}) else 0.0")[0].value).id
            return _parse(f"{shift} + np.log(np.sum(np.exp({a} - {shift})))")[0].value
        kept = self.temp_for(self.hoist(_parse(f"np.max({a}, axis={axis}, keepdims=True)")[0].value)).id
        shift = self.temp_for(self.hoist(_parse(f"np.where(np.isfinite({kept}), {kept}, 0.0)")[0].value)).id
        over = f"axis={axis}, keepdims={keepdims}"
        return _parse(f"np.log(np.sum(np.exp({a} - {shift}), {over})) + np.sum({shift}, {over})")[0].value

    def outer(self, node: gast.Call) -> gast.expr:
        """``np.outer(a, b)``: the product of ``a`` flattened into a column and ``b`` into a row."""
        if len(node.args) != 2 or node.keywords:
            raise self.refuse(f"`{_text(node)}` with other than two arguments")
        a, b = (self.temp_for(arg).id for arg in node.args)
        return _parse(f"np.reshape(np.ascontiguousarray({a}), (-1, 1)) * "
                      f"np.reshape(np.ascontiguousarray({b}), (1, -1))")[0].value
