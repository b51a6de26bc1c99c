"""continuous: the Numba kernels of uniform, normal, exponential, Gumbel, truncated normal and gamma samples,
JAX's bit for bit.

A kernel ``*_kernel(key, shape, dtype, ...)`` reads a float ``u`` in ``[0, 1)`` per element
(``elementwise.unit_float``) and maps it the way ``jax.random`` does, multiplications fused into
the additions that consume them as XLA's CPU backend fuses them (``elementwise.fma``). The samplers
that check their arguments and call them are ``numbax.random.continuous``'s.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from numbax.runtime.random import elementwise as ew
from numbax.runtime.random.threefry import hash_index, split_kernel

@njit(cache=True, inline="always")
def unit(key, index, zero):
    """The float in ``[0, 1)`` of element ``index``, in ``zero``'s type."""
    b0, b1 = hash_index(key, index)
    return ew.unit_float(b0, b1, zero)


@njit(cache=True, inline="always")
def _scaled(u, minval, maxval):
    """``max(minval, u * (maxval - minval) + minval)`` with the product fused into the sum, as XLA computes it."""
    return max(minval, ew.fma(u, maxval - minval, minval))


@njit(cache=True, inline="always")
def _flat_with_steps(array):
    """``array`` flattened, and the index step that broadcasts it over a flat sample: 0 for one value, else 1."""
    flat = array.reshape(-1)
    return flat, int(flat.size > 1)


@njit(cache=True)
def uniform_kernel(key, shape, dtype, minval, maxval):
    """``jax.random.uniform``: ``minval``, ``maxval`` are arrays of ``dtype``, 0-d or of exactly ``shape``."""
    out = np.empty(shape, dtype)
    flat = out.reshape(-1)
    (lows, low_step), (highs, high_step) = _flat_with_steps(minval), _flat_with_steps(maxval)
    zero = dtype(0)
    for i in range(flat.size):
        flat[i] = _scaled(unit(key, i, zero), lows[i * low_step], highs[i * high_step])
    return out


@njit(cache=True, inline="always")
def _normal_constants(zero):
    """The bounds ``nextafter(-1, 0)`` and ``1`` of the uniform draw, and ``sqrt(2)``, in ``zero``'s type."""
    one = ew.as_type_of(1.0, zero)
    return ew.above_minus_one(zero), one, math.sqrt(one + one)


@njit(cache=True, inline="always")
def _normal(key, index, constants):
    """``sqrt(2) * erf_inv(u)`` for ``u`` uniform in ``(-1, 1)``: one standard normal sample."""
    low, one, sqrt2 = constants
    return sqrt2 * ew.erf_inv(_scaled(unit(key, index, low), low, one))


@njit(cache=True, inline="always")
def _uniform_between(key, shape, low, high):
    """Uniform floats in ``[low, high)`` (scalars of the sample dtype), as an array of ``shape`` and its flat view.

    The samplers below map the draws in a second loop: one loop doing both runs twice as long.
    """
    out = np.empty(shape, type(low))
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = _scaled(unit(key, i, low), low, high)
    return out, flat


@njit(cache=True)
def normal_kernel(key, shape, dtype):
    """``jax.random.normal`` for a real ``dtype``."""
    low, one, sqrt2 = _normal_constants(dtype(0))
    out, flat = _uniform_between(key, shape, low, one)
    for i in range(flat.size):
        flat[i] = sqrt2 * ew.erf_inv(flat[i])
    return out


@njit(cache=True)
def exponential_kernel(key, shape, dtype):
    """``jax.random.exponential``: ``-log1p(-u)``."""
    out, flat = _uniform_between(key, shape, dtype(0), dtype(1))
    for i in range(flat.size):
        flat[i] = -ew.log1p(-flat[i])
    return out


@njit(cache=True, inline="always")
def standard_gumbel(key, shape, zero):
    """``jax.random.gumbel`` in ``zero``'s type (mode ``"low"``, JAX's default): ``-log(-log(u))`` for ``u`` in
    ``[tiny, 1)``."""
    out, flat = _uniform_between(key, shape, ew.tiny(zero), ew.as_type_of(1.0, zero))
    for i in range(flat.size):
        flat[i] = -ew.log(-ew.log(flat[i]))
    return out


@njit(cache=True)
def gumbel_kernel(key, shape, dtype):
    """``jax.random.gumbel`` for a real ``dtype``."""
    return standard_gumbel(key, shape, dtype(0))


