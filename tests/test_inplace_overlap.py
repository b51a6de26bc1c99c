"""``x op= y`` of arrays whose memory overlaps reads ``y`` as it was before the update, as NumPy does,
on both backends (Numba's in-place operators read ``y`` while they write ``x``: ``rt.unaliased``)."""
from __future__ import annotations

import numpy as np
import pytest

import numbax


def divide_by_own_reversal(y):
    y /= y[::-1]
    return y


def add_shifted_view(x):
    v = x[1:]
    v += x[:-1]
    return x


def subtract_transpose(a):
    a -= a.T
    return a


def add_independent(x, y):
    x += y
    return x


CASES = [
    (divide_by_own_reversal, lambda: (np.array([1.0, 2.0, 4.0]),)),
    (add_shifted_view, lambda: (np.array([1.0, 2.0, 4.0, 8.0]),)),
    (subtract_transpose, lambda: (np.arange(9.0).reshape(3, 3),)),
    (add_independent, lambda: (np.arange(4.0), np.ones(4))),
]


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("fn, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_overlapping_in_place_update_is_numpys(fn, make, backend):
    expected = fn(*make())
    np.testing.assert_array_equal(numbax.jit(fn, backend=backend)(*make()), expected)


def test_overlapping_in_place_update_under_vmap_is_numpys():
    ys = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 7.0]])
    expected = np.stack([divide_by_own_reversal(y.copy()) for y in ys])
    np.testing.assert_array_equal(numbax.vmap(divide_by_own_reversal, backend="cpu")(ys.copy()), expected)
