"""Polynomials: ``np.polyval`` and the runtime helpers of its derivatives, closed under differentiation."""
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
