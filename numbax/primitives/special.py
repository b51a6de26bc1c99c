"""``scipy.special``, through the runtime's stand-ins that generated code calls instead."""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
import numpy as np

from numbax.primitives import kinds, symbolic
from numbax.primitives.registry import ELEMENTWISE, TRANSPOSED, define, defjvp, defvjp
from numbax.runtime import special

_FLOAT = dict(aval=kinds.elementwise("f"), shape=symbolic.elementwise)


define(*(getattr(special, name) for name in special.ELEMENTWISE), batch=ELEMENTWISE, **_FLOAT)


@defvjp(special.expit, jvp=TRANSPOSED)
def expit(g, ans, x):
    d[x] = g * ans * (1.0 - ans)


@defvjp(special.log_expit, jvp=TRANSPOSED)
def log_expit(g, ans, x):
    d[x] = g * (1.0 - np.exp(ans))


@defvjp(special.erf, jvp=TRANSPOSED)
def erf(g, ans, x):
    d[x] = g * 1.1283791670955126 * np.exp(-x * x)


@defvjp(special.erfc, jvp=TRANSPOSED)
def erfc(g, ans, x):
    d[x] = -g * 1.1283791670955126 * np.exp(-x * x)


@defvjp(special.erfinv, jvp=TRANSPOSED)
def erfinv(g, ans, x):
    d[x] = g * 0.886226925452758 * np.exp(ans * ans)


@defvjp(special.ndtr, jvp=TRANSPOSED)
def ndtr(g, ans, x):
    d[x] = g * 0.3989422804014327 * np.exp(-0.5 * x * x)


@defvjp(special.ndtri, jvp=TRANSPOSED)
def ndtri(g, ans, p):
    d[p] = g * 2.5066282746310002 * np.exp(0.5 * ans * ans)


@defvjp(special.gammaln, jvp=TRANSPOSED)
def gammaln(g, ans, x):
    d[x] = g * rt.digamma(x)


@defvjp(special.digamma, jvp=TRANSPOSED)
def digamma(g, ans, x):
    d[x] = g * rt.trigamma(x)


# rt.trigamma has no rule: a third derivative of gammaln is refused


@defvjp(special.logsumexp, aval=kinds.reduction("f"))
def logsumexp(g, ans, a, axis=None, keepdims=False):
    d[a] = rt.unreduce(g, a, axis, keepdims) * np.exp(a - rt.unreduce(ans, a, axis, keepdims))


@defjvp(special.logsumexp)
def logsumexp_jvp(g, ans, a, axis=None, keepdims=False):
    """The tangent weighted by the softmax along ``axis``."""
    d[a] = np.sum(g * np.exp(a - rt.unreduce(ans, a, axis, keepdims)), axis=axis, keepdims=keepdims)
