"""The wide grammar: the extended grammar's programs written over the breadth of NumPy that numbax covers.

``wide_programs`` writes what ``extended.ExtendedWriter`` writes and also calls the functions the older grammars
never draw: the rest of the ufuncs (logarithms, inverse and hyperbolic trigonometry, rounding, ``arctan2``,
``hypot``, ``logaddexp``, ``fmod``, ``power`` of floats; sometimes inside their domain, sometimes not, as users'
programs meet them), ``np.clip``, the statistics (``var`` and ``std`` with ``ddof``, ``median``, ``ptp``,
``nanmax``, ``argmax``, ``count_nonzero``), the shape functions (``expand_dims``, ``squeeze``, ``swapaxes``,
``moveaxis``, ``flip``, ``tile``, ``repeat``, ``broadcast_to``, ``hstack``, ``vstack``, ``tril``, ``triu``,
``diagonal``, ``pad``, ``split``, ``flatten``, ``transpose`` with axes), the products (``einsum``, ``tensordot``,
``inner``, ``vdot``, ``matmul``, ``convolve``, ``polyval``, ``interp``), linear algebra on square blocks
(``solve``, ``inv``, ``det``, ``slogdet``, ``cholesky``), the constructors (``zeros_like``, ``linspace``,
``eye``, ``full``) and NumPy 2's array-API functions (``vecdot``, ``matvec``, ``vecmat``,
``matrix_transpose``, ``cumulative_sum``, ``linalg.vector_norm``, ``linalg.matrix_norm``, ...), the NaN
statistics, ``cov``, ``corrcoef``, ``trapezoid`` and reductions with ``where=``/``initial=``. A separate mode,
so that the extended grammar's seeds keep their programs.
"""
from __future__ import annotations

from typing import Callable, List

import numpy as np
from hypothesis import strategies as st

from .extended import ExtendedWriter, batch_along_axes
from .grammar import CONSTANTS, programs

# ufuncs of one operand, and the domain-keeping spelling of their operand (half the time) where NumPy's value
# is nan or inf outside an interval: ``{}`` is the operand's text
UNARY = {"log": "np.abs({}) + 0.5", "log1p": "np.abs({})", "log2": "np.abs({}) + 0.5", "log10": "np.abs({}) + 0.5",
         "expm1": None, "exp2": None, "arcsin": "np.tanh({})", "arccos": "np.tanh({})", "arctan": None,
         "arcsinh": None, "arccosh": "np.abs({}) + 1.5", "arctanh": "0.5 * np.tanh({})", "sinh": None,
         "cosh": None, "tan": "np.tanh({})", "cbrt": None, "reciprocal": "np.abs({}) + 0.5", "sign": None,
         "floor": None, "ceil": None, "trunc": None, "rint": None, "fix": None, "fabs": None, "sinc": None,
         "positive": None, "degrees": None, "radians": None, "isnan": None, "isfinite": None, "conj": None,
         "real": None, "imag": None, "angle": None, "round": None}
BINARY = ("arctan2", "hypot", "logaddexp", "logaddexp2", "fmax", "fmin", "fmod", "remainder", "power",
          "true_divide", "copysign")
STATISTICS = ("np.var({a}{axis})", "np.std({a}{axis})", "np.var({a}{axis}, ddof=1)", "np.std({a}{axis}, ddof=1)",
              "{a}.var({axis0})", "{a}.std({axis0})", "np.median({a}{axis})", "np.ptp({a}{axis})",
              "np.nanmax({a}{axis})", "np.nanmin({a}{axis})", "np.argmax({a}{axis})", "np.argmin({a}{axis})",
              "np.count_nonzero({a} > 0.25{axis})", "np.any({a} > 0.25{axis})", "np.all({a} < 2.0{axis})",
              "np.amax({a}{axis})", "np.mean({a}{axis}, dtype=np.float64)", "np.sum({a}{axis}, dtype=np.float64)",
              "np.linalg.vector_norm({a}{axis})", "np.linalg.vector_norm({a}, ord=1{axis})", "np.nanmean({a}{axis})",
              "np.nanvar({a}{axis})", "np.nanstd({a}, ddof=1{axis})", "np.mean({a}, where={a} > 0.0{axis})",
              "np.sum({a}, where={a} < 1.0{axis})", "np.max({a}, initial=0.5{axis})", "np.trapezoid({a}{axis})",
              "{a}.var(where={a} > -0.5{axis})")
