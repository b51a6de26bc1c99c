"""Interpolation: ``np.interp`` with ``jax.numpy.interp``'s derivatives in ``x`` and ``fp`` (``xp``'s refused),
and the runtime helpers of those derivatives, closed under differentiation (``numbax.runtime.interpolation``)."""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
import numpy as np

from numbax import runtime as rt
from numbax.primitives import kinds
from numbax.primitives.registry import define, defjvp, defvjp


def _at_x(app, args):
    """A float of ``x``'s ndim."""
    return ("f", args[0][1]) if args and args[0] else None


define(rt.interp_slope, aval=_at_x)
define(rt.interp_transpose, aval=kinds.constant("f", 1))


@defvjp(np.interp, aval=_at_x)
def interp(g, ans, x, xp, fp):
    """In ``x``: the slope of JAX's segment (0 outside ``[xp[0], xp[-1]]``); in ``fp``: the interpolation
    weights. No rule in ``xp`` (nor for ``left``, ``right``, ``period``): a differentiated ``xp`` is refused."""
    d[x] = g * rt.interp_slope(x, xp, fp)
    d[fp] = rt.interp_transpose(g, x, xp)


@defjvp(np.interp)
def interp_jvp(g, ans, x, xp, fp):
    d[x] = g * rt.interp_slope(x, xp, fp)
    d[fp] = np.interp(x, xp, g)


@defvjp(rt.interp_slope)
def interp_slope(g, ans, x, xp, fp):
    """Piecewise constant in ``x`` (JAX's second derivative there is 0 too), linear in ``fp``."""
    d[x] = None
    d[fp] = rt.interp_transpose(g, x, xp, True)


@defjvp(rt.interp_slope)
def interp_slope_jvp(g, ans, x, xp, fp):
    d[x] = None
    d[fp] = rt.interp_slope(x, xp, g)


@defvjp(rt.interp_transpose)
def interp_transpose(g, ans, cotangent, x, xp, slope=False):
    """Linear in ``cotangent``; in ``x``, the slopes' transpose is piecewise constant, the weights' move with
    the slope of ``g`` read as values at the knots."""
    d[cotangent] = rt.interp_slope(x, xp, g) if slope else np.interp(x, xp, g)
    d[x] = rt.zeros_like(x) if slope else cotangent * rt.interp_slope(x, xp, g)
    d[slope] = None


@defjvp(rt.interp_transpose)
def interp_transpose_jvp(g, ans, cotangent, x, xp, slope=False):
    d[cotangent] = rt.interp_transpose(g, x, xp, slope)
    d[x] = rt.zeros_like(ans) if slope else rt.interp_transpose(cotangent * g, x, xp, True)
    d[slope] = None
