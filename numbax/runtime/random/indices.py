"""indices: Numba kernels that draw which entries a permutation or a choice takes, JAX's bit for bit."""
from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.core.errors import TypingError
from numba.np.numpy_support import as_dtype

from numbax.runtime.cached import overload
from numbax.runtime.random import elementwise as ew
from numbax.runtime.random.continuous import standard_gumbel, unit
from numbax.runtime.random.discrete import randint_kernel
from numbax.runtime.random.threefry import bits_kernel, split_kernel

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@njit(cache=True, inline="always")
def _rounds(size):
    """How many rounds of sorting by random 32-bit keys JAX's shuffle of ``size`` elements takes."""
    return int(math.ceil(3 * math.log(max(1, size)) / math.log(2.0 ** 32 - 1)))


@njit(cache=True)
def permutation_kernel(key, n):
    """``jax.random.permutation(key, n)``: sort ``arange(n)`` by random 32-bit keys, in as many rounds as JAX."""
    order = np.arange(np.int64(n))
    for _ in range(_rounds(n)):
        keys = split_kernel(key, (2,))
        key = keys[0]
        order = order[np.argsort(bits_kernel(keys[1], (order.size,), np.uint32), kind="mergesort")]
    return order


@njit(cache=True)
def shuffle_kernel(key, shape, axis):
    """Where each element of ``jax.random.permutation(key, x, axis, independent=True)`` comes from, as flat
    indices into ``x`` (of ``shape``): every slice along ``axis`` sorted by its own random 32-bit keys."""
    n, outer, inner = shape[axis], 1, 1
    for d in range(len(shape)):
        if d < axis:
            outer *= shape[d]
        elif d > axis:
            inner *= shape[d]
    source = np.arange(outer * n * inner).reshape((outer, n, inner))
    for _ in range(_rounds(source.size)):
        keys = split_kernel(key, (2,))
        key = keys[0]
        sort_keys = bits_kernel(keys[1], shape, np.uint32).reshape((outer, n, inner))
        for o in range(outer):
            for i in range(inner):
                source[o, :, i] = source[o, :, i][np.argsort(sort_keys[o, :, i], kind="mergesort")]
    return source.reshape(shape)


@njit(cache=True, inline="always")
def _draw_count(shape, n, replace):
    """How many entries a choice of ``shape`` draws from ``n``, checked as ``check_choice_counts`` checks."""
    draws = np.empty(shape, np.bool_).size
    if draws > 0 and n <= 0:
        raise ValueError("numbax.random.choice: a must be positive unless no samples are taken")
    if not replace and draws > n:
        raise ValueError("numbax.random.choice: cannot take more samples than there are entries without replacement")
    return draws


@njit(cache=True)
def choice_kernel(key, shape, n, replace):
    """Which of ``n`` entries ``jax.random.choice(key, n, shape, replace)`` draws: int64 indices of ``shape``.

    With replacement, ``randint(key, shape, 0, n)``; without, the first of a permutation of ``n``.
    """
    draws = _draw_count(shape, n, replace)
    if replace:
        return randint_kernel(key, shape, np.int64, np.zeros((), np.int64), np.full((), n, np.int64),
                              np.zeros((), np.bool_))
    return np.ascontiguousarray(permutation_kernel(key, n)[:draws]).reshape(shape)


def inexact_type(dtype) -> np.dtype:
    """The float dtype to draw with weights or logits of ``dtype``: their own for floats, float64 for integers and
    booleans (``numbax.random`` refuses floats other than float32 and float64 at the user's call)."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def as_inexact(values):
    """``values`` as an array of the float type drawn with them (``inexact_type``)."""
    array = np.asarray(values)
    return array.astype(inexact_type(array.dtype))


@overload(as_inexact)
def _as_inexact_typed(values):
    """Numba: the float type chosen while typing, by the same rule; float32 or float64 only."""
    if not isinstance(values, types.Array):
        return None
    dtype = inexact_type(as_dtype(values.dtype))
    if dtype not in FLOAT_DTYPES:
        raise TypingError(f"numbax.random.choice draws with float32 or float64 weights, not {dtype}")
    return lambda values: values.astype(dtype.type)


@njit(cache=True)
def weighted_choice_kernel(key, shape, n, replace, p):
    """Which of ``n`` entries ``jax.random.choice(key, n, shape, replace, p)`` draws, by the weights ``p``.

    With replacement, where ``1 - u`` of the total weight falls among the cumulative weights; without,
    the largest ``gumbel + log(p)``. The draws are in the float type of the weights (``as_inexact``).
    """
    draws = _draw_count(shape, n, replace)
    weights = as_inexact(p).reshape(-1)
    if weights.size != n:
        raise ValueError("numbax.random.choice: p must hold one weight per entry of a")
    zero = np.zeros(1, weights.dtype)[0]
    if replace:
        cumulative = np.cumsum(weights)
        out = np.empty(shape, np.int64)
        flat = out.reshape(-1)
        for i in range(flat.size):
            flat[i] = np.searchsorted(cumulative, cumulative[-1] * (ew.as_type_of(1.0, zero) - unit(key, i, zero)))
        return out
    noise = standard_gumbel(key, (n,), zero)
    for i in range(n):
        noise[i] = -(noise[i] + ew.log(weights[i]))
    return np.ascontiguousarray(np.argsort(noise, kind="mergesort")[:draws]).reshape(shape)
