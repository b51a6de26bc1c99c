"""discrete: random bits, integers and coin flips, JAX's bit for bit."""
from __future__ import annotations

import numpy as np

from numbax.random.arguments import as_key, as_shape, check_broadcast, fail, float_dtype, parameter
from numbax.runtime.random.discrete import bernoulli_kernel, poisson_kernel, randint_kernel
from numbax.runtime.random.threefry import bits_kernel

__all__ = ["bits", "randint", "bernoulli", "poisson"]


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


def poisson(key, lam, shape=None, dtype=None) -> np.ndarray:
    """Poisson counts of rate ``lam``: ``jax.random.poisson``, from the same key JAX's: Knuth's algorithm for
    rates below 10, bit for bit, and JAX's transformed rejection for the others (in float32 as JAX draws
    them, JAX's counts but for draws whose decision falls within rounding of its threshold). Integers: no
    derivative flows to ``lam`` (JAX's is zero).

    Args:
        key: a key.
        lam: rates (a number or an array) broadcast to ``shape``, made float32 as JAX makes them.
        shape: the sample's shape; ``None`` takes ``lam``'s shape.
        dtype: an integer dtype (default int64, as JAX with ``jax_enable_x64``).
    """
    shape, dtype, rates = poisson_arguments(lam, shape, dtype)
    return poisson_kernel(as_key(key, "poisson"), shape, dtype.type, rates)


def poisson_arguments(lam, shape, dtype):
    """``(shape, dtype, rates broadcast to the shape in float32)``: ``poisson``'s checked arguments."""
    dtype = poisson_dtype(dtype)
    rates = np.asarray(lam)
    if rates.dtype.kind not in "iuf":
        raise fail(f"numbax.random.poisson: lam must be a real number or array, got {rates.dtype}")
    shape = as_shape(rates.shape if shape is None else shape, "poisson")
    check_broadcast("poisson", shape, rates.shape)
    return shape, dtype, parameter(rates, np.float32, shape)


def poisson_dtype(dtype) -> np.dtype:
    """``poisson``'s integer dtype (int64 by default)."""
    dtype = np.dtype(np.int64 if dtype is None else dtype)
    if dtype.kind not in "iu":
        raise fail(f"numbax.random.poisson draws integers, not {dtype}", "pass dtype=np.int32 or np.int64")
    return dtype
