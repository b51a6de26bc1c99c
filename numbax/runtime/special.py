"""SciPy's special functions for generated code: SciPy itself from Python, loops over ``math`` in Numba.

SciPy is imported on the first call from Python, the Numba ufuncs made on the first compilation:
``import numbax`` pays for neither.
"""
from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import register_jitable

from numbax.runtime import reductions as _reductions
from numbax.runtime.cached import overload
from numbax.runtime.loops import ufunc_implementation
from numbax.runtime.random.elementwise import erf_inv as _xla_erf_inv

__all__ = ["expit", "erf", "erfc", "erfinv", "log_expit", "logsumexp", "ndtr", "ndtri", "gammaln", "digamma",
           "trigamma"]
ELEMENTWISE = ("expit", "erf", "erfc", "erfinv", "log_expit", "ndtr", "ndtri", "gammaln", "digamma",
               "trigamma")  # the rest reduce


def _special():
    import scipy.special

    return scipy.special


def scipy_ufunc(fn):
    """SciPy's own ufunc for one of the elementwise stand-ins here (``erf`` -> ``scipy.special.erf``, which the
    compiler types and names as it does SciPy's), else ``fn``: ``numbax.lax`` holds the stand-ins, which
    import SciPy on first use, not SciPy's functions themselves."""
    if getattr(fn, "__module__", None) != __name__ or getattr(fn, "__name__", None) not in ELEMENTWISE:
        return fn
    return getattr(_special(), fn.__name__, fn)


def expit(x):
    """The logistic function ``1 / (1 + exp(-x))`` (``scipy.special.expit``)."""
    return _special().expit(x)


def log_expit(x):
    """``log(expit(x))`` without overflow (``scipy.special.log_expit``)."""
    return _special().log_expit(x)


def erf(x):
    """The error function (``scipy.special.erf``)."""
    return _special().erf(x)


def erfc(x):
    """The complementary error function (``scipy.special.erfc``)."""
    return _special().erfc(x)


def erfinv(x):
    """The inverse of ``erf`` on ``(-1, 1)`` (``scipy.special.erfinv``); compiled, XLA's polynomial
    (``jax.lax.erf_inv``)."""
    return _special().erfinv(x)


def ndtr(x):
    """The standard normal distribution's CDF (``scipy.special.ndtr``)."""
    return _special().ndtr(x)


def ndtri(p):
    """The standard normal distribution's quantile, the inverse of ``ndtr`` (``scipy.special.ndtri``)."""
    return _special().ndtri(p)


def gammaln(x):
    """``log(abs(gamma(x)))`` (``scipy.special.gammaln``)."""
    return _special().gammaln(x)


def digamma(x):
    """The derivative of ``gammaln`` (``scipy.special.digamma``)."""
    return _special().digamma(x)


def trigamma(x):
    """The derivative of ``digamma`` (``scipy.special.polygamma(1, x)``)."""
    return _special().polygamma(1, x)


def logsumexp(a, axis=None, keepdims=False):
    """``log(sum(exp(a)))`` over ``axis``, computed stably (``scipy.special.logsumexp``)."""
    return _special().logsumexp(a, axis=axis, keepdims=keepdims)


def _expit(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def _log_expit(x):
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


def _erf(x):
    return math.erf(x)


def _erfc(x):
    return math.erfc(x)


def _erfinv(x):
    return _xla_erf_inv(x)


_SQRT_HALF = 0.7071067811865476
_SQRT_2PI = 2.5066282746310002
# Acklam's rational approximation of the normal quantile (relative error 1.2e-9), refined by a Halley step
_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
      -3.066479806614716e+01, 2.506628277459239e+00)
_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
      -1.328068155288572e+01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
      4.374664141464968e+00, 2.938163982698783e+00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)


def _ndtr(x):
    return 0.5 * math.erfc(-x * _SQRT_HALF)


@register_jitable
def _tail_quantile(q):
    """The quantile of a lower-tail probability ``q`` below 0.02425, before refinement."""
    c, d = _C, _D
    t = math.sqrt(-2.0 * math.log(q))
    return (((((c[0] * t + c[1]) * t + c[2]) * t + c[3]) * t + c[4]) * t + c[5]) / \
        ((((d[0] * t + d[1]) * t + d[2]) * t + d[3]) * t + 1.0)


