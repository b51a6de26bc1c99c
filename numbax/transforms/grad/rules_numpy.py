"""Reverse-mode rules for Python's operators and NumPy's functions, one template each.

The names follow NumPy's own parameter names, so keyword calls bind as NumPy
binds them. ``rt`` is ``numbax.runtime`` (helpers that generated code calls).
"""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
import math

import gast
import numpy as np

from numbax.ast_passes.analyses.primitives import method_key
from numbax.transforms.grad.rules import def_nondifferentiable, defvjp

# ---------------------------------------------------------------------------
# Operators and their ufuncs (broadcasting undone by rt.unbroadcast)


@defvjp(gast.Add, np.add)
def add(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g, x1)
    d[x2] = rt.unbroadcast(g, x2)


@defvjp(gast.Sub, np.subtract)
def subtract(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g, x1)
    d[x2] = rt.unbroadcast(-g, x2)


@defvjp(gast.Mult, np.multiply)
def multiply(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g * x2, x1)
    d[x2] = rt.unbroadcast(g * x1, x2)


@defvjp(gast.Div, np.divide, np.true_divide)
def divide(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g / x2, x1)
    d[x2] = rt.unbroadcast(-g * ans / x2, x2)


@defvjp(gast.Pow, np.power, math.pow)
def power(g, ans, x1, x2):
    """JAX's conventions at ``x1 == 0``: ``x1 ** 0`` for an integer 0 has derivative 0, and the exponent's
    derivative is 0 there (``log`` of 1 in place of 0)."""
    d[x1] = rt.unbroadcast(g * x2 * x1 ** rt.power_exponent(x2), x1)
    d[x2] = rt.unbroadcast(g * ans * np.log(x1 * (x1 != 0) + (x1 == 0)), x2)


@defvjp(gast.MatMult, np.matmul, np.dot)
def matmul(g, ans, a, b):
    d[a] = rt.matmul_grad_a(g, a, b)
    d[b] = rt.matmul_grad_b(g, a, b)


@defvjp(np.inner)
def inner(g, ans, a, b):
    d[a] = rt.inner_vjp(g, 0, a, b)
    d[b] = rt.inner_vjp(g, 1, a, b)


@defvjp(np.outer)
def outer(g, ans, a, b):
    d[a] = rt.reshape_like(g @ np.ravel(b), a)
    d[b] = rt.reshape_like(np.ravel(a) @ g, b)


@defvjp(gast.USub, np.negative)
def negative(g, ans, x):
    d[x] = -g


@defvjp(gast.UAdd, np.positive, np.copy, np.asarray, np.array, np.ascontiguousarray, float, np.float64, np.float32)
def identity(g, ans, x):
    d[x] = g


# ---------------------------------------------------------------------------
# Elementwise functions of one argument


@defvjp(np.exp, math.exp)
def exp(g, ans, x):
    d[x] = g * ans


@defvjp(np.exp2)
def exp2(g, ans, x):
    d[x] = g * ans * 0.6931471805599453


@defvjp(np.expm1, math.expm1)
def expm1(g, ans, x):
    d[x] = g * (ans + 1.0)


@defvjp(np.log, math.log)
def log(g, ans, x):
    d[x] = g / x


@defvjp(np.log2, math.log2)
def log2(g, ans, x):
    d[x] = g / (x * 0.6931471805599453)


@defvjp(np.log10, math.log10)
def log10(g, ans, x):
    d[x] = g / (x * 2.302585092994046)


@defvjp(np.log1p, math.log1p)
def log1p(g, ans, x):
    d[x] = g / (1.0 + x)


@defvjp(np.sqrt, math.sqrt)
def sqrt(g, ans, x):
    d[x] = g * 0.5 / ans


@defvjp(np.cbrt)
def cbrt(g, ans, x):
    d[x] = g / (3.0 * ans * ans)


@defvjp(np.square)
def square(g, ans, x):
    d[x] = g * 2.0 * x


@defvjp(np.reciprocal)
def reciprocal(g, ans, x):
    d[x] = -g * ans * ans


@defvjp(np.sin, math.sin)
def sin(g, ans, x):
    d[x] = g * np.cos(x)


