"""threefry: the Threefry-2x32 hash and the key operations JAX builds on it, as Numba kernels.

Everything here follows ``jax._src.random.threefry2x32`` with ``jax_threefry_partitionable``
on (the default since JAX 0.5): the counter of element ``i`` of an output of any shape is
the 64-bit integer ``i`` split into two 32-bit words, so an element's bits depend only on
the key and its flat index. Words are held in ``uint64`` scalars below 2**32 (Numba widens
``uint32`` arithmetic to 64 bits) and masked after each addition and rotation.

The samplers call these functions rather than have Numba's IR inliner (``inline="always"``) copy them in,
which typed the twenty rounds again in every kernel and signature (nearly half of the samplers' compile
time); LLVM inlines the calls from optimization level 1.

    >>> import numpy as np
    >>> split_kernel(np.array([0, 0], np.uint32), (2,))
    array([[1797259609, 2579123966],
           [ 928981903, 3453687069]], dtype=uint32)
"""
from __future__ import annotations

import numpy as np
from numba import njit

_MASK = np.uint64(0xFFFFFFFF)
_PARITY = np.uint64(0x1BD11BDA)
_THIRTY_TWO = np.uint64(32)
_ROTATIONS_A = (np.uint64(13), np.uint64(15), np.uint64(26), np.uint64(6))
_ROTATIONS_B = (np.uint64(17), np.uint64(29), np.uint64(16), np.uint64(24))


@njit(cache=True)
def _rounds(x0, x1, rotations):
    """Four mix rounds of Threefry: add, rotate left, xor."""
    for r in rotations:
        x0 = (x0 + x1) & _MASK
        x1 = ((x1 << r) | (x1 >> (_THIRTY_TWO - r))) & _MASK
        x1 ^= x0
    return x0, x1


@njit(cache=True)
def threefry2x32(k0, k1, x0, x1):
    """Threefry-2x32 with 20 rounds: hash the counter ``(x0, x1)`` under the key ``(k0, k1)``.

    All four arguments and both results are integers below 2**32 held in ``uint64``.
    """
    ks2 = k0 ^ k1 ^ _PARITY
    x0 = (x0 + k0) & _MASK
    x1 = (x1 + k1) & _MASK
    x0, x1 = _rounds(x0, x1, _ROTATIONS_A)
    x0, x1 = (x0 + k1) & _MASK, (x1 + ks2 + np.uint64(1)) & _MASK
    x0, x1 = _rounds(x0, x1, _ROTATIONS_B)
    x0, x1 = (x0 + ks2) & _MASK, (x1 + k0 + np.uint64(2)) & _MASK
    x0, x1 = _rounds(x0, x1, _ROTATIONS_A)
    x0, x1 = (x0 + k0) & _MASK, (x1 + k1 + np.uint64(3)) & _MASK
    x0, x1 = _rounds(x0, x1, _ROTATIONS_B)
    x0, x1 = (x0 + k1) & _MASK, (x1 + ks2 + np.uint64(4)) & _MASK
    x0, x1 = _rounds(x0, x1, _ROTATIONS_A)
    return (x0 + ks2) & _MASK, (x1 + k0 + np.uint64(5)) & _MASK


@njit(cache=True)
def hash_index(key, index):
    """The two words of element ``index`` of a partitionable random-bits array under ``key``."""
    i = np.uint64(index)
    return threefry2x32(np.uint64(key[0]), np.uint64(key[1]), i >> _THIRTY_TWO, i & _MASK)


@njit(cache=True)
def split_kernel(key, shape):
    """``jax.random.split(key, shape)``: an array of keys of shape ``(*shape, 2)``."""
    out = np.empty((*shape, 2), np.uint32)
    pairs = out.reshape((-1, 2))
    for i in range(pairs.shape[0]):
        b0, b1 = hash_index(key, i)
        pairs[i, 0] = b0
        pairs[i, 1] = b1
    return out


@njit(cache=True)
def fold_in_kernel(key, data):
    """``jax.random.fold_in(key, data)`` for ``0 <= data < 2**32``: the hash of the counter ``(0, data)``."""
    b0, b1 = threefry2x32(np.uint64(key[0]), np.uint64(key[1]), np.uint64(0), np.uint64(data))
    out = np.empty(2, np.uint32)
    out[0] = b0
    out[1] = b1
    return out


@njit(cache=True)
def bits_kernel(key, shape, dtype):
    """``jax.random.bits(key, shape, dtype)`` for an unsigned ``dtype`` of 8, 16, 32 or 64 bits.

    A 64-bit element is the first word shifted above the second; narrower ones are the low
    bits of the two words xor-ed.
    """
    out = np.empty(shape, dtype)
    flat = out.reshape(-1)
    wide = flat.itemsize == 8
    for i in range(flat.size):
        b0, b1 = hash_index(key, i)
        flat[i] = (b0 << _THIRTY_TWO) | b1 if wide else b0 ^ b1
    return out


@njit(cache=True)
def key_kernel(seed, wide):
    """``jax.random.PRNGKey(seed)`` of an integer seed known at run time: its high and low words, the seed taken
    in two's complement of 64 bits (``wide``) or of 32 (seeds of 32 bits or fewer, whose high word is 0)."""
    value = np.uint64(seed) if wide else np.uint64(np.uint32(seed))
    out = np.empty(2, np.uint32)
    out[0] = np.uint32(value >> _THIRTY_TWO)
    out[1] = np.uint32(value & _MASK)
    return out
