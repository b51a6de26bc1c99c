"""keys: making, splitting and folding data into Threefry keys, as ``jax.random`` does."""
from __future__ import annotations

from typing import Sequence, Union

import numpy as np

from numbax.random.arguments import as_key, as_shape, fail
from numbax.runtime.random.threefry import fold_in_kernel, split_kernel

_INT64_MIN, _UINT64_END, _UINT32_END = -(2 ** 63), 2 ** 64, 2 ** 32


def _seed_value(seed, name: str) -> int:
    """The seed as a Python int, checked the way JAX checks it."""
    if isinstance(seed, (bool, np.bool_)) or np.ndim(seed) != 0 or not np.issubdtype(np.asarray(seed).dtype,
                                                                                     np.integer):
        raise fail(f"numbax.random.{name} takes one integer seed, got {seed!r}",
                   "to make several keys, split one: numbax.random.split(numbax.random.PRNGKey(seed), n)")
    value = int(seed)
    if isinstance(seed, int) and not _INT64_MIN <= value < -_INT64_MIN:
        raise fail(f"numbax.random.{name}: seed {value} does not fit in 64 bits",
                   "reduce it first, e.g. seed % 2**63")
    return value


def PRNGKey(seed: int) -> np.ndarray:
    """A key from an integer seed: the 64-bit seed's high and low words, as a ``uint32`` array of shape ``(2,)``.

    The same key as ``jax.random.PRNGKey(seed)`` with ``jax_enable_x64`` on (numbax computes in
    64 bits, like NumPy). Seeds in ``[0, 2**31)`` give the same key in JAX's default 32-bit mode
    too; there JAX keeps only the low 32 bits of other seeds, so ``-1`` becomes ``[0, 2**32 - 1]``
    instead of ``[2**32 - 1, 2**32 - 1]``.

    Args:
        seed: a Python or NumPy integer; Python ints must lie in ``[-2**63, 2**63)``.

    Returns:
        The key, ``np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32)`` in two's complement of
        the seed's width: 64 bits for Python ints, 32 for ``np.int32`` (whose high word is 0).

    Raises:
        NumbaxRandomArgumentError: the seed is not one integer or does not fit in 64 bits.
    """
    width = _UINT32_END if np.asarray(seed).dtype.itemsize <= 4 and not isinstance(seed, int) else _UINT64_END
    value = _seed_value(seed, "PRNGKey") % width
    return np.array([value >> 32, value % _UINT32_END], np.uint32)


def key(seed: int) -> np.ndarray:
    """``jax.random.key(seed)``: the same raw ``uint32`` key as :func:`PRNGKey`.

    JAX's typed keys carry their implementation in a key dtype, which NumPy arrays cannot
    express; numbax has one implementation (Threefry-2x32), so a typed key is its raw data and
    ``key_data`` returns it unchanged.
    """
    return PRNGKey(seed)


def key_data(keys) -> np.ndarray:
    """``jax.random.key_data(keys)``: the ``uint32`` words of a key, which in numbax is the key itself."""
    return as_key(keys, "key_data")


def split(key, num: Union[int, Sequence[int]] = 2) -> np.ndarray:
    """New keys from ``key``, ``num`` of them (or an array of shape ``num`` of them), stacked on a leading axis.

    Args:
        key: a key from :func:`PRNGKey`, :func:`split` or :func:`fold_in`.
        num: how many keys, or the shape of the array of keys.

    Returns:
        A ``uint32`` array of shape ``(num, 2)`` (``(*num, 2)`` for a tuple), JAX's keys bit for bit.
    """
    return split_kernel(as_key(key, "split"), as_shape(num, "split"))


def fold_in(key, data: int) -> np.ndarray:
    """A new key that depends on ``key`` and the 32-bit integer ``data`` (a step count, a device index).

    Args:
        key: a key.
        data: an integer in ``[0, 2**32)``; NumPy integers are taken modulo 2**32.

    Returns:
        The key ``jax.random.fold_in(key, data)`` returns.
    """
    checked = as_key(key, "fold_in")
    if np.ndim(data) != 0 or not np.issubdtype(np.asarray(data).dtype, np.integer):
        raise fail(f"numbax.random.fold_in folds in one integer, got {data!r}")
    if isinstance(data, int) and not 0 <= data < _UINT32_END:
        raise fail(f"numbax.random.fold_in: data {data} is not a 32-bit unsigned integer",
                   "fold in data % 2**32, or fold in the high and low words one after the other")
    return fold_in_kernel(checked, np.uint32(np.asarray(data).astype(np.uint32)))
