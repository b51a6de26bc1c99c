"""rejection: ``jax.random.poisson``'s transformed rejection (Hörmann's), the sampler of rates of 10 or more.

JAX's ``_poisson_rejection`` draws the whole sample at each step of one loop, from a chain of keys split in
three (the next key, the key of ``u``, the key of ``v``), until every element has been accepted once; and an
element accepted again at a later step takes that step's count (``k_out = select(accept, k, k_out)``). So the
number of steps is the sample's, and each element's count is that of the last step that accepted it: the
kernel runs the steps over the whole sample as JAX does. Elements of rates below 10 take part with the rate
``1e5`` (their counts are Knuth's, but their acceptance decides when the loop ends, as in JAX).

The arithmetic is float32 in XLA's order, a product fused into the sum that consumes it (``fp-contract``),
with XLA's float32 ``log``, ``log1p`` (``elementwise``) and ``lgamma`` (``_lgamma``: XLA's Lanczos
approximation). A decision that falls within rounding of its threshold may still go the other way on
another CPU or where an operation rounds differently from XLA's: counts agree with JAX's but for such rare
draws.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from numbax.runtime.random import elementwise as ew
from numbax.runtime.random.continuous import unit
from numbax.runtime.random.threefry import split_kernel

_F = np.float32
_LANCZOS = np.array([676.520368121885098567009190444019, -1259.13921672240287047156078755283,
                     771.3234287776530788486528258894, -176.61502916214059906584551354,
                     12.507343278686904814458936853, -0.13857109526572011689554707,
                     9.984369578019570859563e-6, 1.50563273514931155834e-7], np.float32)
_BASE = _F(0.99999999999980993227684700473478)
_GAMMA_HALF = _F(7.5)
_LOG_GAMMA_HALF = _F(np.log(7.5))
_LOG_SQRT_TWO_PI = _F((np.log(2.0) + np.log(np.pi)) / 2)
_HALF, _ONE = _F(0.5), _F(1.0)


@njit(cache=True, error_model="numpy")  # a count of -1 divides by zero, its t unread
def _lgamma(x):
    """XLA's float32 ``lgamma`` for ``x >= 0.5`` (a count plus one; the reflection below it is not needed)."""
    z = x - _ONE
    total = _BASE
    for i in range(_LANCZOS.shape[0]):
        total = total + _LANCZOS[i] / (z + _F(i) + _ONE)
    t = _GAMMA_HALF + z
    log_t = _LOG_GAMMA_HALF + ew.log1p(z / _GAMMA_HALF)
    result = ew.fma(z + _HALF - t / log_t, log_t, _LOG_SQRT_TWO_PI) + ew.log(total)
    return np.float32(np.inf) if np.isinf(x) else result


@njit(cache=True, error_model="numpy")  # a count of -1 divides by zero, its t unread
def rejection_counts(key, rates):
    """JAX's ``_poisson_rejection`` of the flat float32 ``rates`` (those below 10, or NaN, replaced by ``1e5``
    as JAX replaces them): the counts, as float32, -1 where nothing was accepted."""
    size = rates.size
    lam = np.empty(size, np.float32)
    for i in range(size):
        lam[i] = rates[i] if rates[i] >= _F(10.0) else _F(1e5)
    log_lam, b, a = np.empty(size, np.float32), np.empty(size, np.float32), np.empty(size, np.float32)
    inv_alpha, v_r = np.empty(size, np.float32), np.empty(size, np.float32)
    for i in range(size):
        log_lam[i] = ew.log(lam[i])
        b[i] = ew.fma(_F(2.53), np.sqrt(lam[i]), _F(0.931))
        a[i] = ew.fma(_F(0.02483), b[i], _F(-0.059))
        inv_alpha[i] = _F(1.1239) + _F(1.1328) / (b[i] - _F(3.4))
        v_r[i] = _F(0.9277) - _F(3.6224) / (b[i] - _F(2.0))
    counts = np.full(size, _F(-1.0))
    accepted = np.zeros(size, np.bool_)
    waiting, chain, zero = size, key, _F(0.0)
    while waiting > 0:
        keys = split_kernel(chain, (3,))
        chain = keys[0]
        for i in range(size):
            u = unit(keys[1], i, zero) - _HALF
            v = unit(keys[2], i, zero)
            shifted = _HALF - abs(u)
            k = np.floor(ew.fma(_F(2.0) * a[i] / shifted + b[i], u, lam[i]) + _F(0.43))
            s = ew.log(v * inv_alpha[i] / (a[i] / (shifted * shifted) + b[i]))
            t = ew.fma(k, log_lam[i], -lam[i]) - _lgamma(k + _ONE)
            reject = k < zero or (shifted < _F(0.013) and v > shifted)
            if (shifted >= _F(0.07) and v <= v_r[i]) or (not reject and s <= t):
                counts[i] = k
                if not accepted[i]:
                    accepted[i] = True
                    waiting -= 1
    return counts
