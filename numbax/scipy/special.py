"""``numbax.scipy.special``: ``jax.scipy.special``'s functions, as NumPy numbax specializes.

Values and derivatives are JAX's: ``logsumexp`` shifts by the largest value along ``axis`` with no
derivative through the shift, ``xlogy(0, y)`` is 0 with derivative ``log(y)`` in ``x`` where ``y > 0``.
"""
from __future__ import annotations

import numpy as np
import scipy.special

from numbax.ast_passes.specialize.compile_time import specialized_from_source
from numbax.lax import stop_gradient

__all__ = ["logsumexp", "expit", "logit", "xlogy", "xlog1py", "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr",
           "gammaln", "digamma"]


@specialized_from_source
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b * exp(a), axis))``, computed shifted by the largest value; with ``return_sign``,
    ``(log(abs(sum)), sign(sum))`` (``jax.scipy.special.logsumexp``)."""
    top = np.max(a, axis=axis, keepdims=True)
    top = stop_gradient(np.where(np.isfinite(top), top, 0.0))
    if b is None:
        total = np.sum(np.exp(a - top), axis=axis, keepdims=True)
    else:
        total = np.sum(b * np.exp(a - top), axis=axis, keepdims=True)
    if return_sign:
        sign = np.sign(total)
        out = np.log(np.abs(total)) + top
        if keepdims:
            return out, sign
        return np.sum(out, axis=axis), np.sum(sign, axis=axis)  # the reduced axes have length 1
    out = np.log(total) + top
    if keepdims:
        return out
    return np.sum(out, axis=axis)


@specialized_from_source
def expit(x):
    """The logistic function ``1 / (1 + exp(-x))``."""
    return scipy.special.expit(x)


@specialized_from_source
def logit(p):
    """``log(p / (1 - p))``, the inverse of ``expit``."""
    return np.log(p) - np.log1p(-p)


@specialized_from_source
def xlogy(x, y):
    """``x * log(y)``, 0 where ``x`` is 0 (JAX's derivative ``log(y)`` in ``x`` there, where ``y > 0``)."""
    zero = (x == 0) & np.logical_not((y > 0) & (y < np.inf))
    return np.where(zero, 0.0, x * np.log(np.where(zero, 1.0, y)))


@specialized_from_source
def xlog1py(x, y):
    """``x * log1p(y)``, 0 where ``x`` is 0 (derivative ``log1p(y)`` in ``x`` there, where ``y > -1``)."""
    zero = (x == 0) & np.logical_not((y > -1) & (y < np.inf))
    return np.where(zero, 0.0, x * np.log1p(np.where(zero, 0.0, y)))


@specialized_from_source
def erf(x):
    """The error function."""
    return scipy.special.erf(x)


@specialized_from_source
def erfc(x):
    """The complementary error function ``1 - erf(x)``."""
    return scipy.special.erfc(x)


@specialized_from_source
def erfinv(x):
    """The inverse of ``erf`` on ``(-1, 1)``; derivative ``sqrt(pi) / 2 * exp(erfinv(x) ** 2)``."""
    return scipy.special.erfinv(x)


@specialized_from_source
def ndtr(x):
    """The standard normal distribution's CDF."""
    return scipy.special.ndtr(x)


@specialized_from_source
def ndtri(p):
    """The standard normal distribution's quantile (the inverse of ``ndtr``); derivative ``1 / pdf``."""
    return scipy.special.ndtri(p)


@specialized_from_source
def log_ndtr(x):
    """``log(ndtr(x))``: by the asymptotic series below -20, where ``ndtr`` underflows, and as
    ``log1p(-ndtr(-x))`` above 0, where ``ndtr`` nears 1."""
    low = x < -20.0
    far = np.where(low, x, -30.0)  # each branch computed where it is finite, so neither makes a NaN
    inverse_square = 1.0 / (far * far)
    series = 1.0 + inverse_square * (-1.0 + inverse_square * (3.0 + inverse_square * (
        -15.0 + inverse_square * (105.0 - inverse_square * 945.0))))
    tail = -0.5 * far * far - np.log(-far) - 0.9189385332046728 + np.log(series)
    high = x > 0.0
    middle = np.where(low | high, -1.0, x)
    upper = np.where(high, x, 1.0)
    return np.where(low, tail, np.where(high, np.log1p(-scipy.special.ndtr(-upper)),
                                        np.log(scipy.special.ndtr(middle))))


@specialized_from_source
def gammaln(x):
    """``log(abs(gamma(x)))``; derivative ``digamma``."""
    return scipy.special.gammaln(x)


@specialized_from_source
def digamma(x):
    """The derivative of ``gammaln``."""
    return scipy.special.digamma(x)
