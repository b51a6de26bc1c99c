"""``jax.lax``'s elementwise functions, by their ``jax.lax`` names, in the NumPy numbax compiles.

Where ``jax.lax``'s function is a NumPy (or ``scipy.special``) function with its semantics, it is that function,
and every registry rule is already its own (``exp`` is ``np.exp``, ``asin`` is ``np.arcsin``, ``rem`` is
``np.fmod``, C's remainder, ``lgamma`` is ``scipy.special.gammaln`` through ``numbax.runtime.special``, which
imports SciPy on first use). Where the semantics differ it is written here, plain NumPy that numbax specializes
inside compiled code: ``round`` rounds halves away from zero by default, ``div`` of integers rounds toward zero
(not ``//``'s floor), ``clamp`` takes ``(min, x, max)`` and passes no derivative at a tie, ``rsqrt``, ``logistic``
and ``erf_inv`` have no NumPy name (``erf_inv`` is ``scipy.special.erfinv``, compiled as XLA's polynomial).

    >>> round(np.array([0.5, -1.5, 2.5]))
    array([ 1., -2.,  3.])
    >>> div(np.array([7, -7]), 2), rem(np.array([7.0, -7.0]), 2.0)
    (array([ 3, -3]), array([ 1., -1.]))
"""
from __future__ import annotations

import numpy as np
from numbax import lax
from numbax.ast_passes.specialize.compile_time import specialized_from_source
from numbax.runtime import special

__all__ = ["exp", "exp2", "log", "log1p", "expm1", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh",
           "cosh", "tanh", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "cbrt", "abs", "neg", "sign", "floor",
           "ceil", "round", "square", "logistic", "integer_pow", "pow", "add", "sub", "mul", "div", "rem", "max",
           "min", "erf", "erfc", "erf_inv", "lgamma", "digamma", "is_finite", "clamp"]

exp, exp2, log, log1p, expm1 = np.exp, np.exp2, np.log, np.log1p, np.expm1
sin, cos, tan, asin, acos, atan, atan2 = np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.arctan2
sinh, cosh, tanh, asinh, acosh, atanh = np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh, np.arctanh
sqrt, cbrt, abs, neg, sign, floor, ceil, square = np.sqrt, np.cbrt, np.abs, np.negative, np.sign, np.floor, \
    np.ceil, np.square
pow, add, sub, mul, max, min, is_finite = np.power, np.add, np.subtract, np.multiply, np.maximum, np.minimum, \
    np.isfinite
rem = np.fmod  # C's remainder, of the dividend's sign
erf, erfc, lgamma, digamma = special.erf, special.erfc, special.gammaln, special.digamma  # SciPy's, on first use

_AWAY_FROM_ZERO, _TO_NEAREST_EVEN = 0, 1  # the values of jax.lax.RoundingMethod


@specialized_from_source
def round(x, rounding_method=_AWAY_FROM_ZERO):
    """``x`` rounded to an integer value, halves away from zero (``rounding_method=0``, JAX's default) or to
    even (``1``). No derivative flows through it (JAX's is zero)."""
    if rounding_method == _TO_NEAREST_EVEN:
        return np.rint(x)
    if rounding_method != _AWAY_FROM_ZERO:
        raise ValueError("round: rounding_method must be 0 (AWAY_FROM_ZERO) or 1 (TO_NEAREST_EVEN)")
    whole = np.trunc(x)
    return whole + np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0.0)  # x - trunc(x) is exact


@specialized_from_source
def rsqrt(x):
    """``1 / sqrt(x)``."""
    return 1.0 / np.sqrt(x)


@specialized_from_source
def logistic(x):
    """``1 / (1 + exp(-x))`` (``scipy.special.expit``)."""
    return special.expit(x)


@specialized_from_source
def erf_inv(x):
    """The inverse of ``erf`` on ``(-1, 1)`` (``scipy.special.erfinv``)."""
    return special.erfinv(x)


@specialized_from_source
def integer_pow(x, y):
    """``x ** y`` for a Python int ``y`` (its derivative is 0 for ``y == 0``, as JAX's)."""
    return x ** y


@specialized_from_source
def div(x, y):
    """``x / y``; of two integer operands, the quotient rounded toward zero (C's, not ``//``'s floor)."""
    if np.asarray(x).dtype.kind in "iu" and np.asarray(y).dtype.kind in "iu":
        return np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))
    return x / y


@specialized_from_source
def clamp(min, x, max):
    """``x`` clipped to ``[min, max]`` (``jax.lax.clamp``'s order). As JAX's: the derivative reaches ``x`` where
    ``min < x < max``, ``min`` where ``x < min``, ``max`` where ``x > max``, and nothing at a tie."""
    low = np.where(x > min, x, np.where(x < min, min, lax.stop_gradient(x)))
    return np.where(low < max, low, np.where(low > max, max, lax.stop_gradient(low)))
