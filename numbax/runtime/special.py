"""SciPy's special functions for generated code: SciPy itself from Python, loops over ``math`` in Numba.

SciPy is imported on the first call from Python, the Numba ufuncs made on the first compilation:
``import numbax`` pays for neither.
"""
from __future__ import annotations

import math

import numpy as np
from numba import types, vectorize
from numba.core.errors import TypingError
from numba.extending import overload

from numbax.runtime import reductions as _reductions

__all__ = ["expit", "erf", "erfc", "log_expit", "logsumexp"]
ELEMENTWISE = ("expit", "erf", "erfc", "log_expit")  # the rest reduce


def _special():
    import scipy.special

    return scipy.special


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


def _elementwise(fn, scalar):
    """Register Numba's implementation of ``fn``: ``scalar`` made a ufunc when first compiled.

    ``numba.vectorize`` imports Numba's ufunc machinery (a large part of its lowering), which
    ``import numbax`` and loading cached code do not need.
    """
    kernels = []

    @overload(fn)
    def impl(x):
        if not kernels:
            kernels.append(vectorize(cache=True)(scalar))
        kernel = kernels[0]
        return lambda x: kernel(x)
    return impl


for _fn, _scalar in ((expit, _expit), (log_expit, _log_expit), (erf, _erf), (erfc, _erfc)):
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
