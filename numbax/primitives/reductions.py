"""Reductions and scans: over everything or over ``axis``, with ``keepdims``, as NumPy's.

Each entry keys NumPy's function, its array method and numbax's runtime stand-in (``rt.sum``, to which
legalization lowers ``np.sum(a, axis)`` for Numba), which share the abstract value and the shape.
"""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
import builtins
import math

import gast
import numpy as np

from numbax import runtime as rt
from numbax.primitives import kinds, symbolic
from numbax.primitives.registry import REGISTRY, def_methods, def_nondifferentiable, define, defjvp, defvjp, \
    method_key

_SUM = dict(aval=kinds.reduction(), shape=symbolic.reduction)


@defvjp(np.sum, **_SUM)
def sum_(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = rt.unreduce(g, a, axis, keepdims)


@defvjp(np.mean, aval=kinds.reduction("f"), shape=symbolic.reduction)
def mean(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = rt.unreduce(g, a, axis, keepdims) * np.divide(rt.size_of(ans), rt.size_of(a))  # NumPy's inf of empty a


@defvjp(np.prod, **_SUM)
def prod(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    """The product of the other elements, without a division: exact at zeros, as JAX's rule."""
    d[a] = rt.unreduce(g, a, axis, keepdims) * rt.prod_others(a, axis)


@defvjp(np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin, **_SUM)
def max_(g, ans, a, axis=None, out=None, keepdims=False):
    """Ties share the cotangent equally (JAX's ``_reduce_chooser_jvp_rule``); NaNs that nanmax skips get none."""
    d[a] = rt.unreduce(g, a, axis, keepdims) * rt.chooser_weights(a, ans, axis, keepdims)


@defvjp(np.ptp, **_SUM)
def ptp(g, ans, a, axis=None, out=None, keepdims=False):
    """``np.max(a) - np.min(a)``, each with its ties sharing."""
    spread = rt.unreduce(g, a, axis, keepdims)
    top = rt.chooser_weights(a, np.max(a, axis=axis, keepdims=keepdims), axis, keepdims)
    d[a] = spread * (top - rt.chooser_weights(a, np.min(a, axis=axis, keepdims=keepdims), axis, keepdims))


def _median_refusal(app, args):
    """``rt.median_weights`` takes one axis or none."""
    if isinstance(kinds.argument(app, 1, "axis"), (gast.Tuple, gast.List)):
        return ("over a tuple of axes: move them to the end and merge them (np.moveaxis, then reshape) to take the "
                "median over one axis")
    return None


@defvjp(np.median, aval=kinds.reduction("f"), shape=symbolic.reduction, refuse=_median_refusal)
def median(g, ans, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The cotangent goes to the middle elements of each lane (``rt.median_weights``)."""
    d[a] = rt.unreduce(g, a, axis, keepdims) * rt.median_weights(a, axis)


@defvjp(np.var, aval=kinds.reduction("f", real=True), shape=symbolic.reduction)
def var(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    d[a] = np.conj(rt.var_grad(g, a, axis, ddof, keepdims))


@defvjp(np.std, aval=kinds.reduction("f", real=True), shape=symbolic.reduction)
def std(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    d[a] = np.conj(rt.var_grad(g / (2.0 * ans), a, axis, ddof, keepdims))


def _scan(app, args):
    """``np.cumsum(a, axis)`` has ``a``'s abstract value; without an axis it is flat (unknown where ``a``'s is); of
    the kind of ``dtype=`` where it is given (bools counting as integers without it)."""
    if not args or args[0] is None:
        return None
    kind, ndim = args[0]
    accumulated = kinds.given_dtype(app)
    if accumulated is kinds.UNKNOWN:
        return None
    kind = accumulated or ("i" if kind == "b" else kind)
    return (kind, ndim if kinds.given_axis(app) else 1)


@defvjp(np.cumsum, aval=_scan)
def cumsum(g, ans, a, axis=None, dtype=None, out=None):
    d[a] = rt.cumsum_grad(g, a, axis)


@defvjp(np.cumprod, aval=_scan)
def cumprod(g, ans, a, axis=None, dtype=None, out=None):
    d[a] = rt.cumprod_grad(g, a, axis)


def norm_call(app, args, position: int):
    """What a norm's rules depend on in a call (``x`` at ``position``, then ``ord``, ``axis``): ``x``'s abstract
    value, ``ord``'s value and ``axis``'s (``kinds.UNKNOWN`` where not constants), and whether it is a matrix
    norm (None where that is not known when compiling)."""
    x = args[position] if len(args) > position else None
    order = kinds.constant_value(kinds.argument(app, position + 1, "ord"))
    axis = kinds.constant_value(kinds.argument(app, position + 2, "axis"))
    if axis is kinds.UNKNOWN or (axis is None and x is None):
        return x, order, axis, None
    matrix = (x[1] == 2 and order is not None) if axis is None else isinstance(axis, tuple) and len(axis) == 2
    return x, order, axis, matrix


def _norm_refusal(app, args):
    """``rt.norm_grad`` has every order over vectors and 2-D arrays, of real numbers; of complex ones, the 2-norm
    and Frobenius' (checked against JAX); no stacks of matrices."""
    x, order, axis, matrix = norm_call(app, args, 0)
    if order is None and axis is None:
        return None  # the 2-norm of the flattened array
    if matrix is None:
        return "over an array whose rank or axes are not known when compiling; pass constant axes"
    if matrix and order not in (None, "fro") and (x is None or x[1] != 2):
        return (f"with ord={order!r} over a stack of matrices (axis={axis}); take the norm of each matrix of a "
                f"2-D slice, or use ord=None or 'fro'")
    if (x is None or x[0] == "c") and not (order in (None, "fro") or order == 2 and not matrix):
        return (f"of complex numbers with ord={'a run-time value' if order is kinds.UNKNOWN else repr(order)}: only "
                f"the 2-norm and Frobenius' are checked against JAX there; use np.abs(z) and a real norm")
    return None


@defvjp(np.linalg.norm, aval=kinds.reduction("f", real=True, axis_position=2), refuse=_norm_refusal)
def norm(g, ans, x, ord=None, axis=None, keepdims=False):
    """Every order over vectors and matrices, as JAX's subgradients (``numbax.runtime.norm_grads``)."""
    d[x] = np.conj(rt.norm_grad(g, ans, x, ord, axis, keepdims))


def _trace(app, args):
    """Over the first two axes: the operand's kind (bools sum to integers), the ndim less two."""
    if not args or args[0] is None:
        return None
    return ("i" if args[0][0] == "b" else args[0][0], max(args[0][1] - 2, 0))


@defvjp(np.trace, rt.trace, aval=_trace)
def trace(g, ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[a] = rt.trace_grad(g, a, offset, axis1, axis2)



def_nondifferentiable(np.argmax, np.argmin, np.count_nonzero, method_key("argmax"), method_key("argmin"),
                      aval=kinds.reduction("i"))
def_nondifferentiable(np.any, np.all, method_key("any"), method_key("all"), aval=kinds.reduction("b"))
def_nondifferentiable(method_key("argsort"), method_key("nonzero"), method_key("shape"), method_key("ndim"),
                      method_key("size"), method_key("dtype"), method_key("item_index"))
# integers, booleans, shapes and dtypes whatever their operands' kind: nothing to differentiate, complex too
define(np.argmax, np.argmin, np.count_nonzero, method_key("argmax"), method_key("argmin"), np.any, np.all,
       method_key("any"), method_key("all"), method_key("argsort"), method_key("nonzero"), method_key("shape"),
       method_key("ndim"), method_key("size"), method_key("dtype"), method_key("item_index"), complex_verified=True)


def_methods({"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min, "var": np.var,
             "std": np.std, "cumsum": np.cumsum, "cumprod": np.cumprod, "trace": np.trace})

# The runtime's stand-ins: the abstract value and shape of the function they stand in for (no rule of
# their own: reverse mode runs before legalization writes them)
for _name in ("sum", "mean", "prod", "max", "min", "amax", "amin", "ptp", "var", "std", "cumsum", "cumprod",
              "norm", "trace", "argmax", "argmin", "any", "all"):
    _numpy = REGISTRY[np.linalg.norm if _name == "norm" else getattr(np, _name)]
    define(getattr(rt, _name), aval=_numpy.aval, shape=_numpy.shape)


def _builtin_sum(app, args):
    """Python's ``sum`` of a vector: a number (of a matrix, a row; of a list, unknown here)."""
    if len(args) == 1 and args[0] is not None and args[0][1] == 1:
        return ("i" if args[0][0] == "b" else args[0][0], 0)
    return None


define(builtins.sum, aval=_builtin_sum)
define(builtins.any, builtins.all, aval=kinds.constant("b", 0))
define(math.prod, aval=kinds.reduction(axis_position=None))

# Checked against JAX for complex operands (tests/test_grad_complex.py)
define(np.sum, np.mean, np.prod, np.var, np.std, np.cumsum, np.cumprod, np.linalg.norm, complex_verified=True)


# Forward mode: ``g`` is the operand's tangent, the line its part of the result's tangent


@defjvp(np.sum)
def sum_jvp(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = np.sum(g, axis=axis, keepdims=keepdims)


@defjvp(np.mean)
def mean_jvp(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = np.mean(g, axis=axis, keepdims=keepdims)


@defjvp(np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin)
def max_jvp(g, ans, a, axis=None, out=None, keepdims=False):
    """Ties share the tangent equally, as JAX's ``_reduce_chooser_jvp_rule``; NaNs that nanmax skips give none."""
    d[a] = np.sum(g * rt.chooser_weights(a, ans, axis, keepdims), axis=axis, keepdims=keepdims)


@defjvp(np.ptp)
def ptp_jvp(g, ans, a, axis=None, out=None, keepdims=False):
    """``np.max(a) - np.min(a)``, each with its ties sharing."""
    top = rt.chooser_weights(a, np.max(a, axis=axis, keepdims=keepdims), axis, keepdims)
    bottom = rt.chooser_weights(a, np.min(a, axis=axis, keepdims=keepdims), axis, keepdims)
    d[a] = np.sum(g * (top - bottom), axis=axis, keepdims=keepdims)


@defjvp(np.median)
def median_jvp(g, ans, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The mean of the middle elements' tangents (``rt.median_weights``: one half each for an even count)."""
    d[a] = np.sum(g * rt.median_weights(a, axis), axis=axis, keepdims=keepdims)


@defjvp(np.prod)
def prod_jvp(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = np.sum(g * rt.prod_others(a, axis), axis=axis, keepdims=keepdims)


@defjvp(np.cumsum)
def cumsum_jvp(g, ans, a, axis=None, dtype=None, out=None):
    d[a] = np.cumsum(g) if axis is None else np.cumsum(g, axis)


@defjvp(np.cumprod)
def cumprod_jvp(g, ans, a, axis=None, dtype=None, out=None):
    d[a] = rt.cumprod_jvp(g, a, axis)


@defjvp(np.var)
def var_jvp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """``2 (a - mean) / (n - ddof)`` weights, which ``rt.var_grad`` spreads over ``a`` from a one."""
    d[a] = np.sum(np.real(g * np.conj(rt.var_grad(rt.ones_like(ans), a, axis, ddof, keepdims))), axis=axis,
                  keepdims=keepdims)


@defjvp(np.std)
def std_jvp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    d[a] = np.sum(np.real(g * np.conj(rt.var_grad(rt.ones_like(ans) / (2.0 * ans), a, axis, ddof, keepdims))),
                  axis=axis, keepdims=keepdims)


@defjvp(np.linalg.norm)
def norm_jvp(g, ans, x, ord=None, axis=None, keepdims=False):
    d[x] = np.sum(np.real(g * np.conj(rt.norm_grad(rt.ones_like(ans), ans, x, ord, axis, keepdims))), axis=axis,
                  keepdims=keepdims)


@defjvp(np.trace, rt.trace)
def trace_jvp(g, ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[a] = rt.trace(g, offset, axis1, axis2)
