"""Basic indexing on the GPU backend, in Numba's CUDA simulator: elements read on the host, slices, rows, new
axes (``None``, ``...``) and transposes as views that kernels read through their strides, stores (``x.at[idx]``
updates, stores into arguments), the run-time index checks of device arrays; agrees with the CPU backend
(values, dtypes, errors), and what is not basic indexing is refused at the user's line."""
import inspect
import os

import numpy as np
import pytest

import numbax
from gpu_agreement import agree_on_device

HERE = os.path.abspath(__file__)
X, M = np.linspace(0.0, 1.0, 6), np.arange(12.0).reshape(3, 4)


def indexes(x, i, m):
    a = x[i] * 2.0
    b = x[1:4] + x[:3]
    c = m[1] * a
    d = m[:, 0] + m[0, 1] + m[::2, -1].sum()
    y = x.at[i].set(a + 1.0)
    z = y.at[2:4].add(b[0]).at[-1].multiply(3.0)
    w = m.at[1, 1:3].set(x[:2])
    v = m[:, None, 1:] * x[None, :3] + m[..., -1].sum() + m.T[1, None]
    return b, c, d, z, w, x[-1], v, np.transpose(m)[:, ::-1]


@pytest.fixture(scope="module")
def on_gpu(gpu):
    return numbax.jit(indexes, backend="gpu")


def test_elements_views_and_updates_agree_with_the_cpu_backend(on_gpu):
    expected = numbax.jit(indexes)(X, 2, M)
    got = on_gpu(X, -4, M)
    assert not any(isinstance(leaf, np.ndarray) for leaf in got), "a result on the host"
    for e, g in zip(expected, numbax.device_get(got)):
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_array_equal(g, e)  # copies, sums of two numbers, products: exact on both


def test_an_index_out_of_bounds_is_the_cpu_backends_index_error(on_gpu):
    lines, first = inspect.getsourcelines(indexes)
    with pytest.raises(numbax.NumbaxIndexError, match="index -7 is out of bounds for axis 0 with size 6") as info:
        on_gpu(X, -7, M)
    assert info.value.origin.filename == HERE and info.value.origin.lineno == first + 1


def shift(x):
    y = x * 1.0
    y[1:] = y[:-1]
    return y


def float_index(x, j):
    return np.sin(x[j])


def into_argument(x):
    x[0] = 1.0
    return x * 2.0


def test_an_overlapping_store_is_buffered_and_a_host_argument_written(gpu):
    x = X.copy()
    np.testing.assert_array_equal(numbax.device_get(numbax.jit(shift, backend="gpu")(x)), shift(X))
    expected = X.copy()
    np.testing.assert_array_equal(numbax.device_get(numbax.jit(into_argument, backend="gpu")(x)),
                                  into_argument(expected))
    np.testing.assert_array_equal(x, expected)  # written as the CPU backend writes it


@pytest.mark.parametrize("fn, args, line, construct", [
    (float_index, (X, 1.5), "x[j]", "indexing `x[j]` by `j`"),
], ids=lambda v: getattr(v, "__name__", None))
def test_what_is_not_basic_indexing_is_refused_at_the_users_line(gpu, fn, args, line, construct):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.jit(fn, backend="gpu")(*args)
    lines, first = inspect.getsourcelines(fn)
    assert construct in info.value.message, info.value.message
    assert info.value.origin.filename == HERE
    assert info.value.origin.lineno == first + next(k for k, text in enumerate(lines) if line in text)
    assert "CPU backend" in info.value.hint


def indexed_expressions(x):
    a = np.sin(x)[0]
    b = np.sin(x)[1:, ::2]
    c = np.cos(x)[:, None]
    d = (np.sin(x) * 2.0).T
    e = np.transpose(np.cos(x) + 1.0)[0]
    return np.sum(0.5 + a) + np.sum(0.5 * b) + np.sum(0.5 + c * c) + np.sum(d[0] + 1.0) + np.sum(e * e) + \
        np.sum(np.sin(x).T * x.T)


@pytest.mark.parametrize("transform", [numbax.jit, numbax.grad], ids=["jit", "grad"])
def test_indexing_and_transposing_an_expression_agree_with_the_cpu_backend(gpu, transform):
    """``np.sin(x)[0]``, ``(...).T``, ``(...)[:, None]``: the expression's kernel, then the view (found by the
    differential tester: a folded expression's shape was its operands', so ``grad`` of ``np.sin(x).T`` of a
    3x4 ``x`` seeded a 3x4 cotangent)."""
    x = np.linspace(-1.0, 2.0, 12).reshape(3, 4)
    agree_on_device(transform(indexed_expressions, backend="gpu")(numbax.device_put(x, gpu)),
                    transform(indexed_expressions)(x))


def stored_after(x):
    z = x * 1.0
    y = z * 2.0
    z[0] = 5.0
    return y


def sorted_in_place(x):
    x.sort()
    return np.sum(np.sin(x))


def test_an_expression_is_not_folded_past_a_store_into_an_array(gpu):
    """``y = z * 2.0`` then ``z[0] = 5.0``: ``y``'s kernel runs before the store, not in its reader's after it
    (found by the differential tester: ``grad`` of ``x.sort()`` restored ``x`` from a copy folded past the sort's
    store, so the sort's cotangent was not permuted back)."""
    x = np.arange(4.0)
    agree_on_device(numbax.jit(stored_after, backend="gpu")(numbax.device_put(x, gpu)), stored_after(x.copy()))
    m = np.array([[-2.0, -2.0, -2.0, -2.0], [-2.0, -2.0, -1.75, -2.0]])
    agree_on_device(numbax.grad(sorted_in_place, backend="gpu")(numbax.device_put(m, gpu)),
                    numbax.grad(sorted_in_place)(m.copy()))