@njit(cache=True, inline="always")
def broadcast_flat(value, shape, dtype):
    """A parameter in ``dtype``, flattened, and its index step over a flat sample of ``shape``: 0 for one value.

    Raises ``ValueError`` where the parameter does not broadcast to exactly ``shape``.
    """
    array = np.asarray(value).astype(dtype)
    if array.ndim == 0:
        return array.reshape(1), 0
    return np.ascontiguousarray(np.broadcast_to(array, shape)).reshape(-1), 1


@njit(cache=True)
def truncated_normal_kernel(key, shape, dtype, lower, upper):
    """``jax.random.truncated_normal``: ``lower``, ``upper`` numbers or arrays broadcasting to ``shape``.

    A uniform draw between ``erf(lower / sqrt(2))`` and ``erf(upper / sqrt(2))``, mapped back by
    ``sqrt(2) * erf_inv`` and clipped into the open interval.
    """
    (lows, low_step), (highs, high_step) = broadcast_flat(lower, shape, dtype), broadcast_flat(upper, shape, dtype)
    sqrt2 = dtype(math.sqrt(2.0))
    inverse_sqrt2 = dtype(1) / sqrt2  # XLA turns x / sqrt2 into x * (1 / sqrt2)
    erf_lows, erf_highs = np.empty_like(lows), np.empty_like(highs)
    for i in range(lows.size):
        erf_lows[i] = ew.erf(lows[i] * inverse_sqrt2)
    for i in range(highs.size):
        erf_highs[i] = ew.erf(highs[i] * inverse_sqrt2)
    out = np.empty(shape, dtype)
    flat = out.reshape(-1)
    zero = dtype(0)
    for i in range(flat.size):
        flat[i] = _scaled(unit(key, i, zero), erf_lows[i * low_step], erf_highs[i * high_step])
    for i in range(flat.size):
        sample = max(np.nextafter(lows[i * low_step], dtype(np.inf)), sqrt2 * ew.erf_inv(flat[i]))
        flat[i] = min(np.nextafter(highs[i * high_step], dtype(-np.inf)), sample)
    return out


@njit(cache=True, inline="always")
def _split2(key):
    """``jax.random.split(key)``, as two keys."""
    keys = split_kernel(key, (2,))
    return keys[0], keys[1]


@njit(cache=True, error_model="numpy")
def _gamma_one(key, alpha):
    """One Gamma(alpha) sample by Marsaglia and Tsang's method, as ``jax.random._gamma_one`` draws it."""
    zero = alpha - alpha
    one, half, third = ew.as_type_of(1.0, zero), ew.as_type_of(0.5, zero), ew.as_type_of(1.0 / 3.0, zero)
    boost = alpha >= one
    d = (alpha if boost else alpha + one) - third
    c = third * ew.rsqrt(d)  # XLA turns third / sqrt(d) into third * rsqrt(d)
    key, subkey = _split2(key)
    normal_constants = _normal_constants(zero)
    x2, v3, u = zero, one, one + one
    while u >= ew.fma(-ew.as_type_of(0.0331, zero), x2 * x2, one) and \
            ew.log(u) >= ew.fma(x2, half, d * ((one - v3) + ew.log(v3))):
        keys = split_kernel(key, (3,))
        key, x_key = keys[0], keys[1]
        x, v = zero, -one
        while v <= zero:
            x_key, sample_key = _split2(x_key)
            x = _normal(sample_key, 0, normal_constants)
            v = ew.fma(x, c, one)
        x2, v3, u = x * x, v * v * v, unit(keys[2], 0, zero)
    scale = one if boost else ew.as_type_of(math.pow(one - unit(subkey, 0, zero), one / alpha), zero)
    return d * v3 * scale


@njit(cache=True)
def gamma_kernel(key, shape, dtype, a):
    """``jax.random.gamma``: ``a`` a number or an array broadcasting to ``shape``; one key per element.

    Raises ``ValueError`` for ``a <= 0``, where JAX's rejection loop would never end.
    """
    alphas, step = broadcast_flat(a, shape, dtype)
    for i in range(alphas.size):
        if not alphas[i] > 0:
            raise ValueError("numbax.random.gamma: the shape parameter a must be positive")
    out = np.empty(shape, dtype)
    flat = out.reshape(-1)
    keys = split_kernel(key, (flat.size,))
    for i in range(flat.size):
        flat[i] = _gamma_one(keys[i], alphas[i * step])
    return out