def _ndtri(p):
    if not 0.0 < p < 1.0:
        if p == 0.0:
            return -math.inf
        if p == 1.0:
            return math.inf
        return math.nan
    upper = p > 0.5
    q = 1.0 - p if upper else p  # the smaller tail, exact for p above one half
    if q < 0.02425:
        x = _tail_quantile(q)
    else:
        a, b = _A, _B
        u = q - 0.5
        r = u * u
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * u / \
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0)
    e = 0.5 * math.erfc(-x * _SQRT_HALF) - q  # x is the lower tail's quantile: refine it there
    step = e * _SQRT_2PI * math.exp(0.5 * x * x)
    x = x - step / (1.0 + 0.5 * x * step)
    return -x if upper else x


def _gammaln(x):
    if x <= 0.0 and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


def _digamma(x):
    if x <= 0.0 and x == math.floor(x):
        return -math.inf if x == 0.0 else math.nan
    if x < 0.0:  # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
        return digamma_positive(1.0 - x) - math.pi / math.tan(math.pi * x)
    return digamma_positive(x)


@register_jitable
def digamma_positive(x):
    """The digamma function for ``x > 0``: the recurrence up to 10, then the asymptotic series."""
    total = 0.0
    while x < 10.0:
        total -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))))
    return total + math.log(x) - 0.5 / x - series


def _trigamma(x):
    if x <= 0.0 and x == math.floor(x):
        return math.inf
    if x < 0.0:  # reflection: psi1(x) + psi1(1 - x) = pi^2 / sin^2(pi x)
        s = math.sin(math.pi * x)
        return -_trigamma_positive(1.0 - x) + math.pi * math.pi / (s * s)
    return _trigamma_positive(x)


@register_jitable
def _trigamma_positive(x):
    total = 0.0
    while x < 12.0:
        total += 1.0 / (x * x)
        x += 1.0
    f = 1.0 / (x * x)
    series = (1.0 + (0.5 + (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f * (1.0 / 30 - f * 5.0 / 66)))) / x) / x) / x
    return total + series


def _elementwise(fn, scalar):
    """Register Numba's implementation of ``fn``: ``scalar`` made a ufunc when first compiled
    (``ufunc_implementation``)."""
    implementation = ufunc_implementation(scalar, "x", cache=True)

    @overload(fn)
    def impl(x):
        return implementation()
    return impl


for _fn, _scalar in ((expit, _expit), (log_expit, _log_expit), (erf, _erf), (erfc, _erfc), (erfinv, _erfinv),
                     (ndtr, _ndtr),
                     (ndtri, _ndtri), (gammaln, _gammaln), (digamma, _digamma), (trigamma, _trigamma)):
    _elementwise(_fn, _scalar)


@overload(logsumexp, prefer_literal=True)
def _logsumexp(a, axis=None, keepdims=False):
    """Over the whole array (a number), or over ``axis`` with ``keepdims`` through the reduction helpers,
    which take any axes and keep the dims where asked (the largest value is kept as a size-1 dim to
    shift by, and summed away where ``keepdims`` is False)."""
    if isinstance(a, (types.Number,)):
        return lambda a, axis=None, keepdims=False: a
    whole = axis is None or isinstance(axis, (types.NoneType, types.Omitted))
    kept = isinstance(keepdims, types.BooleanLiteral) and keepdims.literal_value
    if whole and not kept:
        def entire(a, axis=None, keepdims=False):
            m = np.max(a)
            if not np.isfinite(m):
                m = 0.0
            return m + np.log(np.sum(np.exp(a - m)))
        return entire
    if not isinstance(keepdims, (types.BooleanLiteral, types.Omitted)) and keepdims is not False:
        raise TypingError("logsumexp: keepdims must be True or False when compiling")

    def over_axis(a, axis=None, keepdims=False):
        m = _reductions.max(a, axis, True)
        m = np.where(np.isfinite(m), m, np.zeros_like(m))
        return np.log(_reductions.sum(np.exp(a - m), axis, keepdims)) + _reductions.sum(m, axis, keepdims)
    return over_axis