@defvjp(np.cos, math.cos)
def cos(g, ans, x):
    d[x] = -g * np.sin(x)


@defvjp(np.tan, math.tan)
def tan(g, ans, x):
    d[x] = g * (1.0 + ans * ans)


@defvjp(np.arcsin, math.asin)
def arcsin(g, ans, x):
    d[x] = g / np.sqrt(1.0 - x * x)


@defvjp(np.arccos, math.acos)
def arccos(g, ans, x):
    d[x] = -g / np.sqrt(1.0 - x * x)


@defvjp(np.arctan, math.atan)
def arctan(g, ans, x):
    d[x] = g / (1.0 + x * x)


@defvjp(np.sinh, math.sinh)
def sinh(g, ans, x):
    d[x] = g * np.cosh(x)


@defvjp(np.cosh, math.cosh)
def cosh(g, ans, x):
    d[x] = g * np.sinh(x)


@defvjp(np.tanh, math.tanh)
def tanh(g, ans, x):
    d[x] = g * (1.0 - ans * ans)


@defvjp(np.arcsinh, math.asinh)
def arcsinh(g, ans, x):
    d[x] = g / np.sqrt(x * x + 1.0)


@defvjp(np.arccosh, math.acosh)
def arccosh(g, ans, x):
    d[x] = g / np.sqrt(x * x - 1.0)


@defvjp(np.arctanh, math.atanh)
def arctanh(g, ans, x):
    d[x] = g / (1.0 - x * x)


@defvjp(np.abs, np.absolute, np.fabs, abs, math.fabs)
def absolute(g, ans, x):
    d[x] = np.conj(g * rt.abs_slope(x))


# ---------------------------------------------------------------------------
# Complex numbers, in JAX's convention: a holomorphic function's cotangent is ``g * f'(z)`` (the rules
# above), and a real function of ``z`` sends back the conjugate of its derivative along the real axis
# (``np.abs``, ``np.var``, ``np.linalg.norm``); ``np.conj`` is dropped where the operand is real.


@defvjp(np.real, ("method", "real"))
def real(g, ans, val):
    d[val] = g


@defvjp(np.imag, ("method", "imag"))
def imag(g, ans, val):
    d[val] = -1j * g


@defvjp(np.conj, np.conjugate, ("method", "conj"), ("method", "conjugate"))
def conj(g, ans, x):
    d[x] = np.conj(g)


@defvjp(np.angle)
def angle(g, ans, z, deg=False):
    d[z] = -1j * g / z


@defvjp(np.sinc)
def sinc(g, ans, x):
    d[x] = g * rt.dsinc(x)


# ---------------------------------------------------------------------------
# Elementwise functions of two arguments


@defvjp(np.arctan2, math.atan2)
def arctan2(g, ans, x1, x2):
    r = x1 * x1 + x2 * x2
    d[x1] = rt.unbroadcast(g * x2 / r, x1)
    d[x2] = rt.unbroadcast(-g * x1 / r, x2)


@defvjp(np.hypot, math.hypot)
def hypot(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g * x1 / ans, x1)
    d[x2] = rt.unbroadcast(g * x2 / ans, x2)


@defvjp(np.logaddexp)
def logaddexp(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g * np.exp(x1 - ans), x1)
    d[x2] = rt.unbroadcast(g * np.exp(x2 - ans), x2)


@defvjp(np.logaddexp2)
def logaddexp2(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g * np.exp2(x1 - ans), x1)
    d[x2] = rt.unbroadcast(g * np.exp2(x2 - ans), x2)


@defvjp(np.maximum)
def maximum(g, ans, x1, x2):
    """Ties share the cotangent equally (JAX's and autograd's convention)."""
    d[x1] = rt.unbroadcast(g * ((x1 > x2) + 0.5 * (x1 == x2)), x1)
    d[x2] = rt.unbroadcast(g * ((x2 > x1) + 0.5 * (x1 == x2)), x2)


@defvjp(np.minimum)
def minimum(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g * ((x1 < x2) + 0.5 * (x1 == x2)), x1)
    d[x2] = rt.unbroadcast(g * ((x2 < x1) + 0.5 * (x1 == x2)), x2)


