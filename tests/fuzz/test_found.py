"""Regression tests for the failures the differential tester found, each minimized to a few lines.

Each asserts the right value (NumPy's, JAX's convention, or the refusal JAX and NumPy make) and is a
strict xfail until the compiler is fixed; ``KNOWN_FAILURES`` in ``test_fuzz.py`` excludes the same
constructs from the in-suite fuzz test meanwhile. Remove both when a test starts passing.
"""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import numbax

from . import loader

SOURCE = textwrap.dedent('''
    def integer_output(n, y):
        return np.sum(n) * 1


    def bool_output(x):
        return np.sum(x > 0.5)


    def complex_output(x, z):
        return np.sum(x + z)


    def inactive_index_out_of_bounds(n, y):
        return np.sum(y) + n[4]


    def inactive_bad_axis(n, y):
        return np.sum(y) + np.sum(n, axis=1)


    def loop_adds_a_constant(x):
        for row in x:
            x = x + 1.0
        return np.sum(x)


    def loop_rebinds_its_iterable(x):
        for row in x:
            x = x - 0.5
        return np.sum(row * row)


    def overlapping_self_assignment(x):
        x[::-1] = x
        return np.sum(x * np.arange(4.0))


    def numpy_scalar_promotes_float32(x):
        return np.sin(0.5) + x


    def fill_overwrites(x):
        x.fill(0.5)
        return np.sum(x)


    def length_divided_by_zero(x):
        return np.sum(x) + len(x) // 0


    def product(y):
        return np.prod(y)


    def modulus(z):
        return np.sum(np.abs(z))


    def ufunc_of_bool(b):
        return np.sin(b) + np.sin(0.5)


    def divide_by_own_reversal(y):
        y /= y[::-1]
        return y


    def branch_adds_a_constant(x):
        if np.sum(x) > 100.0:
            x = 0.5 + x
        return np.sum(x)


    def compare_with_complex_in_loop(x, y):
        v1 = x
        for row in v1:
            v1 = np.tanh(v1) + (row) >= (y)
        return (row) < (x)


    def dtype_changes_in_some_examples(n, y):
        j = 0
        while j < 1 and np.sum(n) < 0:
            n = n * y
            j += 1
        return n


    def read_past_the_end(y):
        return y[4]


    def stacked_complex(x):
        v1 = x.copy()
        v1.fill(1)
        return np.stack([x, v1], axis=0)


    def sum_of_stacked(x):
        return np.sum(stacked_complex(x))


    def count_after_branch(y):
        if np.sum(0.5) > 0.5:
            v1 = 0.5
        else:
            v1 = 0.5
        return np.sum(y > v1)


    def add_into_float32(x, y):
        x += y
        return 0.5 + x


    def sort_in_place(x):
        y = x * x
        y.sort()
        return np.sum(y * np.arange(4.0))
''')

X = np.array([0.3, -0.7, 1.1, 0.5])
ROWS = np.array([[0.3, -0.7], [1.1, 0.5]])


@pytest.fixture(scope="module")
def found():
    return loader.load(SOURCE)


def test_grad_of_integer_output_raises(found):
    with pytest.raises(TypeError):
        numbax.grad(found.integer_output, argnums=1, backend="python")(np.array([1, 2]), 1.5)


def test_grad_of_bool_output_raises(found):
    with pytest.raises(TypeError):
        numbax.grad(found.bool_output, backend="python")(X)


def test_grad_of_complex_output_raises(found):
    with pytest.raises(TypeError):
        numbax.grad(found.complex_output, backend="python")(X, np.array([1j, 2j, 0, 1]))


@pytest.mark.parametrize("name, error", [
    ("inactive_index_out_of_bounds", IndexError),
    pytest.param("inactive_bad_axis", ValueError, marks=pytest.mark.xfail(strict=True, reason=(
        "grad drops a reduction it needs no derivative of, and NumPy's AxisError with it")))])
def test_grad_keeps_errors_of_inactive_code(found, name, error):
    with pytest.raises((error, numbax.errors.NumbaxError)):
        numbax.grad(getattr(found, name), argnums=1, backend="python")(X, X)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_of_loop_adding_a_constant(found, backend):
    np.testing.assert_allclose(numbax.grad(found.loop_adds_a_constant, backend=backend)(ROWS), np.ones((2, 2)))


@pytest.mark.xfail(strict=True, reason="grad of `for row in x` where the body rebinds x: the adjoint "
                                       "reads rows of the new x, not of the array iterated over")
@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_loop_rebinding_its_iterable(found, backend):
    # Python iterates over the original x: row is its last row, so the gradient is 2 * x[-1] there.
    np.testing.assert_allclose(numbax.grad(found.loop_rebinds_its_iterable, backend=backend)(ROWS),
                               [[0.0, 0.0], [2.2, 1.0]])


@pytest.mark.xfail(strict=True, reason="grad through x[::-1] = x (NumPy copies the overlapping right side) "
                                       "gives zeros")
@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_overlapping_self_assignment(found, backend):
    # x[k] becomes x[3 - k], weighted by k: the gradient is 3 - k.
    np.testing.assert_allclose(numbax.grad(found.overlapping_self_assignment, backend=backend)(X.copy()),
                               [3.0, 2.0, 1.0, 0.0])


@pytest.mark.xfail(strict=True, reason="np.sin(0.5) is an np.float64 (not a weak Python float): NumPy "
                                       "promotes a float32 array to float64 with it, numbax keeps float32")