SHAPES = {1: ("np.expand_dims({a}, 0)", "np.expand_dims({a}, -1)", "np.flip({a})", "np.tile({a}, 2)",
              "np.tile({a}, (2, 1))", "np.repeat({a}, 2)", "{a}.repeat(2)", "np.broadcast_to({a}, (2,) + {a}.shape)",
              "np.atleast_2d({a})", "np.hstack([{a}, {b}])", "np.vstack([{a}, {b}])", "np.pad({a}, 1)",
              "np.pad({a}, (2, 0))", "np.split({a}, 2)[0]", "np.split({a}, 2)[1]", "np.roll({a}, -1)",
              "np.diag({a}, 1)", "np.squeeze({a}[None])", "{a}.flatten()",
              "np.cumulative_sum({a}, include_initial=True)", "np.linalg.outer({a}, {b})",
              "np.astype({a}, np.float64)", "np.append({a}, {b})", "np.ediff1d({a})", "np.cov({a})",
              "np.correlate({a}, {b}, 'full')", "np.nancumsum({a})"),
          2: ("np.swapaxes({a}, 0, 1)", "np.moveaxis({a}, 0, -1)", "np.transpose({a}, (1, 0))", "np.flip({a})",
              "np.flip({a}, axis={axis})", "np.tile({a}, (1, 2))", "np.repeat({a}, 2, axis={axis})",
              "np.hstack([{a}, {b}])", "np.vstack([{a}, {b}])", "np.tril({a})", "np.triu({a}, 1)",
              "np.tril({a}, -1)", "np.diagonal({a})", "np.trace({a})", "np.pad({a}, ((1, 0), (0, 2)))",
              "np.squeeze({a}[:1])", "np.squeeze({a}[:, :1], axis=1)", "np.expand_dims({a}, 1)", "{a}.flatten()",
              "np.split({a}, 2, axis={axis})[0]", "np.roll({a}, 1, axis={axis})", "{a}.swapaxes(0, 1)",
              "np.broadcast_to({a}, (2,) + {a}.shape)", "{a}.squeeze()", "{a}.trace()", "{a}.diagonal()",
              "np.matrix_transpose({a})", "np.linalg.matrix_transpose({a})", "np.cumulative_sum({a}, axis={axis})",
              "np.cumulative_prod({a}, axis={axis})", "np.linalg.diagonal({a}, offset=1)", "np.linalg.trace({a})",
              "np.linalg.matrix_norm({a})", "np.linalg.vector_norm({a}, axis=(0, 1), ord=3)", "np.fliplr({a})",
              "np.rot90({a})", "np.cov({a})", "np.corrcoef({a})", "np.column_stack(({a}, {b}))", "{a}.mT")}
PRODUCTS = {(1, 1): ("np.einsum('i,i->', {a}, {b})", "np.einsum('i,j->ij', {a}, {b})", "np.inner({a}, {b})",
                     "np.vdot({a}, {b})", "np.convolve({a}, {b})", "np.tensordot({a}, {b}, axes=1)",
                     "np.matmul({a}, {b})", "np.polyval({a}, {b})", "np.vecdot({a}, {b})",
                     "np.linalg.vecdot({a}, {b})"),
            (2, 2): ("np.einsum('ij,jk->ik', {a}, {b})", "np.einsum('ij,kj->ik', {a}, {b})",
                     "np.einsum('ij,ij->j', {a}, {b})", "np.tensordot({a}, {b}, axes=2)",
                     "np.tensordot({a}, {b}, axes=([1], [1]))", "np.matmul({a}, {b}.T)", "np.inner({a}, {b})",
                     "np.vecdot({a}, {b})", "np.vecdot({a}, {b}, axis=0)", "np.linalg.matmul({a}, {b}.T)",
                     "np.linalg.tensordot({a}, {b})"),
            (2, 1): ("np.einsum('ij,j->i', {a}, {b})", "np.matmul({a}, {b})", "np.inner({a}, {b})",
                     "np.tensordot({a}, {b}, axes=1)", "np.matvec({a}, {b})", "np.vecdot({a}, {b})"),
            (1, 2): ("np.einsum('i,ij->j', {a}, {b})", "np.matmul({a}, {b})", "np.einsum('i,ji->', {a}, {b})",
                     "np.vecmat({a}, {b})")}
# square blocks, kept invertible (and positive definite for Cholesky) by adding to the diagonal
LINALG = ("np.linalg.solve({m} + 3.0 * np.eye({k}), {v})", "np.linalg.inv({m} + 3.0 * np.eye({k}))",
          "np.linalg.det({m})", "np.linalg.slogdet({m} + 3.0 * np.eye({k}))[1]",
          "np.linalg.slogdet({m})[0]", "np.linalg.cholesky({m} @ {m}.T + np.eye({k}))",
          "np.linalg.solve({m} + 3.0 * np.eye({k}), {m})", "np.linalg.det({m} + np.eye({k}))")
