"""discrete: the Numba kernels of random integers and coin flips, JAX's bit for bit (``numbax.random.discrete``
checks the arguments and calls them)."""
from __future__ import annotations

import numpy as np
from numba import njit

from numbax.runtime.random import elementwise as ew
from numbax.runtime.random.continuous import broadcast_flat, unit
from numbax.runtime.random.rejection import rejection_counts
from numbax.runtime.random.threefry import hash_index, split_kernel


@njit(cache=True, inline="always")
def _word(key, index, wide):
    """Element ``index`` of ``jax.random.bits(key, shape, uint64 if wide else uint32)``, in ``uint64``."""
    b0, b1 = hash_index(key, index)
    return (b0 << np.uint64(32)) | b1 if wide else b0 ^ b1


@njit(cache=True, inline="always")
def _rem(a, b):
    """XLA's unsigned remainder: ``a % 0`` is ``a``."""
    return a if b == 0 else a % b


@njit(cache=True)
def randint_kernel(key, shape, dtype, minval, maxval, maxval_too_big):
    """``jax.random._randint`` for a 32- or 64-bit integer ``dtype``.

    ``minval`` and ``maxval`` are already clipped to ``dtype``; ``maxval_too_big`` says where the
    requested ``maxval`` lay above ``dtype``'s maximum. Two independent words per element, each
    reduced modulo the span and combined, as JAX does to shrink the modulo bias.
    """
    out = np.empty(shape, dtype)
    flat, lows, highs, too_big = out.reshape(-1), minval.reshape(-1), maxval.reshape(-1), maxval_too_big.reshape(-1)
    low_step, high_step, big_step = int(lows.size > 1), int(highs.size > 1), int(too_big.size > 1)
    wide = out.itemsize == 8
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) if wide else np.uint64(0xFFFFFFFF)
    half = np.uint64(1) << np.uint64(32 if wide else 16)
    keys = split_kernel(key, (2,))
    for i in range(flat.size):
        low, high = lows[i * low_step], highs[i * high_step]
        span = (np.uint64(high) - np.uint64(low)) & mask
        if high <= low:
            span = np.uint64(1)
        elif too_big[i * big_step]:
            span = (span + np.uint64(1)) & mask
        multiplier = _rem(half, span)
        multiplier = _rem((multiplier * multiplier) & mask, span)
        offset = (_rem(_word(keys[0], i, wide), span) * multiplier) & mask
        offset = _rem((offset + _rem(_word(keys[1], i, wide), span)) & mask, span)
        flat[i] = (np.uint64(low) + offset) & mask
    return out


@njit(cache=True)
def bernoulli_kernel(key, shape, p):
    """``jax.random.bernoulli``: ``uniform(key, shape, p.dtype) < p``; ``p`` 0-d or of exactly ``shape``.

    A uniform float in ``[0, 1)`` is the unit float itself (``max(0, u * 1 + 0)``).
    """
    probabilities = p.reshape(-1)
    step = int(probabilities.size > 1)
    zero = np.zeros(1, p.dtype)[0]
    out = np.empty(shape, np.bool_)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = unit(key, i, zero) < probabilities[i * step]
    return out


@njit(cache=True)
def poisson_kernel(key, shape, dtype, lam):
    """``jax.random.poisson``: Knuth's algorithm for rates below 10 (and NaN ones), transformed rejection
    (``rejection``) for the others, each from ``key`` as JAX draws them, in float32; a rate of 0 gives 0.
    JAX's Knuth loop draws a whole sample of float32 uniforms per step from one chain of split keys and
    counts, per element, the steps before the running sum of their logs falls to ``-lam``; so an element's
    count is its own, drawn here element by element from the same keys.
    """
    rates, step = broadcast_flat(lam, shape, np.float32)
    out = np.empty(shape, dtype)
    flat = out.reshape(-1)
    every = np.empty(flat.size, np.float32)
    for i in range(flat.size):
        every[i] = rates[i * step]
    large = every >= np.float32(10.0)
    counts = rejection_counts(key, every) if large.any() else every
    zero = np.float32(0.0)
    for i in range(flat.size):
        rate = every[i]
        if large[i]:
            flat[i] = int(counts[i])
            continue
        count, log_product, chain = 0, zero, key
        while log_product > -rate:
            chain, subkey = _split_pair(chain)
            count += 1
            log_product = log_product + ew.log(unit(subkey, i, zero))
        flat[i] = 0 if rate == zero else count - 1
    return out


@njit(cache=True, inline="always")
def _split_pair(key):
    keys = split_kernel(key, (2,))
    return keys[0], keys[1]