@defvjp(np.fmax)
def fmax(g, ans, x1, x2):
    """``x1`` where it is larger or ``x2`` is NaN, else ``x2`` (ties too), as JAX's ``where``."""
    first = g * ((x1 > x2) | np.isnan(x2))
    d[x1] = rt.unbroadcast(first, x1)
    d[x2] = rt.unbroadcast(g - first, x2)


@defvjp(np.fmin)
def fmin(g, ans, x1, x2):
    first = g * ((x1 < x2) | np.isnan(x2))
    d[x1] = rt.unbroadcast(first, x1)
    d[x2] = rt.unbroadcast(g - first, x2)


@defvjp(max)
def builtin_max(g, ans, x1, x2):
    """Python's ``max(x1, x2)`` is ``x2`` only where ``x2 > x1``: a tie is the first argument's."""
    second = g * (x2 > x1)
    d[x1] = g - second
    d[x2] = second


@defvjp(min)
def builtin_min(g, ans, x1, x2):
    second = g * (x2 < x1)
    d[x1] = g - second
    d[x2] = second


@defvjp(np.clip)
def clip(g, ans, a, a_min, a_max):
    """``np.minimum(a_max, np.maximum(a_min, a))``, as JAX clips: a tie at a bound shares the cotangent."""
    low = a if a_min is None else np.maximum(a, a_min)
    through = g if a_max is None else g * ((low < a_max) + 0.5 * (low == a_max))
    d[a] = rt.unbroadcast(through if a_min is None else through * ((a > a_min) + 0.5 * (a == a_min)), a)
    d[a_min] = rt.unbroadcast(through * ((a_min > a) + 0.5 * (a == a_min)), a_min)
    d[a_max] = rt.unbroadcast(g * ((a_max < low) + 0.5 * (low == a_max)), a_max)


@defvjp(np.where)
def where(g, ans, condition, x, y):
    d[condition] = None
    d[x] = rt.unbroadcast(np.where(condition, g, 0.0), x)
    d[y] = rt.unbroadcast(np.where(condition, 0.0, g), y)


# ---------------------------------------------------------------------------
# Reductions