@pytest.mark.parametrize("transform", ["jit", "vmap"])
def test_numpy_scalar_promotes_float32(found, transform):
    x = X.astype(np.float32)
    make = numbax.jit if transform == "jit" else numbax.vmap
    args = x if transform == "jit" else np.stack([x, x])
    assert make(found.numpy_scalar_promotes_float32, backend="python")(args).dtype == np.float64


def test_grad_through_fill(found):
    np.testing.assert_allclose(numbax.grad(found.fill_overwrites, backend="python")(X.copy()), np.zeros(4))


def test_grad_of_length_divided_by_zero_raises(found):
    with pytest.raises((ZeroDivisionError, numbax.errors.NumbaxError)):
        numbax.grad(found.length_divided_by_zero, backend="python")(X)


@pytest.mark.xfail(strict=True, reason="grad of np.prod divides the product by each element: nan at a zero")
@pytest.mark.parametrize("y, expected", [(np.array([0.0, 2.0, 3.0]), [6.0, 0.0, 0.0]), (np.array(0.0), 1.0)])
def test_grad_of_prod_with_a_zero(found, y, expected):
    np.testing.assert_allclose(numbax.grad(found.product, backend="python")(y), expected)


def test_grad_complex_input_follows_jax(found):
    z = np.array([3 + 4j, 1 - 1j])
    np.testing.assert_allclose(numbax.grad(found.modulus, backend="python")(z), np.conj(z) / np.abs(z))


@pytest.mark.xfail(strict=True, reason="np.sin of a bool array is float16 in NumPy, and np.sin(0.5) an np.float64 "
                                       "that promotes it to float64: python gives float16, cpu computes in float64")
@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_ufunc_of_bool_follows_numpy(found, backend):
    b = np.array([True, False])
    got, expected = numbax.jit(found.ufunc_of_bool, backend=backend)(b), found.ufunc_of_bool(b)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("transform", ["jit", "vmap"])
def test_inplace_update_from_overlapping_view_cpu(found, transform):
    y = np.array([1.0, 2.0, 4.0])
    if transform == "jit":
        got = numbax.jit(found.divide_by_own_reversal, backend="cpu")(y.copy())
    else:
        got = numbax.vmap(found.divide_by_own_reversal, backend="cpu")(np.stack([y, y]))[0]
    np.testing.assert_allclose(got, [0.25, 1.0, 4.0])


def test_grad_through_sort_in_place(found):
    x = np.array([-1.0, 0.0, -0.25, -1.5])
    # y.sort() puts x[k] ** 2 at rank r_k, weighted by r_k.
    np.testing.assert_allclose(numbax.grad(found.sort_in_place, backend="python")(x),
                               2 * x * np.argsort(np.argsort(x * x)))


@pytest.mark.parametrize("transform", ["jit", "vmap"])
def test_index_out_of_bounds_raises_on_cpu(found, transform):
    y = np.array([2, -1, 0, 3])
    make = numbax.jit if transform == "jit" else numbax.vmap
    with pytest.raises((IndexError, numbax.errors.NumbaxError)):
        make(found.read_past_the_end, backend="cpu")(y if transform == "jit" else np.stack([y, y]))


def test_grad_of_branch_adding_a_constant(found):
    np.testing.assert_allclose(numbax.grad(found.branch_adds_a_constant, backend="python")(X), np.ones(4))


def test_cpu_typing_failures_name_the_line(found):
    x, y = np.array([True, True, False, False]), np.array(-1.75 - 0.75j)
    try:
        got = numbax.jit(found.compare_with_complex_in_loop, backend="cpu")(x, y)
    except numbax.errors.NumbaxError as error:
        assert f"{found.__name__}.py:" in str(error), str(error)
    else:
        np.testing.assert_array_equal(got, found.compare_with_complex_in_loop(x, y))


@pytest.mark.xfail(strict=True, reason="vmap of a loop that makes an integer array float in some examples only "
                                       "keeps the integer dtype and truncates those examples")
def test_vmap_of_dtype_changing_loop(found):
    n, y = np.array([[1, 2], [-1, -2]]), np.full((2, 2), 0.5)
    expected = np.stack([found.dtype_changes_in_some_examples(n[k], y[k]) for k in range(2)])
    try:
        got = numbax.vmap(found.dtype_changes_in_some_examples, backend="python")(n, y)
    except numbax.errors.NumbaxError as error:
        assert f"{found.__name__}.py:" in str(error), str(error)
    else:
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_of_complex_output_of_uninferred_dtype_raises(found, backend):
    # np.stack's output dtype is not inferred: the generated code checks it, at the user's line.
    with pytest.raises(TypeError, match=rf"{found.__name__}\.py:\d+.*real-valued outputs.*complex128"):
        numbax.grad(found.sum_of_stacked, backend=backend)(np.array([1 + 2j, -1.5j]))
    np.testing.assert_allclose(numbax.grad(found.sum_of_stacked, backend=backend)(X), np.ones(4))


@pytest.mark.xfail(strict=True, reason="x += y with a float32 array x and a float64 y: NumPy adds in place and x "
                                       "stays float32; numbax rebinds x to the float64 sum")
@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_augmented_assignment_keeps_the_target_dtype(found, backend):
    x, y = np.full((3, 4), -2.0, dtype=np.float32), np.full(4, -2.0)
    expected = found.add_into_float32(x.copy(), y)
    got = numbax.jit(found.add_into_float32, backend=backend)(x.copy(), y)
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_array_equal(got, expected)


def test_grad_of_integer_output_of_uninferred_dtype_raises(found):
    with pytest.raises(TypeError, match=rf"{found.__name__}\.py:\d+.*real-valued outputs.*int64"):
        numbax.grad(found.count_after_branch, backend="python")(np.full((3, 4), -2.0, dtype=np.float32))
