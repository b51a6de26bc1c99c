"""``numbax.random`` in one example's body on the GPU backend, in Numba's CUDA simulator: each thread holds its
keys as pairs of words and draws its numbers by the CPU kernels' own arithmetic, so the samples are the CPU
backend's bits (integers equal, floats to rtol 1e-15); what is not built is refused at the user's line.

The expected values come from the CPU backend for the Monte Carlo path, and from ``numbax.random``'s Python
functions (the kernels the CPU backend calls, checked against JAX in test_random.py) for the rest, per example:
the CPU backend's compile time would dominate. Sizes stay tiny: the simulator runs each thread in Python.
"""
import doctest
import inspect
import os

import numpy as np
import pytest

import numbax
from numbax import random as R
from numbax.runtime.random import numbers

HERE = os.path.abspath(__file__)
KEYS = R.split(R.PRNGKey(0), 3)


def _on_host(out):
    leaves = out if isinstance(out, tuple) else (out,)
    assert not any(isinstance(leaf, np.ndarray) for leaf in leaves), "a result on the host"
    return numbax.device_get(out)


def _agree(got, expected):
    expected = np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-15, atol=0)


def path(key, x0, steps):
    x = x0
    for _ in range(steps):
        key, sub = R.split(key)
        x = x + 0.1 * R.normal(sub) - 0.05 * x
        if x > 2.0:
            break
    return x


def test_a_monte_carlo_path_per_thread_is_the_cpu_backends(gpu):
    x0 = np.array([0.0, 0.5, 1.0])
    expected = numbax.vmap(path, (0, 0, None))(KEYS, x0, 6)
    got = _on_host(numbax.vmap(path, (0, 0, None), backend="gpu")(KEYS, x0, 6))
    _agree(got, expected)
    assert numbax.source(numbax.vmap(path, (0, 0, None), backend="gpu"), KEYS, x0, 6).count("@cuda.jit") == 1


def draws(key, shared, seed, n):
    k1, k2, k3 = R.split(key, 3)
    rows = R.split(k3)
    a = R.uniform(k1, minval=-1.0, maxval=2.0) + R.exponential(k2) + R.gumbel(rows[-1])
    b = R.normal(R.fold_in(rows[0], n), dtype=np.float32) * np.float32(0.5)
    return a, b, R.bernoulli(k1, 0.3), R.bits(k2), R.bits(R.fold_in(shared, seed), dtype=np.uint32), \
        R.normal(R.PRNGKey(seed)) + R.normal(shared)


def test_every_sampler_built_draws_the_cpu_kernels_bits(gpu):
    shared, seeds = R.PRNGKey(7), np.array([3, -1, 2**40])
    got = _on_host(numbax.vmap(draws, (0, None, 0, None), backend="gpu")(KEYS, shared, seeds, 5))
    expected = [np.stack(column) for column in zip(*(draws(k, shared, s, 5) for k, s in zip(KEYS, seeds)))]
    for g, e in zip(got, expected):
        _agree(g, e)


def grad_path(x, key):
    for _ in range(3):
        key, sub = R.split(key)
        x = x * (1.0 + 0.1 * R.normal(sub))
    return x * x


def test_per_example_gradients_through_draws_are_the_cpu_backends(gpu):
    """Reverse mode saves a number drawn in a loop in the loop's table (a sample of shape ``()`` has its dtype),
    one slot per example in device memory: the gradients are the CPU backend's and central differences'."""
    x = np.array([0.5, 1.0, 2.0])
    got = _on_host(numbax.vmap(numbax.grad(grad_path), backend="gpu")(x, KEYS))
    expected = numbax.vmap(numbax.grad(grad_path))(x, KEYS)
    _agree(got, expected)
    h = 1e-6
    central = [(grad_path(v + h, k) - grad_path(v - h, k)) / (2 * h) for v, k in zip(x, KEYS)]
    np.testing.assert_allclose(got, central, rtol=1e-7)


def words(key):
    return key[0] * 1.0


def arithmetic(key):
    k = R.split(key)[0]
    return R.normal(k * k)


def array_sample(key):
    return R.normal(key, (3,)).sum()


def integers(key):
    return R.randint(key, (), 0, 5)


def row_at_run_time(key, j):
    return R.normal(R.split(key, 3)[j])


def _line(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("fn, extra, line, construct", [
    (words, (), "key[0]", "reading the words of the key `key_1`"),
    (arithmetic, (), "k * k", "the key `k` as a number"),
    (array_sample, (), "R.normal", "an array per example (`numbax.random.normal` of shape (3,))"),
    (integers, (), "R.randint", "`numbax.random.randint` in one example's body"),
    (row_at_run_time, (1,), "R.split(key, 3)[j]", "other than by a constant row"),
], ids=lambda v: getattr(v, "__name__", None))
def test_what_is_not_built_is_refused_at_the_users_line(gpu, fn, extra, line, construct):
    in_axes = (0,) + (None,) * len(extra)
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.vmap(fn, in_axes, backend="gpu")(KEYS, *extra)
    error = info.value
    assert construct in error.message, error.message
    assert error.origin is not None and error.origin.filename == HERE
    assert error.origin.lineno == _line(fn, line), error
    assert "CPU backend" in error.hint


def test_keys_of_another_length_are_refused_when_the_kernel_would_read_them(gpu):
    with pytest.raises(numbax.NumbaxShapeError, match=r"a key has shape \(2,\).*\(3, 3\)"):
        numbax.vmap(path, (0, 0, None), backend="gpu")(np.zeros((3, 3), np.uint32), np.zeros(3), 2)


def test_one_threads_draws_are_the_kernels_elements():
    assert doctest.testmod(numbers).failed == 0
