"""Integer-array and mask indices: checked as NumPy checks them, differentiated with repeated positions.

Found by the GPU engineer's corpus runs: on the CPU an integer-array index out of bounds read past the array
(`x[[0, 7]]` of 5 elements gave a number) and a mask of another length was taken as it was; reverse mode
through `a[r, c]` or `a[1:, idx]` with a repeated position added its cotangent once (2 where JAX gives 4); and
a store `a[[0, 0]] = v` gave both `v[0]` and `v[1]` the stored position's cotangent, where NumPy keeps the
last write only. Gradients and second derivatives are checked against JAX (float64).
"""
from __future__ import annotations

import numpy as np
import pytest

import numbax
from numbax.errors import NumbaxIndexError, NumbaxMaskShapeError

from grad_corpus.oracles import to_jax  # JAX in float64, and a function's source with np as jax.numpy

import jax  # noqa: E402

I2 = np.array([[0, 2], [2, -1]])
R = np.array([0, 0, 2])
C = np.array([1, 1, -1])
IDX = np.array([2, 2, 0])
A = np.arange(12.0).reshape(3, 4) / 7 + 0.1
B = np.arange(24.0).reshape(3, 4, 2) / 9 + 0.2


def gather(x, i):
    return x[i]


def by_a_2d_index(a):
    return np.sum(np.sin(a[I2]) * 3.0)


def by_two_arrays(a):
    return np.sum(a[R, C] ** 2)


def after_a_slice(a):
    return np.sum(a[1:, IDX] ** 3)


def before_a_slice(a):
    return np.sum(a[IDX, 1:] ** 2)


def with_an_integer(a):
    return np.sum(a[R, 0] ** 2)


def apart_by_a_slice(b):
    return np.sum(b[R, :, C] ** 2)


def last_two_axes(b):
    return np.sum(b[:, R, C] ** 2)


def by_lists(a):
    # lists of integers, as NumPy takes them (Numba takes arrays only: numbax passes NumPy's array of each)
    return np.sum(np.sin(a[[1, 1, 0]])) + np.sum(a[[0, 2], [3, 3]] ** 2) + np.sum(np.cos(a[:, [1, 0]]) * a[:, :2])


def by_arrays(a):
    # by_lists as JAX takes it (JAX refuses a list as an index: a TypeError)
    return np.sum(np.sin(a[np.array([1, 1, 0])])) + np.sum(a[np.array([0, 2]), np.array([3, 3])] ** 2) + \
        np.sum(np.cos(a[:, np.array([1, 0])]) * a[:, :2])


def stored_twice(a, v):
    a[np.array([0, 0])] = v
    return np.sum(a * a)


def added_twice(a, v):
    a[np.array([0, 2, 0])] += v
    return np.sum(a * a)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("index, error, message", [
    (np.array([0, 7]), NumbaxIndexError, "index 7 is out of bounds for axis 0 with size 5"),
    (np.array([[0], [-6]]), NumbaxIndexError, "index -6 is out of bounds for axis 0 with size 5"),
    (np.array([True, False, True]), NumbaxMaskShapeError, "boolean index did not match indexed array along axis 0"),
])
def test_an_array_index_is_checked_as_numpy_checks_it(backend, index, error, message):
    with pytest.raises(error, match=r"test_fancy_index_derivatives.py:\d+: " + message):
        numbax.jit(gather, backend=backend)(np.arange(5.0), index)


CASES = [(by_a_2d_index, A, "python"), (by_two_arrays, A, "python"), (after_a_slice, A, "python"),
         (before_a_slice, A, "python"), (with_an_integer, A, "python"), (apart_by_a_slice, B, "python"),
         (last_two_axes, B, "python"), (by_two_arrays, A, "cpu"), (after_a_slice, A, "cpu"),
         (apart_by_a_slice, B, "cpu")]