CONSTRUCTORS = ("np.zeros_like({a})", "np.ones_like({a})", "np.full_like({a}, {c})", "np.linspace(0.0, {c}, {n})",
                "np.eye({n})", "np.full({shape}, {c})", "np.zeros({shape}) + {a}", "np.identity({n}) * {c}",
                "np.empty_like({a}) * 0.0 + {a}", "np.arange({n}) * {c}")


class WideWriter(ExtendedWriter):
    """An ``ExtendedWriter`` that also calls the ufuncs, statistics, shape functions, products, linear algebra
    and constructors of the wide grammar."""

    def expression_forms(self) -> List[Callable]:
        wide = [self.wide_unary, self.wide_binary, self.clip, self.statistic, self.shape_function,
                self.shape_function, self.wide_product, self.linalg, self.constructor]
        return super().expression_forms() + wide * 3  # most of a wide program's calls are the wide grammar's

    def wide_unary(self, depth):
        text, _, tags = self.expr(depth - 1)
        fn = self.draw(st.sampled_from(sorted(UNARY)))
        domain = UNARY[fn]
        if domain is not None and self.draw(st.booleans()):
            text = domain.format(text)
        return f"np.{fn}({text})", set(tags) | {"wide_ufunc", fn}

    def wide_binary(self, depth):
        a, _, ta = self.expr(depth - 1)
        b, _, tb = self.expr(depth - 1)
        fn = self.draw(st.sampled_from(BINARY))
        if fn == "power" and self.draw(st.booleans()):
            a = f"np.abs({a}) + 0.25"
        return f"np.{fn}({a}, {b})", ta | tb | {"wide_ufunc", fn}

    def clip(self, depth):
        text, _, tags = self.expr(depth - 1)
        form = self.draw(st.sampled_from(("np.clip({}, -0.5, 1.0)", "np.clip({}, 0.25, None)", "{}.clip(max=0.5)",
                                          "np.clip({}, {}, {})", "np.clip({}, None, {})")))
        extra = [self.expr(depth - 1)[0] for _ in range(form.count("{}") - 1)]
        return form.format(self.parenthesize(text), *extra), set(tags) | {"clip"}

    def statistic(self, depth):
        text, value, tags = self.array(depth)
        form = self.draw(st.sampled_from(STATISTICS))
        axis = self.draw(st.sampled_from(range(-1, np.ndim(value)))) if self.draw(st.booleans()) else None
        keyword = "" if axis is None else f", axis={axis}"
        name = form.split("(")[0].split(".")[-1]
        return form.format(a=text, axis=keyword, axis0="" if axis is None else f"axis={axis}"), \
            set(tags) | {"statistic", name} | ({"axis"} if axis is not None else set())

    def shape_function(self, depth):
        text, value, tags = self.array(depth)
        form = self.draw(st.sampled_from(SHAPES[np.ndim(value)]))
        other = text
        if "{b}" in form:
            other, _, more = self.expr(depth - 1, lambda v: np.shape(v) == np.shape(value))
            tags = tags | more
        axis = self.draw(st.sampled_from((0, 1, -1)))
        name = form.split("(")[0].split(".")[-1]
        return form.format(a=text, b=self.parenthesize(other), axis=axis), set(tags) | {"shape_function", name}

    def wide_product(self, depth):
        a, va, ta = self.array(depth)
        b, vb, tb = self.array(depth)
        forms = PRODUCTS.get((np.ndim(va), np.ndim(vb)))
        if not forms:
            return None
        form = self.draw(st.sampled_from(forms))
        return form.format(a=a, b=b), ta | tb | {"wide_product", form.split("(")[0].split(".")[-1]}

    def linalg(self, depth):
        text, value, tags = self.array(depth, 2)
        k = min(np.shape(value))
        m = f"{text}[:{k}, :{k}]"
        vector, _, vtags = self.expr(depth - 1, lambda v: np.shape(v) in ((k,), (k, k)))
        form = self.draw(st.sampled_from(LINALG))
        name = form.split("(")[0].split(".")[-1]
        return form.format(m=m, k=k, v=vector), tags | vtags | {"linalg", name}

    def constructor(self, depth):
        text, value, tags = self.expr(depth - 1)
        form = self.draw(st.sampled_from(CONSTRUCTORS))
        n = self.draw(st.integers(1, 4))
        return form.format(a=self.parenthesize(text), c=self.draw(st.sampled_from(CONSTANTS)), n=n,
                           shape=np.shape(value)), set(tags) | {"constructor", form.split("(")[0].split(".")[-1]}


def wide_programs(max_statements: int = 4):
    """Programs of the wide grammar (a hypothesis strategy)."""
    return programs(max_statements=max_statements, writer=WideWriter, batching=batch_along_axes)
