"""Polynomials: ``np.polyval`` and ``np.convolve`` (their product), and the runtime helpers of their derivatives,
closed under differentiation (``numbax.runtime.polynomials``, ``numbax.runtime.convolution``)."""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
import numpy as np

from numbax import runtime as rt
from numbax.primitives import kinds
from numbax.primitives.registry import def_nondifferentiable, define, defjvp, defvjp


def _polyval(app, args):
    """The value at ``x``: ``x``'s ndim, the kind the coefficients and ``x`` promote to."""
    if len(args) > 1 and kinds.known(args[0], args[1]):
        return (kinds.promote(args[0][0], args[1][0]), args[1][1])
    return None


define(rt.polyval, aval=_polyval)
define(rt.polyval_grad_p, aval=kinds.constant("f", 1))
def_nondifferentiable(rt.polyder_weights, aval=kinds.constant("f", 1))


@defvjp(np.polyval, aval=_polyval)
def polyval(g, ans, p, x):
    """In ``x``: the derivative polynomial at ``x``; in ``p``: the powers of ``x`` weighted by ``g``."""
    d[p] = rt.polyval_grad_p(g, p, x)
    d[x] = g * np.polyval(p[:-1] * rt.polyder_weights(p), x)


@defjvp(np.polyval)
def polyval_jvp(g, ans, p, x):
    d[p] = np.polyval(g, x)
    d[x] = g * np.polyval(p[:-1] * rt.polyder_weights(p), x)


@defvjp(rt.polyval_grad_p)
def polyval_grad_p(g, ans, cotangent, p, x):
    """Linear in ``cotangent`` (its adjoint is ``np.polyval(g, x)``); in ``x``, the derivative of ``g``'s
    polynomial at ``x`` times ``cotangent``; ``p`` is read for its length only."""
    d[cotangent] = np.polyval(g, x)
    d[p] = None
    d[x] = cotangent * np.polyval(g[:-1] * rt.polyder_weights(g), x)


@defjvp(rt.polyval_grad_p)
def polyval_grad_p_jvp(g, ans, cotangent, p, x):
    """In ``x``: ``sum(cotangent * g * (n - 1 - k) * x ** (n - 2 - k))``, the powers one lower (``p[:-1]``'s)
    weighted, and 0 for the constant term."""
    d[cotangent] = rt.polyval_grad_p(g, p, x)
    d[p] = None
    d[x] = np.concatenate((rt.polyval_grad_p(cotangent * g, p[:-1], x) * rt.polyder_weights(p), np.zeros(1)))


# np.convolve: the product of polynomials, bilinear in its operands; an operand's cotangent is a correlation
# (``rt.convolve_vjp``), bilinear too, whose adjoints are np.convolve and itself (``numbax.runtime.convolution``)


def _convolved(app, args):
    """A vector of the kind the operands promote to."""
    if len(args) > 1 and kinds.known(args[0], args[1]):
        return (kinds.promote(args[0][0], args[1][0]), 1)
    return None


define(rt.convolve, aval=_convolved)
define(rt.convolve_vjp, aval=kinds.constant("f", 1))


@defvjp(np.convolve, aval=_convolved)
def convolve(g, ans, a, v, mode="full"):
    d[a] = rt.convolve_vjp(g, v, a, mode)
    d[v] = rt.convolve_vjp(g, a, v, mode)


@defjvp(np.convolve)
def convolve_jvp(g, ans, a, v, mode="full"):
    d[a] = np.convolve(g, v, mode)
    d[v] = np.convolve(a, g, mode)


@defvjp(rt.convolve_vjp)
def convolve_vjp(g, ans, cotangent, other, like, mode="full"):
    """``<g, convolve_vjp(cotangent, other)>`` is ``<convolve(g, other), cotangent>``, symmetric in the three."""
    d[cotangent] = np.convolve(g, other, mode)
    d[other] = rt.convolve_vjp(cotangent, g, other, mode)
    d[like] = None


@defjvp(rt.convolve_vjp)
def convolve_vjp_jvp(g, ans, cotangent, other, like, mode="full"):
    d[cotangent] = rt.convolve_vjp(g, other, like, mode)
    d[other] = rt.convolve_vjp(cotangent, g, like, mode)
    d[like] = None