@pytest.mark.parametrize("fn, x, backend", CASES, ids=[f"{f.__name__}-{b}" for f, _, b in CASES])
def test_repeated_positions_accumulate_to_second_order(fn, x, backend):
    as_jax = to_jax(fn)
    want = jax.grad(as_jax)(x)
    second = jax.jvp(jax.grad(as_jax), (x,), (np.ones_like(x),))[1]
    np.testing.assert_allclose(numbax.grad(fn, backend=backend)(x.copy()), want, rtol=1e-12)
    got = numbax.jvp(numbax.grad(fn, backend=backend), (x.copy(),), (np.ones_like(x),), backend=backend)[1]
    np.testing.assert_allclose(got, second, rtol=1e-12)


def list_stores(a, v):
    a[[2, 0]] = v
    a[[1, 1]] += v  # NumPy adds v[1] once, its last write
    return np.sum(a * a)


def test_lists_as_indices_compile_and_follow_numpy():
    a, v = np.arange(4.0) + 0.5, np.array([1.5, 2.5])
    np.testing.assert_array_equal(numbax.jit(by_lists)(A), by_lists(A))
    want = jax.grad(to_jax(by_arrays))(A)
    np.testing.assert_allclose(numbax.grad(by_lists)(A), want, rtol=1e-12)
    np.testing.assert_allclose(numbax.jvp(by_lists, (A,), (np.ones_like(A),))[1], np.sum(want), rtol=1e-12)
    np.testing.assert_array_equal(numbax.jit(list_stores)(a.copy(), v), list_stores(a.copy(), v))
    grads = numbax.grad(list_stores, argnums=(0, 1))(a.copy(), v)
    python = numbax.grad(list_stores, argnums=(0, 1), backend="python")(a.copy(), v)
    # central differences of NumPy's own function: a[1] gets v[1] once, a[0] and a[2] are overwritten
    step, want = 1e-6, []
    for k, arg in enumerate((a, v)):
        column = np.zeros_like(arg)
        for i in range(arg.size):
            up, down = [c.copy() for c in (a, v)], [c.copy() for c in (a, v)]
            up[k][i] += step
            down[k][i] -= step
            column[i] = (list_stores(*up) - list_stores(*down)) / (2 * step)
        want.append(column)
    for got, py, w in zip(grads, python, want):
        np.testing.assert_allclose(got, w, rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(py, got, rtol=1e-14)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_store_at_a_repeated_position_differentiates_the_last_write(backend):
    a, v = np.arange(4.0) + 0.5, np.array([1.5, 2.5])
    np.testing.assert_array_equal(numbax.grad(stored_twice, argnums=1, backend=backend)(a.copy(), v), [0.0, 5.0])
    hvp = numbax.jvp(numbax.grad(stored_twice, argnums=1, backend=backend), (a.copy(), v), (np.zeros(4), np.ones(2)),
                     backend=backend)[1]
    np.testing.assert_array_equal(hvp, [0.0, 2.0])
    kept = a.copy()
    kept[np.array([0, 2, 0])] += np.array([1.0, 2.0, 3.0])  # a[0] gets v[2] only, as NumPy buffers the update
    da, dv = numbax.grad(added_twice, argnums=(0, 1), backend=backend)(a.copy(), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(da, 2.0 * kept, rtol=1e-14)
    np.testing.assert_allclose(dv, [0.0, 2.0 * kept[2], 2.0 * kept[0]], rtol=1e-14)


MASK = np.array([True, False, True, True])


def by_an_array_and_a_mask(a):
    return np.sum(a[R, MASK] ** 2)


def test_an_index_the_compiled_adjoint_does_not_cover_is_refused_at_the_users_line():
    refusal = r"(?s)test_fancy_index_derivatives.py:\d+: Numba could not compile.*index_add"
    with pytest.raises(numbax.NumbaxTypingError, match=refusal):
        numbax.grad(by_an_array_and_a_mask)(A.copy())
    want = jax.grad(to_jax(by_an_array_and_a_mask))(A)
    np.testing.assert_allclose(numbax.grad(by_an_array_and_a_mask, backend="python")(A.copy()), want, rtol=1e-12)
