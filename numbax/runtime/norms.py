"""norms: ``np.linalg.norm`` with ``axis=``, ``keepdims=`` and every vector and matrix order, for Numba.

Numba's own ``np.linalg.norm`` takes one or two dimensions and no axis. Here a
vector norm is one sweep over the reduced axes (sum of squares, of magnitudes,
of powers; largest or smallest magnitude; count of non-zeros); a matrix norm
over two axes is two such sweeps (``ord=1``: column sums, then their maximum)
or one singular value decomposition per matrix of the stack (``2``, ``-2``,
``'nuc'``). ``axis`` and ``keepdims`` must be compile-time constants; ``ord``
may be a run-time number (``np.inf`` is one), which then picks the sweep at
run time.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np
from numba import types
from numba.core.errors import TypingError

from numbax.runtime.cached import overload
from numbax.runtime.loops import Accumulator, Map, Plan, Sweep, batch_source, compile_source, jit_source, \
    numpy_type, reduction_source
from numbax.runtime.statics import NOT_STATIC, array_dtype, normalize_axes, numpy_result, static, static_value


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)``."""
    return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


SIGNATURE = "x, ord=None, axis=None, keepdims=False"

# vector kind -> (initial value, update of ``s`` from the magnitude ``w``, the norm from ``s``)
_VECTOR_SWEEPS = {
    "sumsq": ("0", ("s += w * w",), "np.sqrt(s)"),
    "sumabs": ("0", ("s += w",), "s"),
    "maxabs": ("0", ("if w > s or w != w:", "    s = w"), "s"),
    "minabs": ("np.inf", ("if w < s or w != w:", "    s = w"), "s"),
    "count": ("0", ("if w != 0:", "    s += 1.0"), "s"),
    "pow": ("0", ("s += np.power(w, p)",), "np.power(s, 1.0 / p)"),  # NumPy's 0 ** -1 (inf), not an error
}
# a vector order that is known at compile time -> its sweep (any other number: "pow")
_VECTOR_KINDS = {None: "sumsq", 2: "sumsq", 1: "sumabs", np.inf: "maxabs", -np.inf: "minabs", 0: "count"}
# run-time orders, tested in turn; any other makes a vector p-norm, and a matrix norm raises (as in NumPy)
_VECTOR_TESTS = ((np.inf, "maxabs"), (-np.inf, "minabs"), (0, "count"), (1, "sumabs"), (2, "sumsq"))
_MATRIX_TESTS = ((1, "1"), (-1, "-1"), (2, "2"), (-2, "-2"), (np.inf, "inf"), (-np.inf, "-inf"))


def _number(value: float) -> str:
    return {np.inf: "np.inf", -np.inf: "-np.inf"}.get(value, repr(value))


def _vector_kernel(kind: str, plan: Plan, dtype: np.dtype, out: np.dtype):
    """A dispatcher computing one vector norm over ``plan`` (``pow`` takes ``p`` as well)."""
    init, update, final = _VECTOR_SWEEPS[kind]
    magnitude = "w = abs(v)" if dtype.kind == "c" else "w = abs(np.float64(v))"
    sweep = Sweep((Accumulator("s", "np.float64", init),), (magnitude,) + update)
    result = "result_ = s_" if final == "s" and out == np.float64 else Map("result", numpy_type(out), final, ("s",))
    return jit_source(reduction_source(plan, "a, p" if kind == "pow" else "a", [sweep, result]))


def _vector_impl(order: Any, plan: Plan, dtype: np.dtype, out: np.dtype):
    kernels: Dict[str, Any] = {}

    def call(kind: str, p: str = "") -> str:
        kernels[f"k_{kind}"] = _vector_kernel(kind, plan, dtype, out)
        return f"k_{kind}(x, {p})" if p else f"k_{kind}(x)"

    if order is NOT_STATIC:
        lines = [f"if ord == {_number(v)}:\n        return {call(kind)}" for v, kind in _VECTOR_TESTS]
        lines.append(f"return {call('pow', 'np.float64(ord)')}")
    elif isinstance(order, str):
        raise TypingError(f"numbax.runtime.norm: invalid norm order {order!r} for vectors")
    else:
        kind = _VECTOR_KINDS.get(order, "pow")
        lines = [f"return {call(kind, 'np.float64(ord)' if kind == 'pow' else '')}"]
    return compile_source(f"def impl({SIGNATURE}):\n    " + "\n    ".join(lines), **kernels)


_SVD_PICKS = {"2": "max", "-2": "min", "nuc": "sum"}


def _svd_kernel(plan: Plan, dtype: np.dtype, pick: str):
    work = "np.complex128" if dtype.kind == "c" else "np.float64"
    per_matrix = [f"sv = np.linalg.svd(mat.astype({work}))[1]", f"value = sv.{pick}()"]
    return jit_source(batch_source(plan, "a", per_matrix, "np.float64"))


