"""The adjoint helpers generated code calls (``rt.unbroadcast``, ``rt.chooser_weights``, the tapes'
``grow_rows`` and ``reserve_rows``, ``rt.index_add``): compiled by Numba, they agree with their NumPy versions.

Compiling dominates, so each test compiles one function per helper signature and checks values only.
"""
import numba
import numpy as np
import pytest

from numbax import runtime as rt

unbroadcast = numba.njit(lambda g, x: rt.unbroadcast(g, x))


@pytest.mark.parametrize("g_shape, x_shape", [
    ((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), (1, 4)), ((3, 4), (3, 1)), ((3, 4), (1, 1)), ((2, 3, 4), (1, 4)),
    ((2, 3, 4), (3, 1)), ((5,), (1,)), ((3, 4), ()),
])
def test_unbroadcast_sums_back_to_the_shape(g_shape, x_shape):
    g = np.arange(np.prod(g_shape), dtype=np.float64).reshape(g_shape) + 0.5
    x = np.ones(x_shape) if x_shape else 1.0
    want = rt.unbroadcast(g, x)
    got = unbroadcast(g, x)
    assert np.shape(got) == np.shape(want) == np.shape(x)
    np.testing.assert_allclose(got, want)


def test_unbroadcast_keeps_the_dtype_of_a_sum_and_copies_strided_input():
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert unbroadcast(ints, 1.0) == 15 and isinstance(unbroadcast(ints, 1.0), (int, np.integer))
    assert unbroadcast(ints > 2, 1.0) == 3
    g = np.arange(12.0).reshape(3, 4)
    assert unbroadcast(g, np.ones((3, 4))) is g  # the same shape: no copy, as from Python
    strided = unbroadcast(g.T, np.ones((4, 3)))
    np.testing.assert_array_equal(strided, g.T)
    assert strided.flags.c_contiguous


def test_chooser_weights_share_ties():
    weights = numba.njit(lambda a, m: rt.chooser_weights(a, m, None, False))
    for a in (np.array([1.0, 3.0, 3.0, 2.0]), np.array([[1.0, 3.0], [3.0, 3.0]])):
        np.testing.assert_allclose(weights(a, a.max()), rt.chooser_weights(a, a.max()))


@pytest.mark.parametrize("dtype", [np.float64, np.bool_, np.int64])
def test_tapes_grow_and_reserve_rows_keep_their_values(dtype):
    table = np.arange(6).reshape(3, 2).astype(dtype)
    grown = numba.njit(lambda t: rt.grow_rows(t))(table)
    assert grown.shape == (6, 2) and grown.dtype == dtype
    np.testing.assert_array_equal(grown[:3], table)
    reserve = numba.njit(lambda t, n: rt.reserve_rows(t, n))
    assert reserve(table, 2) is table
    reserved = reserve(table, 10)
    assert reserved.shape == (10, 2) and reserved.dtype == dtype
    np.testing.assert_array_equal(reserved[:3], table)
    np.testing.assert_array_equal(rt.reserve_rows(table, 10)[:3], table)


def test_index_add_accumulates_repeated_rows():
    index = np.array([0, 2, 0])
    g = np.arange(9.0).reshape(3, 3)
    want = np.zeros((3, 3))
    rt.index_add(want, index, g)
    got = np.zeros((3, 3))
    numba.njit(lambda a, i, v: rt.index_add(a, i, v))(got, index, g)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want[0], g[0] + g[2])
