"""discrete: the Numba kernels of random integers and coin flips, JAX's bit for bit (``numbax.random.discrete``
checks the arguments and calls them)."""
from __future__ import annotations

import numpy as np
from numba import njit

from numbax.runtime.random.continuous import unit
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
