"""``jax.lax``'s cumulative reductions along one axis, written in the NumPy numbax compiles.

Called outside compiled code each runs as NumPy; inside, numbax specializes its source like the user's, so
every transformation differentiates, batches and compiles it from the registry's rules. ``reverse=True``
accumulates from the end of the axis, as JAX does. ``cummax``/``cummin`` call a runtime helper whose
rules give JAX's derivative at ties, which follows the pairwise tree of its associative scan
(``numbax.runtime.running_extrema``), not a running maximum's.

    >>> cumsum(np.array([1.0, 2.0, 3.0]), reverse=True)
    array([6., 5., 3.])
"""
from __future__ import annotations

import numpy as np

from numbax.ast_passes.specialize.compile_time import specialized_from_source
from numbax import lax
from numbax.runtime import running_extrema

__all__ = ["cumsum", "cumprod", "cumlogsumexp", "cummax", "cummin"]


@specialized_from_source
def cumsum(operand, axis=0, reverse=False):
    """The running sums of ``operand`` along ``axis`` (``jax.lax.cumsum``)."""
    if reverse:
        return np.flip(np.cumsum(np.flip(operand, axis), axis=axis), axis)
    return np.cumsum(operand, axis=axis)


@specialized_from_source
def cumprod(operand, axis=0, reverse=False):
    """The running products of ``operand`` along ``axis`` (``jax.lax.cumprod``)."""
    if reverse:
        return np.flip(np.cumprod(np.flip(operand, axis), axis=axis), axis)
    return np.cumprod(operand, axis=axis)


@specialized_from_source
def cumlogsumexp(operand, axis=0, reverse=False):
    """``log(cumsum(exp(operand)))`` along ``axis`` without overflow (``jax.lax.cumlogsumexp``): each prefix's
    (each suffix's with ``reverse``) ``logsumexp``, the other elements masked to ``-inf`` (quadratic in the
    axis's length, for a derivative that is every transformation's)."""
    rows = np.moveaxis(operand, axis, -1)
    n = rows.shape[-1]
    prefix = np.tri(n) > 0.5
    if reverse:
        prefix = prefix.T
    masked = np.where(prefix, np.expand_dims(rows, -2), -np.inf)
    top = np.max(masked, axis=-1, keepdims=True)
    top = lax.stop_gradient(np.where(np.isfinite(top), top, 0.0))  # as numbax.scipy.special.logsumexp
    return np.moveaxis(np.sum(np.log(np.sum(np.exp(masked - top), axis=-1, keepdims=True)) + top, axis=-1), -1, axis)



def _lower_extremum(name: str, helper):
    """``lax.cummax``/``cummin`` in compiled code: the runtime helper, whose rules give JAX's derivative, with
    ``axis`` and ``reverse`` known when compiling and checked at the user's line, as JAX checks them."""

    def lower(spec, node, args, kwargs):
        from numbax.ast_passes.specialize.compile_time import bind_call
        from numbax.ast_passes.specialize.dtypes import aval_of
        from numbax.ast_passes.specialize.values import AVal, Dyn

        bound = bind_call(spec, node, getattr(lax, name), f"lax.{name}", args, kwargs)
        operand, axis, reverse = bound["operand"], bound["axis"], bound["reverse"]
        aval = aval_of(operand)
        if isinstance(axis, Dyn) or isinstance(reverse, Dyn) or isinstance(axis, bool) or \
                not isinstance(axis, (int, np.integer)):
            spec.fail(node, f"lax.{name}: `axis` (an int) and `reverse` must be known when compiling",
                      hint="pass Python values, or mark the arguments static.")
        if aval is None or not 0 <= axis < aval.ndim:
            spec.fail(node, f"lax.{name}: axis {axis} is out of bounds for an operand of "
                      f"{'unknown rank' if aval is None else f'{aval.ndim} dimensions'}",
                      hint="pass an array of at least one dimension, and a nonnegative axis of it (as JAX's).")
        out = spec.call_static(node, helper, [operand, int(axis), bool(reverse)], {})
        out.aval = AVal(aval.dtype, aval.ndim)
        return out

    return lower


def cummax(operand, axis=0, reverse=False):
    """The running maxima of ``operand`` along ``axis`` (``jax.lax.cummax``), differentiated as JAX does:
    tied elements share a running maximum's derivative by the weights of JAX's associative scan."""
    _check_axis("cummax", operand, axis)
    return running_extrema.cummax(operand, axis, reverse)


def cummin(operand, axis=0, reverse=False):
    """The running minima of ``operand`` along ``axis`` (``jax.lax.cummin``), differentiated as JAX does
    (``cummax``)."""
    _check_axis("cummin", operand, axis)
    return running_extrema.cummin(operand, axis, reverse)


def _check_axis(name: str, operand, axis) -> None:
    """JAX's refusal of an axis that is not one of the operand's, negative ones included."""
    if not 0 <= axis < np.ndim(operand):
        raise ValueError(f"lax.{name}: axis {axis} is out of bounds for an operand of {np.ndim(operand)} dimensions")


cummax._numbax_specialize = _lower_extremum("cummax", running_extrema.cummax)
cummin._numbax_specialize = _lower_extremum("cummin", running_extrema.cummin)
