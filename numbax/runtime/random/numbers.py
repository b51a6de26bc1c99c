"""numbers: one key or one number drawn from a key, what one GPU thread calls for one example's draws.

A kernel of the GPU backend cannot allocate, so ``vmap`` of scalar code that draws (``backends.cuda.lower.keys``)
holds a key as a pair of ``uint32`` words and calls these instead of the kernels of ``continuous`` and
``discrete``. Each repeats its kernel's arithmetic for element 0 of a sample of shape ``()``, from the same
functions (``threefry``, ``elementwise``), so a thread's numbers are the CPU backend's bits. A split key's row
``j`` is ``hash_index(key, j)`` whatever the number of rows (the counters of a partitionable split).

    >>> import numpy as np
    >>> key = (np.uint32(0), np.uint32(0))
    >>> key_at(key, 1), normal_number(key_at(key, 1), 0.0)
    ((928981903, 3453687069), -1.400884102827668)
"""
from __future__ import annotations

import numpy as np
from numba import njit

from numbax.runtime.random import elementwise as ew
from numbax.runtime.random.continuous import _normal, _normal_constants, _scaled, unit
from numbax.runtime.random.threefry import _MASK, _THIRTY_TWO, hash_index, threefry2x32


@njit(cache=True)
def key_at(key, row):
    """Row ``row`` of ``split(key, n)`` for any ``n`` above it: a key, as a pair of ``uint32`` words."""
    b0, b1 = hash_index(key, row)
    return np.uint32(b0), np.uint32(b1)


@njit(cache=True)
def folded_key(key, data):
    """``fold_in(key, data)`` (``threefry.fold_in_kernel``) as a pair of ``uint32`` words."""
    b0, b1 = threefry2x32(np.uint64(key[0]), np.uint64(key[1]), np.uint64(0), np.uint64(data))
    return np.uint32(b0), np.uint32(b1)


@njit(cache=True)
def seed_key(seed, wide):
    """``PRNGKey(seed)`` (``threefry.key_kernel``) as a pair of ``uint32`` words."""
    value = np.uint64(seed) if wide else np.uint64(np.uint32(seed))
    return np.uint32(value >> _THIRTY_TWO), np.uint32(value & _MASK)


@njit(cache=True)
def normal_number(key, zero):
    """``normal(key, (), dtype)`` in ``zero``'s type (``continuous.normal_kernel``)."""
    return _normal(key, 0, _normal_constants(zero))


@njit(cache=True)
def uniform_number(key, minval, maxval):
    """``uniform(key, (), dtype, minval, maxval)`` for bounds of the sample's type (``continuous.uniform_kernel``)."""
    return _scaled(unit(key, 0, minval), minval, maxval)


@njit(cache=True)
def exponential_number(key, zero):
    """``exponential(key, (), dtype)`` in ``zero``'s type (``continuous.exponential_kernel``)."""
    return -ew.log1p(-_scaled(unit(key, 0, zero), zero, ew.as_type_of(1.0, zero)))


@njit(cache=True)
def gumbel_number(key, zero):
    """``gumbel(key, (), dtype)`` in ``zero``'s type (``continuous.standard_gumbel``)."""
    low = ew.tiny(zero)
    return -ew.log(-ew.log(_scaled(unit(key, 0, low), low, ew.as_type_of(1.0, zero))))


@njit(cache=True)
def bernoulli_number(key, p):
    """``bernoulli(key, p, ())`` for a float ``p`` (``discrete.bernoulli_kernel``)."""
    return unit(key, 0, p) < p


@njit(cache=True)
def bits_number(key, wide):
    """``bits(key, (), uint64 if wide else uint32)`` (``threefry.bits_kernel``), in ``uint64``."""
    b0, b1 = hash_index(key, 0)
    return (b0 << _THIRTY_TWO) | b1 if wide else b0 ^ b1
