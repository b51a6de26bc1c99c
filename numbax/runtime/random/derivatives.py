"""derivatives: the Numba kernels of ``truncated_normal``'s and ``gamma``'s reverse-mode rules
(``numbax.random.derivatives``), JAX's derivatives to rounding.

The cotangents of ``truncated_normal``'s bounds redraw the uniform numbers from the key; ``gamma``'s
``g * dx/da`` reads the sample, by JAX's ``random_gamma_grad`` series and continued fraction repeated
here in float64.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from numbax.runtime.random import elementwise as ew
from numbax.runtime.random.continuous import broadcast_flat, unit
from numbax.runtime.special import digamma_positive

_EPS = float(np.finfo(np.float64).eps)
_LOG_MAX = math.log(float(np.finfo(np.float64).max))


@njit(cache=True, inline="always")
def _picked(x, other, ans):
    """The derivative of ``ans = max(x, other)`` (or ``min``) in ``x``, as JAX's: 1 where ``x`` won, 1/2 on a tie."""
    if x != ans:
        return 0.0
    return 0.5 if other == ans else 1.0


@njit(cache=True)
def truncated_normal_vjp_kernel(g, key, shape, dtype, lower, upper):
    """The cotangents of ``lower`` and ``upper``, each of the sample's ``shape``, from the sample's ``g``.

    JAX's derivative: through ``max(erf_lower, u * (erf_upper - erf_lower) + erf_lower)``, ``erf_inv``
    and ``erf``; none where the sample was clipped into the open interval (JAX clips at bounds whose
    gradient it stops).
    """
    (lows, low_step), (highs, high_step) = broadcast_flat(lower, shape, dtype), broadcast_flat(upper, shape, dtype)
    cotangents = np.ascontiguousarray(np.broadcast_to(np.asarray(g).astype(dtype), shape)).reshape(-1)
    d_lower, d_upper = np.empty(shape, dtype), np.empty(shape, dtype)
    d_lows, d_highs = d_lower.reshape(-1), d_upper.reshape(-1)
    zero, one = dtype(0), dtype(1)
    sqrt2 = dtype(math.sqrt(2.0))
    inverse_sqrt2 = one / sqrt2
    half_sqrt_pi, two_over_sqrt_pi = dtype(math.sqrt(math.pi) / 2), dtype(2 / math.sqrt(math.pi))
    for i in range(d_lows.size):
        low, high = lows[i * low_step], highs[i * high_step]
        x_low, x_high = low * inverse_sqrt2, high * inverse_sqrt2
        erf_low, erf_high = ew.erf(x_low), ew.erf(x_high)
        u = unit(key, i, zero)
        drawn = ew.fma(u, erf_high - erf_low, erf_low)
        uniform = max(erf_low, drawn)
        through_draw = _picked(drawn, erf_low, uniform)
        du_low = _picked(erf_low, drawn, uniform) + through_draw * (one - u)
        du_high = through_draw * u
        inverse = ew.erf_inv(uniform)
        sample = sqrt2 * inverse
        floor, ceiling = np.nextafter(low, dtype(np.inf)), np.nextafter(high, dtype(-np.inf))
        above = max(floor, sample)
        kept = _picked(sample, floor, above) * _picked(above, ceiling, min(ceiling, above))
        d_uniform = cotangents[i] * kept * (sqrt2 * (half_sqrt_pi * np.exp(inverse * inverse)))
        d_lows[i] = d_uniform * du_low * (two_over_sqrt_pi * np.exp(-(x_low * x_low))) * inverse_sqrt2
        d_highs[i] = d_uniform * du_high * (two_over_sqrt_pi * np.exp(-(x_high * x_high))) * inverse_sqrt2
    return d_lower, d_upper


@njit(cache=True)
def _series(a, x, enabled):
    """``dx/da`` by the series of ``P(a, x)`` (XLA's ``IgammaSeries``, sample-derivative mode)."""
    r, c, ans, dc_da, dans_da = a, 1.0, 1.0, 0.0, 0.0
    while enabled:
        r += 1.0
        dc_da = dc_da * (x / r) - (c * x) / (r * r)
        dans_da += dc_da
        c *= x / r
        ans += c
        enabled = abs(dc_da / dans_da) > _EPS
    return -(dans_da + ans * (math.log(x) - digamma_positive(a + 1.0))) * x / a


@njit(cache=True)
def _continued_fraction(a, x, enabled):
    """``dx/da`` by the continued fraction of ``Q(a, x) = 1 - P(a, x)`` (XLA's ``IgammacContinuedFraction``)."""
    y, c = 1.0 - a, 0.0
    z = x + y + 1.0
    pkm2, qkm2, pkm1, qkm1 = 1.0, x, x + 1.0, (x + y + 1.0) * x
    ans = pkm1 / qkm1
    dpkm2, dqkm2, dpkm1, dqkm1 = 0.0, 0.0, 0.0, -x
    dans = (dpkm1 - ans * dqkm1) / qkm1
    while enabled and c < 2000.0:
        c += 1.0
        y += 1.0
        z += 2.0
        yc = y * c
        pk, qk = pkm1 * z - pkm2 * yc, qkm1 * z - qkm2 * yc
        dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
        dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
        change = 1.0
        if qk != 0.0:
            ans = pk / qk
            new = (dpk - ans * dqk) / qk
            change, dans = abs(new - dans), new
        pkm2, pkm1, qkm2, qkm1, dpkm2, dqkm2, dpkm1, dqkm1 = pkm1, pk, qkm1, qk, dpkm1, dqkm1, dpk, dqk
        if abs(pk) > 1.0 / _EPS:
            pkm2, pkm1, qkm2, qkm1 = pkm2 * _EPS, pkm1 * _EPS, qkm2 * _EPS, qkm1 * _EPS
            dpkm2, dqkm2, dpkm1, dqkm1 = dpkm2 * _EPS, dqkm2 * _EPS, dpkm1 * _EPS, dqkm1 * _EPS
        enabled = change > _EPS
    return (dans + ans * (math.log(x) - digamma_positive(a))) * x


@njit(cache=True)
def gamma_sample_derivative(a, x):
    """``dx/da`` for a Gamma(a) sample ``x``: ``jax.lax.random_gamma_grad(a, x)``, computed in float64."""
    if math.isnan(a) or math.isnan(x) or x < 0.0 or a <= 0.0:
        return math.nan
    if x == 0.0:
        return 0.0
    enabled = a * math.log(x) - x - math.lgamma(a) >= -_LOG_MAX
    if x > 1.0 and x > a:
        return _continued_fraction(a, x, enabled)
    return _series(a, x, enabled)


@njit(cache=True)
def gamma_vjp_kernel(g, sample, shape, dtype, a):
    """The cotangent of ``a``, of the sample's ``shape``, from the sample's ``g``: ``g * dx/da`` per element."""
    alphas, step = broadcast_flat(a, shape, dtype)
    cotangents = np.ascontiguousarray(np.broadcast_to(np.asarray(g).astype(dtype), shape)).reshape(-1)
    samples = np.ascontiguousarray(sample).reshape(-1)
    out = np.empty(shape, dtype)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = cotangents[i] * dtype(gamma_sample_derivative(float(alphas[i * step]), float(samples[i])))
    return out
