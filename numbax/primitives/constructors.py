"""Array constructors: those whose values come from their arguments, and those of no derivative."""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
import builtins

import gast
import numpy as np

from numbax import runtime as rt
from numbax.primitives import batching, kinds, symbolic
from numbax.primitives.registry import ELEMENTWISE, def_nondifferentiable, define, defjvp, defvjp


def _filled(dtype_position):
    """``np.zeros(shape, dtype)``: as many axes as the shape has (a number: one), of the dtype's kind, float
    without one; ``dtype_position`` is where the dtype may stand positionally."""
    def rule(app, args):
        shape = kinds.argument(app, 0, "shape")
        dtype = kinds.argument(app, dtype_position, "dtype")
        kind = "f" if dtype is None else kinds.dtype_kind(dtype)
        if kind is None:
            return None
        if isinstance(shape, gast.Tuple):
            return (kind, len(shape.elts))
        return (kind, 1) if app.args and args[0] == ("i", 0) else None

    return rule


def _like(app, args):
    """``np.zeros_like(a)``: ``a``'s abstract value, or ``dtype=``'s kind at ``a``'s ndim."""
    if not args or args[0] is None:
        return None
    dtype = app.keywords.get("dtype")
    if dtype is None:
        return args[0]
    kind = kinds.dtype_kind(dtype)
    return (kind, args[0][1]) if kind is not None else None


def _arange(app, args):
    """One axis, of the arguments' promoted kind (or ``dtype=``'s)."""
    if "dtype" in app.keywords:
        kind = kinds.dtype_kind(app.keywords["dtype"])
        return (kind, 1) if kind is not None else None
    return (kinds.promote("i", *(a[0] for a in args)), 1) if kinds.known(*args) else None


def _linspace(app, args):
    """One axis of floats, complex where an end is (or ``dtype=``'s kind); unknown with ``retstep``."""
    retstep = kinds.argument(app, 4, "retstep")
    if not (kinds.is_none(retstep) or isinstance(retstep, gast.Constant) and retstep.value is False):
        return None
    dtype = kinds.argument(app, 5, "dtype")
    if not kinds.is_none(dtype):
        kind = kinds.dtype_kind(dtype)
        return (kind, 1) if kind is not None else None
    ends = args[:2]
    if len(ends) < 2 or not kinds.known(*ends) or any(a[1] for a in ends):
        return None
    return (kinds.promote("f", *(a[0] for a in ends)), 1)


def _square(dtype_position: int):
    """``np.eye``'s or ``np.identity``'s rule: a matrix of floats, or of ``dtype=``'s kind (at
    ``dtype_position``)."""
    def rule(app, args):
        dtype = kinds.argument(app, dtype_position, "dtype")
        kind = "f" if kinds.is_none(dtype) else kinds.dtype_kind(dtype)
        return (kind, 2) if kind is not None else None

    return rule


@defvjp(np.linspace, aval=_linspace)
def linspace(g, ans, start, stop, num=50, endpoint=True):
    w = rt.linspace_weights(num, endpoint)
    d[start] = np.sum(g * (1.0 - w))
    d[stop] = np.sum(g * w)


@defvjp(np.full, aval=_filled(2))
def full(g, ans, shape, fill_value, dtype=None, order="C"):
    d[fill_value] = rt.unbroadcast(g, fill_value)


@defvjp(np.full_like, aval=_like)
def full_like(g, ans, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    d[a] = None
    d[fill_value] = rt.unbroadcast(g, fill_value)


def_nondifferentiable(np.zeros, np.ones, np.empty, aval=_filled(1))
define(np.zeros, np.ones, np.empty, np.full, shape=symbolic.filled)  # of lengths written as numbers


def _filled_rows(node, operands, keywords, rows):
    """``np.zeros(shape)`` made to hold one array a row (its rows written later, row by row)."""
    if not operands or any(op.batched for op in operands) or len(operands) > 2:
        return None
    shape = operands[0]
    if not isinstance(shape.expr, gast.Tuple) and shape.rank != 0:
        return None
    widened = batching.with_rows(shape.expr, rows)
    if widened is None:
        return None
    return gast.Call(func=node.func, args=[widened] + [op.expr for op in operands[1:]],
                     keywords=[gast.keyword(arg=k, value=v) for k, v in keywords.items()])


define(np.zeros, np.ones, np.empty, batch=_filled_rows)
def_nondifferentiable(np.zeros_like, np.ones_like, np.empty_like, aval=_like)
define(np.zeros_like, np.ones_like, np.empty_like, batch=ELEMENTWISE)  # an array like each row's
define(np.zeros_like, np.ones_like, shape=symbolic.elementwise)
def_nondifferentiable(np.eye, aval=_square(3))
def_nondifferentiable(np.identity, aval=_square(1))
# constant whatever their operands, complex ones too
define(np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like, np.eye, np.identity,
       complex_verified=True)
def_nondifferentiable(np.shape, np.ndim, np.size, builtins.range, np.argsort, np.argwhere, np.nonzero,
                      np.searchsorted)
# integers whatever their operands' kind: nothing to differentiate, complex operands too
define(np.shape, np.ndim, np.size, builtins.range, np.argsort, np.argwhere, np.nonzero, np.searchsorted,
       complex_verified=True)
define(np.arange, aval=_arange)


# Forward mode: ``g`` is the operand's tangent, the line its part of the result's tangent


@defjvp(np.linspace)
def linspace_jvp(g, ans, start, stop, num=50, endpoint=True):
    w = rt.linspace_weights(num, endpoint)
    d[start] = g * (1.0 - w)
    d[stop] = g * w


@defjvp(np.full)
def full_jvp(g, ans, shape, fill_value, dtype=None, order="C"):
    d[fill_value] = g


@defjvp(np.full_like)
def full_like_jvp(g, ans, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    d[a] = None
    d[fill_value] = g
