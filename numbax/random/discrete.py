"""discrete: random bits, integers and coin flips, JAX's bit for bit."""
from __future__ import annotations

import numpy as np
from numba import njit

from numbax.random.arguments import as_key, as_shape, check_broadcast, fail, float_dtype, parameter
from numbax.random.continuous import unit
from numbax.random.threefry import bits_kernel, hash_index, split_kernel

__all__ = ["bits", "randint", "bernoulli"]

_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


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


def bits(key, shape=(), dtype=None) -> np.ndarray:
    """Uniform random bits as unsigned integers: ``jax.random.bits``.

    Args:
        key: a key.
        shape: the sample's shape.
        dtype: uint8, uint16, uint32 or uint64 (default uint64, as JAX with ``jax_enable_x64``).
    """
    shape, dtype = bits_arguments(shape, dtype)
    return bits_kernel(as_key(key, "bits"), shape, dtype.type)


def bits_arguments(shape, dtype):
    """``(shape, dtype)``: ``bits``'s checked arguments."""
    shape = as_shape(shape, "bits")
    dtype = np.dtype(np.uint64 if dtype is None else dtype)
    if dtype.kind != "u":
        raise fail(f"numbax.random.bits draws unsigned integers, not {dtype}", "pass dtype=np.uint32 or np.uint64")
    return shape, dtype


def _integer_bound(value, name: str) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype == object or array.dtype.kind not in "iufb":
        raise fail(f"numbax.random.randint: {name}={value!r} is not an integer (or does not fit in 64 bits)")
    return array if array.dtype.kind in "iu" else array.astype(np.int64)


def _clip_to(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``values`` clipped to ``dtype``'s range, then converted (JAX's ``_convert_and_clip_integer``)."""
    info = np.iinfo(dtype)
    return np.clip(values, max(info.min, np.iinfo(values.dtype).min), min(info.max, np.iinfo(values.dtype).max)
                   ).astype(dtype)


def randint(key, shape, minval, maxval, dtype=None) -> np.ndarray:
    """Integers in ``[minval, maxval)``: ``jax.random.randint``, bit for bit, with its slight modulo bias.

    Args:
        key: a key.
        shape: the sample's shape.
        minval, maxval: integer bounds that broadcast to ``shape``; ``maxval <= minval`` gives ``minval``.
        dtype: an integer dtype (default int64, as JAX with ``jax_enable_x64``).
    """
    shape, dtype, sampled, bounds = randint_arguments(shape, minval, maxval, dtype)
    return randint_kernel(as_key(key, "randint"), shape, sampled.type, *bounds).astype(dtype)


def randint_arguments(shape, minval, maxval, dtype):
    """``(shape, dtype, sampled dtype, (low, high, too_big))``: ``randint``'s checked arguments, as its kernel
    takes them (dtypes narrower than 32 bits are drawn as int32, as JAX does)."""
    shape = as_shape(shape, "randint")
    dtype = np.dtype(np.int64 if dtype is None else dtype)
    if dtype.kind not in "iu":
        raise fail(f"numbax.random.randint draws integers, not {dtype}", "draw integers, then convert with .astype()")
    low, high = _integer_bound(minval, "minval"), _integer_bound(maxval, "maxval")
    check_broadcast("randint", shape, low.shape, high.shape)
    sampled = dtype
    if dtype.itemsize < 4:
        info, sampled = np.iinfo(dtype), np.dtype(np.int32)
        low = low.astype(np.int32).clip(info.min, info.max)
        high = high.astype(np.int32).clip(info.min, info.max + 1)
    too_big = high > np.iinfo(sampled).max
    return shape, dtype, sampled, (parameter(_clip_to(low, sampled), sampled, shape),
                                   parameter(_clip_to(high, sampled), sampled, shape),
                                   parameter(too_big, np.bool_, shape))


def bernoulli(key, p=0.5, shape=None) -> np.ndarray:
    """Booleans that are ``True`` with probability ``p``: ``jax.random.bernoulli``.

    Args:
        key: a key.
        p: probabilities (a float or an array of float32 or float64) broadcast to ``shape``.
        shape: the sample's shape; ``None`` takes ``p``'s shape.
    """
    shape, probabilities = bernoulli_arguments(p, shape)
    return bernoulli_kernel(as_key(key, "bernoulli"), shape, probabilities)


def bernoulli_arguments(p, shape):
    """``(shape, probabilities broadcast to it)``: ``bernoulli``'s checked arguments, as its kernel takes them."""
    probabilities = np.asarray(p)
    if probabilities.dtype.kind != "f":
        raise fail(f"numbax.random.bernoulli: p must be a float or float array, got {probabilities.dtype}",
                   "pass p as a float, e.g. p=0.5")
    dtype = float_dtype(probabilities.dtype, "bernoulli")
    shape = as_shape(probabilities.shape if shape is None else shape, "bernoulli")
    check_broadcast("bernoulli", shape, probabilities.shape)
    return shape, parameter(probabilities, dtype, shape)