def _matrix_call(kind: str, ndim: int, rows: int, cols: int, dtype: np.dtype, kernels: Dict[str, Any]) -> str:
    """An expression of ``x`` giving one matrix norm as float64, kept-shaped (a scalar for one matrix).

    Registers the kernels it calls in ``kernels``, named after what they compute (one name, one kernel).
    """
    flat = Plan(ndim, tuple(sorted((rows, cols))), False)
    if kind in _SVD_PICKS:
        pick = _SVD_PICKS[kind]
        kernels[f"k_svd_{pick}"] = _svd_kernel(flat, dtype, pick)
        return f"k_svd_{pick}(x)"
    if kind == "fro":
        kernels["k_fro"] = _vector_kernel("sumsq", flat, dtype, np.dtype(np.float64))
        return "k_fro(x)"
    summed, kept = (rows, cols) if kind in ("1", "-1") else (cols, rows)
    if kept > summed:
        kept -= 1  # the summed axis is gone
    extreme = "maxabs" if kind in ("1", "inf") else "minabs"
    float64 = np.dtype(np.float64)
    kernels[f"k_sum_{summed}"] = _vector_kernel("sumabs", Plan(ndim, (summed,), False), dtype, float64)
    kernels[f"k_{extreme}_{kept}"] = _vector_kernel(extreme, Plan(ndim - 1, (kept,), False), float64, float64)
    return f"k_{extreme}_{kept}(k_sum_{summed}(x))"


def _finish(value: str, ndim: int, axes: Tuple[int, int], keepdims: bool, out: np.dtype) -> str:
    """Give a kept-shaped float64 matrix norm NumPy's shape and dtype."""
    kind = numpy_type(out)
    if keepdims:
        sizes = ", ".join("1" if d in axes else f"x.shape[{d}]" for d in range(ndim))
        if ndim == 2:
            return f"np.full(({sizes}), {value}, {kind})"
        value = f"({value}).reshape(({sizes}))"
    if out == np.float64:
        return value
    return f"{kind}({value})" if ndim == 2 and not keepdims else f"({value}).astype({kind})"


def _matrix_impl(order: Any, ndim: int, axes: Tuple[int, int], keepdims: bool, dtype: np.dtype, out: np.dtype):
    kernels: Dict[str, Any] = {}

    def ret(kind: str) -> str:
        return "return " + _finish(_matrix_call(kind, ndim, axes[0], axes[1], dtype, kernels), ndim, axes,
                                   keepdims, out)

    if order is NOT_STATIC:
        lines = [f"if ord == {_number(v)}:\n        {ret(kind)}" for v, kind in _MATRIX_TESTS]
        lines.append("raise ValueError('Invalid norm order for matrices.')")
    elif order in (None, "fro", "nuc"):
        lines = [ret(order or "fro")]
    elif order in (1, -1, 2, -2, np.inf, -np.inf):
        lines = [ret(dict((v, k) for v, k in _MATRIX_TESTS)[order])]
    else:
        raise TypingError(f"numbax.runtime.norm: invalid norm order {order!r} for matrices")
    return compile_source(f"def impl({SIGNATURE}):\n    " + "\n    ".join(lines), **kernels)


def _matrix_axes(axis: Any, ndim: int) -> Optional[Tuple[int, int]]:
    """The (row, column) axes of a matrix norm, or None for a vector norm."""
    if isinstance(axis, tuple) and len(axis) == 2:
        normalize_axes("norm", ndim, axis)  # bounds and repeats
        return axis[0] % ndim, axis[1] % ndim
    if isinstance(axis, tuple) and len(axis) > 2:
        raise TypingError("numbax.runtime.norm: improper number of dimensions to norm")
    return None


@overload(norm, prefer_literal=True)
def _norm(x, ord=None, axis=None, keepdims=False):
    dtype = array_dtype("norm", x)
    out = numpy_result("norm", np.linalg.norm, dtype)
    axis, keepdims = static("norm", "axis", axis), bool(static("norm", "keepdims", keepdims))
    order = static_value(ord)
    if order is NOT_STATIC and not isinstance(ord, (types.Integer, types.Float)):
        raise TypingError(f"numbax.runtime.norm: ord must be a number, 'fro', 'nuc' or None, got {ord}")
    if axis is None and order is not None:
        if x.ndim > 2:
            raise TypingError("numbax.runtime.norm: improper number of dimensions to norm")
        axis = tuple(range(x.ndim))
    matrix = _matrix_axes(axis, x.ndim)
    if matrix is not None:
        return _matrix_impl(order, x.ndim, matrix, keepdims, dtype, out)
    plan = Plan(x.ndim, normalize_axes("norm", x.ndim, axis), keepdims)
    return _vector_impl(order, plan, dtype, out)