@defvjp(np.sum)
def sum_(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = rt.unreduce(g, a, axis, keepdims)


@defvjp(np.mean)
def mean(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = rt.unreduce(g, a, axis, keepdims) * (rt.size_of(ans) / rt.size_of(a))


@defvjp(np.prod)
def prod(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    """The product of the other elements, without a division: exact at zeros, as JAX's rule."""
    d[a] = rt.unreduce(g, a, axis, keepdims) * rt.prod_others(a, axis)


@defvjp(np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin)
def max_(g, ans, a, axis=None, out=None, keepdims=False):
    """Ties share the cotangent equally (JAX's ``_reduce_chooser_jvp_rule``); NaNs that nanmax skips get none."""
    d[a] = rt.unreduce(g, a, axis, keepdims) * rt.chooser_weights(a, ans, axis, keepdims)


@defvjp(np.ptp)
def ptp(g, ans, a, axis=None, out=None, keepdims=False):
    """``np.max(a) - np.min(a)``, each with its ties sharing."""
    spread = rt.unreduce(g, a, axis, keepdims)
    top = rt.chooser_weights(a, np.max(a, axis=axis, keepdims=keepdims), axis, keepdims)
    d[a] = spread * (top - rt.chooser_weights(a, np.min(a, axis=axis, keepdims=keepdims), axis, keepdims))


@defvjp(np.median)
def median(g, ans, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    d[a] = g * rt.median_weights(a, axis)


@defvjp(np.var)
def var(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    d[a] = np.conj(rt.var_grad(g, a, axis, ddof, keepdims))


@defvjp(np.std)
def std(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    d[a] = np.conj(rt.var_grad(g / (2.0 * ans), a, axis, ddof, keepdims))


@defvjp(np.cumsum)
def cumsum(g, ans, a, axis=None, dtype=None, out=None):
    d[a] = rt.cumsum_grad(g, a, axis)


@defvjp(np.linalg.norm)
def norm(g, ans, x, ord=None, axis=None, keepdims=False):
    d[x] = np.conj(rt.norm_grad(g, ans, x, ord, axis, keepdims))


@defvjp(np.trace)
def trace(g, ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[a] = rt.trace_grad(g, a, offset, axis1, axis2)


# ---------------------------------------------------------------------------
# Shapes


@defvjp(np.reshape, np.ravel, np.squeeze, np.expand_dims, np.atleast_1d, np.atleast_2d, np.atleast_3d)
def reshape(g, ans, a, newshape=None):
    d[a] = rt.reshape_like(g, a)


@defvjp(np.transpose)
def transpose(g, ans, a, axes=None):
    d[a] = np.transpose(g) if axes is None else np.transpose(g, rt.inverse_axes(axes))


@defvjp(np.swapaxes)
def swapaxes(g, ans, a, axis1, axis2):
    d[a] = np.swapaxes(g, axis1, axis2)


@defvjp(np.broadcast_to)
def broadcast_to(g, ans, array, shape):
    d[array] = rt.unbroadcast(g, array)


@defvjp(np.triu)
def triu(g, ans, m, k=0):
    d[m] = np.triu(g, k)


@defvjp(np.tril)
def tril(g, ans, m, k=0):
    d[m] = np.tril(g, k)


# ---------------------------------------------------------------------------
# Linear algebra


@defvjp(np.linalg.inv)
def inv(g, ans, a):
    d[a] = -(ans.T @ g @ ans.T)


@defvjp(np.linalg.det)
def det(g, ans, a):
    d[a] = g * ans * np.linalg.inv(a).T


@defvjp(np.linalg.solve)
def solve(g, ans, a, b):
    gb = np.linalg.solve(a.T, g)
    d[a] = rt.solve_grad_a(gb, ans)
    d[b] = gb


@defvjp(np.linalg.cholesky)
def cholesky(g, ans, a):
    d[a] = rt.cholesky_grad(g, ans)


# ---------------------------------------------------------------------------
# No derivative: comparisons, rounding, indices, shapes and constructors

def_nondifferentiable(
    np.sign, np.floor, np.ceil, np.round, np.around, np.rint, np.trunc, np.fix, round, math.floor, math.ceil,
    math.trunc, np.floor_divide, gast.FloorDiv, np.argmax, np.argmin, np.argsort, np.argwhere, np.nonzero,
    np.searchsorted, np.count_nonzero, np.any, np.all, np.isnan, np.isinf, np.isfinite, np.isclose, np.allclose,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor, np.equal, np.not_equal, np.less,
    np.less_equal, np.greater, np.greater_equal, np.shape, np.ndim, np.size, len, int, bool, range,
    np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like, np.eye, np.identity, gast.Not, gast.Lt, gast.LtE, gast.Gt, gast.GtE, gast.Eq, gast.NotEq,
    gast.Is, gast.IsNot, gast.In, gast.NotIn, gast.And, gast.Or, gast.Invert, gast.BitAnd, gast.BitOr, gast.BitXor,
    gast.LShift, gast.RShift, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert,
    np.int64, np.int32, math.isnan, math.isinf, math.isfinite)


@defvjp(gast.Mod, np.mod, np.remainder)
def mod(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g, x1)
    d[x2] = rt.unbroadcast(-g * np.floor_divide(x1, x2), x2)


# Array methods, as ``("method", name)``: the receiver is the first parameter.
_METHODS = {
    "sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min, "var": np.var,
    "std": np.std, "cumsum": np.cumsum, "dot": np.dot, "reshape": np.reshape, "ravel": np.ravel,
    "flatten": np.ravel, "squeeze": np.squeeze, "transpose": np.transpose, "copy": np.copy, "clip": np.clip,
    "T": np.transpose, "trace": np.trace, "swapaxes": np.swapaxes,
}
_NONDIFF_METHODS = ("argmax", "argmin", "argsort", "any", "all", "nonzero", "shape", "ndim", "size", "dtype",
                    "astype_int", "item_index")


def _register_methods():
    from numbax.transforms.grad.rules import VJP_RULES, NONDIFFERENTIABLE

    for name, fn in _METHODS.items():
        VJP_RULES[method_key(name)] = VJP_RULES[fn]
    for name in _NONDIFF_METHODS:
        VJP_RULES[method_key(name)] = NONDIFFERENTIABLE


_register_methods()


# Constructors whose values come from their arguments (``np.arange`` has no rule: its length would too)

@defvjp(np.linspace)
def linspace(g, ans, start, stop, num=50, endpoint=True):
    w = rt.linspace_weights(num, endpoint)
    d[start] = np.sum(g * (1.0 - w))
    d[stop] = np.sum(g * w)


@defvjp(np.full)
def full(g, ans, shape, fill_value, dtype=None, order="C"):
    d[fill_value] = rt.unbroadcast(g, fill_value)


@defvjp(np.full_like)
def full_like(g, ans, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    d[a] = None
    d[fill_value] = rt.unbroadcast(g, fill_value)


@defvjp(np.sort)
def sort(g, ans, a, axis=-1):
    d[a] = rt.sort_grad(g, a, axis)


@defvjp(np.diag)
def diag(g, ans, v, k=0):
    d[v] = rt.diag_grad(g, v, k)


@defvjp(np.cumprod)
def cumprod(g, ans, a, axis=None, dtype=None, out=None):
    d[a] = rt.cumprod_grad(g, a, axis)


_METHODS["cumprod"] = np.cumprod
_register_methods()


# ---------------------------------------------------------------------------
# scipy.special, through the runtime helpers generated code calls instead

from numbax.runtime import special as _special  # noqa: E402


@defvjp(_special.expit)
def expit(g, ans, x):
    d[x] = g * ans * (1.0 - ans)


@defvjp(_special.log_expit)
def log_expit(g, ans, x):
    d[x] = g * (1.0 - np.exp(ans))


@defvjp(_special.erf)
def erf(g, ans, x):
    d[x] = g * 1.1283791670955126 * np.exp(-x * x)


@defvjp(_special.erfc)
def erfc(g, ans, x):
    d[x] = -g * 1.1283791670955126 * np.exp(-x * x)


@defvjp(_special.logsumexp)
def logsumexp(g, ans, a, axis=None, keepdims=False):
    d[a] = rt.unreduce(g, a, axis, keepdims) * np.exp(a - rt.unreduce(ans, a, axis, keepdims))


# ---------------------------------------------------------------------------
# Primitives with several results, split into one primitive per result when unpacked

from numbax.runtime import grad as _grad_runtime  # noqa: E402
from numbax.runtime import debug as _debug  # noqa: E402
from numbax.runtime import identity as _identity  # noqa: E402
from numbax.runtime import scan as _scan  # noqa: E402
from numbax.runtime import batching as _batching  # noqa: E402
from numbax.runtime import checks as _checks  # noqa: E402

SPLIT_RESULTS = {np.linalg.slogdet: ("rt.slogdet_sign", "rt.slogdet_logabs")}
def_nondifferentiable(_grad_runtime.slogdet_sign)
def_nondifferentiable(_identity.stop_gradient, _scan.stack_buffer, _batching.batch_size, _debug.debug_print,
                      _debug.debug_callback, *(getattr(_checks, name) for name in _checks.__all__))


@defvjp(_grad_runtime.slogdet_logabs)
def slogdet_logabs(g, ans, a):
    d[a] = g * np.linalg.inv(a).T


# ---------------------------------------------------------------------------
# Selections, rearrangements and copies

@defvjp(np.squeeze, np.expand_dims)
def squeeze(g, ans, a, axis=None):
    d[a] = rt.reshape_like(g, a)


@defvjp(np.diagonal)
def diagonal(g, ans, a, offset=0, axis1=0, axis2=1):
    d[a] = rt.diagonal_grad(g, a, offset, axis1, axis2)


@defvjp(np.moveaxis)
def moveaxis(g, ans, a, source, destination):
    d[a] = np.moveaxis(g, destination, source)


@defvjp(np.flip)
def flip(g, ans, m, axis=None):
    d[m] = np.flip(g) if axis is None else np.flip(g, axis)


@defvjp(np.roll)
def roll(g, ans, a, shift, axis=None):
    d[a] = np.roll(g, -shift) if axis is None else np.roll(g, -shift, axis)


@defvjp(np.tile)
def tile(g, ans, A, reps):
    d[A] = rt.tile_grad(g, A, reps)


@defvjp(np.repeat)
def repeat(g, ans, a, repeats, axis=None):
    d[a] = rt.repeat_grad(g, a, repeats, axis)


@defvjp(np.pad)
def pad(g, ans, array, pad_width, mode="constant", constant_values=0):
    d[array] = rt.pad_grad(g, array, pad_width, mode)


# Sequences of arrays: the rule's cotangent is a tuple, one entry per element.

@defvjp(np.concatenate)
def concatenate(g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    d[arrays] = rt.concatenate_grad(g, arrays, axis)


@defvjp(np.stack)
def stack(g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    d[arrays] = rt.stack_grad(g, arrays, axis)


@defvjp(np.hstack)
def hstack(g, ans, tup, dtype=None, casting="same_kind"):
    d[tup] = rt.hstack_grad(g, tup)


@defvjp(np.vstack)
def vstack(g, ans, tup, dtype=None, casting="same_kind"):
    d[tup] = rt.vstack_grad(g, tup)


# ---------------------------------------------------------------------------
# Contractions: the cotangent of operand k (legalize drops the None of an absent operand)

@defvjp(np.einsum)
def einsum(g, ans, subscripts, x, y=None, z=None):
    d[x] = rt.einsum_vjp(g, 0, subscripts, x, y, z)
    d[y] = rt.einsum_vjp(g, 1, subscripts, x, y, z)
    d[z] = rt.einsum_vjp(g, 2, subscripts, x, y, z)


@defvjp(np.tensordot)
def tensordot(g, ans, a, b, axes=2):
    d[a] = rt.tensordot_vjp(g, 0, a, b, axes)
    d[b] = rt.tensordot_vjp(g, 1, a, b, axes)


_METHODS.update(diagonal=np.diagonal, repeat=np.repeat)
_register_methods()


# Functions returning a list or a tuple, indexed: the cotangent ``g`` is a list, one entry per result.

LIST_RESULTS = {np.split}  # results that are lists of arrays, differentiable only where their avals are unknown


@defvjp(np.split)
def split(g, ans, ary, indices_or_sections, axis=0):
    d[ary] = rt.split_grad(g, ary, indices_or_sections, axis)


@defvjp(np.linalg.slogdet)
def slogdet(g, ans, a):
    d[a] = rt.slogdet_grad(g, a)


# ---------------------------------------------------------------------------
# The rules checked against JAX for complex operands (tests/test_grad_complex.py): reverse mode refuses
# any other primitive that meets a complex value, rather than give a number in another convention.

COMPLEX_VERIFIED = frozenset({
    gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.MatMult, gast.USub, gast.UAdd,
    np.add, np.subtract, np.multiply, np.divide, np.true_divide, np.power, np.matmul, np.dot, np.inner,
    np.negative, np.positive, np.copy, np.asarray, np.array, np.ascontiguousarray,
    np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sqrt, np.square, np.reciprocal,
    np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh,
    np.arctanh, np.abs, np.absolute, abs, np.real, np.imag, np.conj, np.angle,
    np.sum, np.mean, np.prod, np.var, np.std, np.cumsum, np.cumprod, np.linalg.norm, np.where,
    np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.broadcast_to, np.triu, np.tril, np.diag,
    np.diagonal, np.flip, np.roll, np.tile, np.pad, np.concatenate, np.stack, np.hstack, np.vstack, np.einsum,
    np.tensordot, np.linalg.inv, np.linalg.solve,
    *(method_key(name) for name in ("real", "imag", "conj", "conjugate", "sum", "mean", "prod", "var", "std",
                                    "cumsum", "cumprod", "dot", "reshape", "ravel", "flatten", "transpose", "T",
                                    "swapaxes", "copy")),
})
