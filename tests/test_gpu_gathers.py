"""Advanced indexing on the GPU backend, in Numba's CUDA simulator: gathers by integer arrays and boolean masks,
stores through them, and reverse mode's ``np.add.at`` (atomic additions) agree with NumPy and the CPU backend;
an index out of bounds is NumPy's ``IndexError``; what the GPU backend cannot do exactly is refused at the
user's line (repeated positions of a store, at run time)."""
import inspect
import os
import sys

import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402  (JAX in float64)
import jax  # noqa: E402

HERE = os.path.abspath(__file__)
X, A = np.linspace(-1.0, 1.0, 6), np.arange(12.0).reshape(3, 4) - 5.0
ROWS, COLS = np.array([0, 2, -1]), np.array([3, 0, 3])


def gathers(x, a, idx):
    y = x * 1.0
    y[y < 0.0] = 0.0
    b = a * 1.0
    b[ROWS, COLS] += x[:3]
    z = x * 2.0
    z[idx] = -1.0
    return x[idx] * 2.0, a[ROWS, COLS], a[1:, idx[:2]], np.tanh(x[~(x > 0.5)]), y, b, z, a[a > 2.0]


def loss(x, a, idx):
    return np.sum(x[idx] ** 2) + np.sum(np.sin(a[a > 0.0])) + np.sum(a[idx[:2]] * a[ROWS[:2]])


@pytest.fixture(scope="module")
def jitted(gpu):
    return numbax.jit(gathers, backend="gpu")


@pytest.fixture(scope="module")
def grad_on_gpu(gpu):
    return numbax.grad(loss, argnums=(0, 1), backend="gpu")


def test_gathers_masks_and_stores_agree_with_numpy(jitted):
    idx = np.array([3, 0, 3, -2])
    got = numbax.device_get(jitted(X, A, idx))
    for e, g in zip(gathers(X, A.copy(), idx), got):
        assert np.asarray(g).dtype == e.dtype and np.shape(g) == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=0)


def test_repeated_indices_accumulate_in_reverse_mode(grad_on_gpu):
    idx = np.array([1, 1, 4, 1])  # x[1] gathered three times: its cotangents add up
    # JAX is the oracle: the CPU backend cannot index by a 2-d mask (Numba's fancy indexing asserts)
    expected = jax.grad(to_jax(loss), argnums=(0, 1))(X, A, idx)
    got = numbax.device_get(grad_on_gpu(X, A, idx))
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, np.asarray(e), rtol=1e-12, atol=0)
    assert got[0][1] == pytest.approx(6 * X[1], rel=1e-12)


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("idx, message", [
    (np.array([0, 6]), "index 6 is out of bounds for axis 0 with size 6"),
    (np.array([-7, 0]), "index -7 is out of bounds for axis 0 with size 6"),
])
def test_an_index_out_of_bounds_is_numpys_index_error(jitted, idx, message):
    with pytest.raises(numbax.NumbaxIndexError, match=message) as info:
        jitted(X, A, idx)
    assert info.value.origin.filename == HERE and info.value.origin.lineno == _line(gathers, "z[idx] =")


def masked(x, m):
    return x[m] * 2.0


def stored(x, idx):
    y = x * 1.0
    y[idx] = x[:2]
    return y


def zero_negatives(x):
    x[x < 0.0] = 0.0


def test_a_masked_store_writes_a_host_argument(gpu):
    x, expected = X.copy(), X.copy()
    zero_negatives(expected)
    assert numbax.jit(zero_negatives, backend="gpu")(x) is None
    np.testing.assert_array_equal(x, expected)


def test_a_mask_of_another_shape_is_numpys_index_error(gpu):
    with pytest.raises(numbax.NumbaxIndexError, match="boolean index did not match indexed array along axis 0; "
                                                      "size of axis is 6 but size of corresponding boolean axis is 5"):
        numbax.jit(masked, backend="gpu")(X, np.ones(5, bool))


def test_a_store_at_repeated_positions_is_refused_at_the_users_line(gpu):
    on_gpu = numbax.jit(stored, backend="gpu")
    np.testing.assert_array_equal(numbax.device_get(on_gpu(X, np.array([3, 1]))), stored(X, np.array([3, 1])))
    with pytest.raises(numbax.NumbaxDeviceError, match="a store at repeated positions") as info:
        on_gpu(X, np.array([3, -3]))
    assert info.value.origin.filename == HERE and info.value.origin.lineno == _line(stored, "y[idx] =")


def apart(t, i):
    return t[i, :, i] * 2.0


def two_d_index(x, j):
    return x[j] * 2.0


@pytest.mark.parametrize("fn, args, construct", [
    (apart, (np.ones((2, 3, 2)), np.array([0, 1])), "by index arrays apart from each other"),
    (two_d_index, (X, np.array([[0, 1]])), "by other than 1-d integer arrays or one boolean mask"),
], ids=lambda v: getattr(v, "__name__", None))
def test_what_has_no_exact_lowering_is_refused_at_the_users_line(gpu, fn, args, construct):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.jit(fn, backend="gpu")(*args)
    assert construct in info.value.message, info.value.message
    assert info.value.origin.filename == HERE and info.value.origin.lineno == _line(fn, "return")
