"""``scipy.special``, through the runtime's stand-ins that generated code calls instead."""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
import numpy as np

from numbax.primitives import kinds, symbolic
from numbax.primitives.registry import define, defvjp
from numbax.runtime import special

_FLOAT = dict(aval=kinds.elementwise("f"), shape=symbolic.elementwise)


define(*(getattr(special, name) for name in special.ELEMENTWISE), **_FLOAT)


@defvjp(special.expit)
def expit(g, ans, x):
    d[x] = g * ans * (1.0 - ans)


@defvjp(special.log_expit)
def log_expit(g, ans, x):
    d[x] = g * (1.0 - np.exp(ans))


@defvjp(special.erf)
def erf(g, ans, x):
    d[x] = g * 1.1283791670955126 * np.exp(-x * x)


@defvjp(special.erfc)
def erfc(g, ans, x):
    d[x] = -g * 1.1283791670955126 * np.exp(-x * x)


@defvjp(special.logsumexp, aval=kinds.reduction("f"))
def logsumexp(g, ans, a, axis=None, keepdims=False):
    d[a] = rt.unreduce(g, a, axis, keepdims) * np.exp(a - rt.unreduce(ans, a, axis, keepdims))
