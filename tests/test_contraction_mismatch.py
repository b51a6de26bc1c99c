"""Compiled contractions sum an axis of 1 against a longer one only where NumPy does (``einsum``).

``np.tensordot``, ``np.inner``, ``np.dot`` and ``@`` of integers (the runtime's loop nests) broadcast a summed
axis of size 1 against a longer one and returned a result where NumPy raises "shape-mismatch for sum"; the
loop nests now check those axes. ``np.einsum`` broadcasts a size of 1 as NumPy's does.
"""
from __future__ import annotations

import numpy as np
import pytest

import numbax


def tensordot_once(a, b):
    return np.tensordot(a, b, axes=1)


def tensordot_pair(a, b):
    return np.tensordot(a, b, axes=([1], [0]))


def inner_of_transpose(a, b):
    return np.inner(a, b.T)


def dot(a, b):
    return np.dot(a, b)


def matmul(a, b):
    return a @ b


def einsum(a, b):
    return np.einsum("ij,jk->ik", a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
@pytest.mark.parametrize("fn", [tensordot_once, tensordot_pair, inner_of_transpose, dot, matmul],
                         ids=lambda f: f.__name__)
def test_a_summed_axis_of_1_against_a_longer_one_is_numpys_error(fn, dtype):
    a, b = np.ones((3, 1), dtype), np.ones((4, 3), dtype)
    with pytest.raises(ValueError):
        fn(a, b)
    with pytest.raises(ValueError):
        numbax.jit(fn)(a, b)
    good_a = np.arange(12, dtype=dtype).reshape(3, 4)
    np.testing.assert_array_equal(numbax.jit(fn)(good_a, b), fn(good_a, b))


def test_einsum_broadcasts_a_size_of_1_as_numpy_does():
    a, b = np.arange(3.0).reshape(3, 1), np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(numbax.jit(einsum)(a, b), einsum(a, b), rtol=1e-15)
