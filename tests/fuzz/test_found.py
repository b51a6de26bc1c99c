"""Regression tests for the failures the differential tester found, each minimized to a few lines.

Each asserts the right value (NumPy's, JAX's convention, or the refusal JAX and NumPy make) and is a
strict xfail until the compiler is fixed; ``KNOWN_FAILURES`` in ``test_fuzz.py`` excludes the same
constructs from the in-suite fuzz test meanwhile. Remove both when a test starts passing.
"""
from __future__ import annotations

import functools
import inspect
import itertools
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


    def complex_output_with_numpy_scalar(x, z):
        return np.sum(np.sin(0.5) + z)


    def inactive_index_out_of_bounds(n, y):
        return np.sum(y) + n[4]


    def inactive_bad_axis(n, y):
        return np.sum(y) + np.sum(n, axis=1)


    def inactive_bad_reshape(n, y):
        return np.sum(y) + np.sum(np.reshape(n, (3, 3)))


    def inactive_shapes_differ(n, y):
        return np.sum(y) + np.sum(n + np.ones(3))


    def loop_adds_a_constant(x):
        for row in x:
            x = x + 1.0
        return np.sum(x)


    def loop_rebinds_its_iterable(x):
        for row in x:
            x = x - 0.5
        return np.sum(row * row)


    def zip_rebinds_its_iterable(x, y):
        s = 0.0
        for i, (a, b) in enumerate(zip(x, y)):
            x = x * 2.0
            s = s + np.sum(a * b) * i
        return s + np.sum(x)


    def overlapping_self_assignment(x):
        x[::-1] = x
        return np.sum(x * np.arange(4.0))


    def overlapping_shift(x):
        x[1:] = x[:-1]
        return np.sum(x * np.arange(4.0))


    def overlapping_strides(x):
        y = x * x
        y[::2] = y[1::2]
        return np.sum(np.sin(y) * np.arange(4.0))


    def overlapping_in_a_loop(x):
        for _ in range(3):
            x[::-1] = x
            x = x * 1.5
        return np.sum(x * np.arange(4.0))


    def view_read_after_its_array_changed(x):
        v = x[:-1]
        x[1:] = v
        return np.sum(v * v)


    def where_of_scalars_after_a_loop(x, y, s):
        j0 = 0
        while j0 < 1 and np.sum(x) < 0.5:
            x = x * s
            j0 += 1
        return np.sum((np.where((0.5) > 0.25, 0.5, s)) + x)


    def write_after_rebinding(x):
        v = x.copy()
        v += 0.5
        v[::2] = 0.5
        return np.sum(v + x)


    def write_into_bool(b, y):
        b[::2] = y
        return np.sum(0.5 + b)


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


    def numpy_scalar_in_a_variable(x):
        s = np.exp(1.0)
        for row in x:
            s = s + 0.0
        return s + x


    def numpy_scalar_compared(x):
        return x > np.float64(0.1)


    def read_scalar_promotes(x, y):
        return y[0] + np.sum(y) * x


    def grad_of_numpy_scalar(x):
        return np.sum((np.sin(0.5) + x) ** 2)


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


    def dtype_changes_in_a_branch(n, y):
        if np.sum(n) < 0:
            n = n * y
        return n


    def summed_dtype_changes_in_some_examples(n, y):
        return np.sum(dtype_changes_in_some_examples(n, y))


    def summed_dtype_changes_in_a_branch(n, y):
        return np.sum(dtype_changes_in_a_branch(n, y))


    def sum_from_zero(x):
        s = 0
        for k in range(x.shape[0]):
            s = s + x[k]
        return s


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


    def floor_division_in_a_branch(x, y, s):
        if np.sum(2.0) > 0.5:
            x = (0.5) // ((0.5) + (x))
        return np.sum((0.5) + x)


    def floor_division_in_a_loop(x):
        for i in range(2):
            x = 0.5 // (0.5 + x)
        return np.sum(0.5 + x)


    def floor_in_a_loop_of_n(x, n):
        for i in range(n):
            x = np.floor(x)
        return np.sum(x * x)


    def ceil_in_a_while_loop(x):
        while np.sum(x) < 3.0:
            x = np.ceil(x) + 1.0
        return np.sum(x * 2.0)


    def promoted_copy_in_a_while_loop(x):
        v1 = x.copy()
        j1 = 0
        while j1 < 1 and np.sum(v1) < 0.5:
            v1 = v1 + np.sin(0.5)
            j1 += 1
        return (0.5) + v1


    def minimum_of_a_counter(x):
        j0 = 0
        while j0 < 1:
            x = x + (0.5) ** 2
            j0 += 1
        v1 = np.maximum(j0, j0)
        return np.minimum(v1, x)


    def plus_a_numpy_integer(x, k):
        return x + np.int64(k)


    def number_or_array_after_a_loop(x, n):
        v1 = 0.5
        for i in range(n):
            v1 = v1 + x[i:i + 2]
        return x + v1


    def where_of_a_number_or_an_array_after_a_loop(x, n):
        v1 = 0.5
        for i in range(n):
            v1 = v1 + x[i:i + 2]
        return np.where((0.5) > 0.25, np.ones((2, 1)), v1) + x


    def sine_of_a_squared_bool(x, y, s):
        v1 = (x) ** 2
        for i in range(0):
            v1 = v1 + x[i:i + 2]
        v2 = 0.5
        v3 = np.sin(np.where((0.5) > 0.25, x, v1))
        return (v3) + x


    def square_of_a_bool(x):
        return x ** 2


    def doubled_bool(x):
        return np.sin(np.where(True, x, x * 2))


    def exp_of_where_int8_or_bool(x):
        return np.exp(np.where(x, x.astype(np.int8), x))


    def sqrt_of_where_bool_or_square(x):
        return np.sqrt(np.where(x, x, x ** 2))


    def cube_of_a_bool(x):
        return np.sin(x ** 3)


    def bool_to_a_run_time_power(x, n):
        return x ** n


    def sum_of_a_number_with_keepdims(x, y, s):
        x[::2] = 0.5
        return np.sum(0.5, keepdims=True)


    def summed_sum_of_a_number_with_keepdims(x, y, s):
        return np.sum(sum_of_a_number_with_keepdims(x, y, s))


    def reductions_of_numbers(x, y, s):
        return (np.sum(s, keepdims=True) + np.prod(y, axis=0) + np.max(s, axis=-1, keepdims=True)
                + np.min(y, axis=None, keepdims=True) + np.mean(s, keepdims=True) + np.sum(np.float64(0.5), axis=0)
                + np.prod(2, axis=-1) + np.max(x[1], axis=0) + np.sum(y, axis=-1) + np.sum(s, axis=0)) * x


    def summed_reductions_of_numbers(x, y, s):
        return np.sum(reductions_of_numbers(x, y, s) * y * s)


    def mean_of_a_number_over_axis_0(x):
        return np.mean(0.5, axis=0)


    def summed_mean_of_a_number_over_axis_0(x):
        return np.sum(mean_of_a_number_over_axis_0(x))


    def reduction_methods_plus_numbers(x):
        return x[:, 0].min(axis=-1) + 0.5, x.sum() + 0.5, x.mean(axis=0) + 0.5, x.prod() * 2, x.max() - 1


    def reciprocal_of_a_maximum(x):
        return 0.5 / np.maximum(x, x * -1.5)


    def reciprocal_of_a_minimum(x, s):
        return 1 / np.minimum(x ** 2, x % s)


    def integers_plus_floats(x, y):
        return y + x, x * y, np.add(y, x), x - y[0]


    def mean_over_zero_after_a_branch(x, y, s):
        if np.sum(y / y) > -1.5:
            x = x[0, 1] - (x > x)
        return np.sum(((x) / (s)).copy().mean())


    def where_of_the_last_element(x):
        for row in x:
            v = row * 2
        return np.sum(np.where(0.5 > 0.25, 0.5, row) + x)


    def sine_of_a_squared_0d_value(x):
        return np.sin(x ** 2)


    def reversed_rows_plus_a_row(x):
        x[::-1] += x[1]
        return 0.5 + x


    def reversed_into_itself(x):
        x[::-1] = x
        return np.sum(np.sum(0.5 + x, axis=1) ** 2)


    def stored_into_integers_of_unknown_kind(x, y):
        y = y + np.float32(0.5)
        v = np.where(y > 0.25, 1, 3).copy()
        v[::-1] = x
        return np.sum(0.5 + v)


    def outer_of_integers(x, y, s):
        x.fill(0.5)
        return np.sum(np.outer(x, x))


    def integer_identity(x, y, s):
        return np.sum(np.eye(3, dtype=np.int64) * 2) + np.sum(np.identity(2, dtype=np.int64) * x[0])


    def trace_of_integers(x, y, s):
        return np.trace(np.outer(x, x)) * 1


    def aliased_in_a_branch_then_updated(x, s):
        if np.sum(0.5) > s:
            v1 = x
        else:
            v1 = x
        x += 0.5
        return x + v1


    def updated_in_place_from_a_wider_dtype(x, y):
        y += x
        return 0.5 + y


    def empty_difference(y):
        return np.diff(y)


    def integers_taken(x, s):
        v1 = np.where(x > 0.25, s, s)
        return np.sum(np.take(v1[1], np.array([0, 2])))


    def integers_flattened_and_summed(x, s):
        return np.sum(np.cumsum(np.where(x > 0.25, s, s)) + np.ravel(np.where(x > 0.5, s, s)))


    def matmul_rank(x, y):
        return np.matmul(x, y).ndim


    def matmul_of_two(x, y):
        return np.matmul(x, y)


    def clipped_by_keywords(x):
        return np.sum(x.clip(max=0.5) + x.clip(min=-0.5) + x.clip(-0.25, max=1.0) + np.clip(x, a_min=0.25, a_max=None))


    def clipped_as_in_jax(x):
        return np.sum(np.clip(x, min=-0.5) + np.clip(x, max=0.5) + np.clip(x, min=-0.25, max=1.0))


    def clipped_bool(y):
        return np.take(y, 1).clip(max=0.5) + y


    def float_sum(x):
        return np.sum(x, dtype=np.float64) + x.sum(0, np.float64)


    def float_cumsum(x):
        return np.cumsum(x, dtype=np.float64)


    def dot_plus(x, s):
        return np.matmul(x, x) + s


    def norm_by(x, order):
        return np.linalg.norm(x, order)


    def norm_of(x):
        return np.linalg.norm(x)


    def norms_of_rows(x):
        return np.linalg.norm(x, ord=1, axis=1) + np.linalg.norm(x, ord=np.inf)


    def sine_of_a_comparison(x):
        return np.sin(0.5 > 0.5) + x


    def angles(x):
        return np.sum(np.angle(x))


    def clip_of(a, low, high):
        return np.clip(a, low, high)


    def cube_roots(x):
        return np.sum(np.cbrt(x))


    def degrees_to_radians(x):
        return np.deg2rad(x)


    def heaviside_of_two(x1, x2):
        return np.heaviside(x1, x2)


    def average_by_last_column(x):
        return np.average(x[:, :3], axis=-1, weights=x[:, -1])


    def unused_average(x):
        unused = np.average(x[:, :3], axis=-1, weights=x[:, -1])
        return x * 2.0


    def heaviside_of_bools(x):
        return np.heaviside(x, x)


    def heaviside_of_bools_and_a_float(x, y):
        return np.heaviside(x, y)


    def kron_of_complex(x):
        return np.sum(np.real(np.kron(x, x)))


    def kron_of_reals(x):
        return np.sum(np.kron(x, x) ** 2)


    def where_of_empty_rows(v, b):
        return np.sum(np.where(b > 0.25, v, b) ** 3)


    def clipped_by_rows(a, b):
        return np.clip(a, 0.0, b), a.clip(b), np.clip(a, np.nan, 2.0)


    def narrow_integers_bounded(x):
        return np.clip(x, 1, 300), np.clip(x, -300, 2), np.where(x > 1, x, 300)


    def narrow_integer_plus_300(x):
        return x + 300


    def average_of(a, w):
        return np.average(a, weights=w)


    def average_of_rows(a, w):
        return np.average(a, axis=-1, weights=w)


    def float_power_of(a, b):
        return np.float_power(a, b)


    def vander_of(x):
        return np.vander(x, 3)


    def compared_beyond_int8(a):
        return a > -129, a == 300, a < 2 ** 40, 300 > a


    def vdot_of(a, b):
        return np.vdot(a, b)


    def less_by(a, k):
        return a - k, np.subtract(a, k)


    def signs_of(a):
        return np.sign(a)


    def read_where_maybe_unassigned(x, c):
        if c > 0:
            a = x * 2.0
        return a + 1.0


    def last_of_a_loop(x, n):
        for i in range(n):
            a = x * i
        return a


    def assigned_after_a_loop_on_one_side(x, n, c):
        for i in range(n):
            a = x * i
        if c > 0:
            a = x
        return a


    def reassigned_to_a_number_on_one_side(x, c, d):
        if c > 0:
            a = x * 2.0
        if d > 0:
            a = 3.0
        return a + x


    def read_in_an_arm(x, c, n):
        if c > 0:
            a = x * 2.0
        i = 0
        while i < n:
            a = a * 1.5 if i > 0 else x * 4.0
            i += 1
        return x + a


    def read_after_an_and(x, c, d):
        if c > 0:
            a = x * 2.0
        b = d > 0 and a > 0.0
        return x * 2.0 if b else x


    def sum_times(x, w):
        return np.sum(x) * w, x * 2.0


    def sum_of_squares(x):
        return np.sum(x ** 2)


    def split_of_a_tile(z):
        return np.sum(np.real(np.sin(np.split(np.tile(z, (1, 2)), 2, axis=1)[0])))


    def split_of_a_squeeze(z):
        return np.sum(np.real(np.split(np.squeeze(z), 2)[0]))


    def squared_in_a_loop(x):
        v = np.matmul(x, x.T)
        for i in range(3):
            v = v + np.matmul(v, v.T)
        return np.sum(v) + np.sum(x)


    def bounded_norm(x, y):
        return np.fmax(0.5, np.linalg.norm(np.triu(y, 1))) + x


    def assigned_and_read_under_one_test(x, c):
        if c > 0:
            a = x * 2.0
        if c > 0:
            y = a * 3.0
        else:
            y = x
        return np.sum(y)


    def average_under_a_branch(x, y):
        if np.sum(x) >= -1.5:
            v = np.average(y, axis=-1, weights=x)
        else:
            v = x * 2.0
        return np.sum(v * v)


    def hypot_of(x, y):
        return np.sum(np.hypot(x, y))


    def products_of(a, b):
        return np.outer(a, b), np.vdot(a, b), np.convolve(a, b), np.dot(a, b), np.inner(a, b)


    def sinc_of(a):
        return np.sinc(a)


    def sorted_along_the_last_axis(a):
        return np.sort(a, axis=-1), np.sort(a, kind="stable"), np.flip(a, axis=None), np.roll(a, 1, axis=None)


    def taken_by_bools(a, i):
        return np.take(a, i)


    def taken_along_by_bools(a, i):
        return np.take_along_axis(a, i, axis=-1)


    def remainders_and_scans(a, b, s):
        return np.fmod(a, b), np.divide(np.int32(3), s), np.cumsum(s), np.cumprod(3), np.abs(np.complex128(s + 2j))


    def indexed_in_a_loop(x):
        for i in range(2):
            x = x + x[i]
        return np.sum(0.5 + x)


    def scaled_in_a_loop(x):
        for i in range(2):
            x = x * np.sin(x[i])
        return np.sum(x ** 2)
''')

X = np.array([0.3, -0.7, 1.1, 0.5])
ROWS = np.array([[0.3, -0.7], [1.1, 0.5]])


def _line(module, text: str) -> int:
    """The line of ``module``'s file that holds ``text``."""
    with open(module.__file__) as f:
        return next(k for k, line in enumerate(f, 1) if text in line)


@pytest.fixture(scope="module")
def found():
    return loader.load(SOURCE)


def test_grad_of_integer_output_raises(found):
    with pytest.raises(TypeError):
        numbax.grad(found.integer_output, argnums=1, backend="python")(np.array([1, 2]), 1.5)


def test_grad_of_bool_output_raises(found):
    with pytest.raises(TypeError):
        numbax.grad(found.bool_output, backend="python")(X)


@pytest.mark.parametrize("name", ["complex_output", "complex_output_with_numpy_scalar"])
def test_grad_of_complex_output_raises(found, name):
    # np.sin(0.5) is spelled np.float64(0.479...) in generated code: grad's output check must know its dtype.
    with pytest.raises(TypeError):
        numbax.grad(getattr(found, name), backend="python")(X, np.array([1j, 2j, 0, 1]))


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("name, error", [
    ("inactive_index_out_of_bounds", IndexError), ("inactive_bad_axis", ValueError),
    ("inactive_bad_reshape", ValueError), ("inactive_shapes_differ", ValueError)])
def test_grad_keeps_errors_of_inactive_code(found, name, error, backend):
    # grad returns no value, but evaluates it: what computing it raises is raised
    with pytest.raises((error, numbax.errors.NumbaxError)):
        numbax.grad(getattr(found, name), argnums=1, backend=backend)(np.arange(4), X)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_of_loop_adding_a_constant(found, backend):
    np.testing.assert_allclose(numbax.grad(found.loop_adds_a_constant, backend=backend)(ROWS), np.ones((2, 2)))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_loop_rebinding_its_iterable(found, backend):
    # Python iterates over the original x: row is its last row, so the gradient is 2 * x[-1] there.
    np.testing.assert_allclose(numbax.grad(found.loop_rebinds_its_iterable, backend=backend)(ROWS),
                               [[0.0, 0.0], [2.2, 1.0]])


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_zip_rebinding_its_iterable(found, backend):
    # the rows of the x and y the loop started with, weighted by their index; x doubled twice
    y = ROWS[::-1].copy()
    got = numbax.grad(found.zip_rebinds_its_iterable, argnums=(0, 1), backend=backend)(ROWS, y)
    np.testing.assert_allclose(got[0], np.array([[0.0], [1.0]]) * y + 4.0)
    np.testing.assert_allclose(got[1], np.array([[0.0], [1.0]]) * ROWS)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_overlapping_self_assignment(found, backend):
    # x[k] becomes x[3 - k], weighted by k: the gradient is 3 - k.
    np.testing.assert_allclose(numbax.grad(found.overlapping_self_assignment, backend=backend)(X.copy()),
                               [3.0, 2.0, 1.0, 0.0])


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("name", ["overlapping_shift", "overlapping_strides", "overlapping_in_a_loop"])
def test_overlapping_writes_follow_numpy(found, name, backend):
    fn = getattr(found, name)
    assert numbax.jit(fn, backend=backend)(X.copy()) == pytest.approx(fn(X.copy()), rel=1e-12)
    got = numbax.grad(fn, backend=backend)(X.copy())
    np.testing.assert_allclose(got, _central_differences(lambda x: fn(x.copy()), X), atol=1e-7)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_of_where_of_scalars_is_a_scalar(found, backend):
    # np.where of scalars is a 0-d array: the cotangent of the scalar s is summed to a scalar, which the
    # loop's cotangent of s adds to (Numba cannot unify a 0-d array and a float); JAX gives the same numbers
    x, y, s = np.full(4, -2.0), np.full((3, 1), -2.0), -2.0
    dx, ds = numbax.grad(found.where_of_scalars_after_a_loop, argnums=(0, 2), backend=backend)(x, y, s)
    np.testing.assert_allclose(dx, np.full(4, -2.0))
    assert np.ndim(ds) == 0 and ds == pytest.approx(-8.0)
    h = 1e-6
    fn = found.where_of_scalars_after_a_loop
    assert ds == pytest.approx((fn(x, y, s + h) - fn(x, y, s - h)) / (2 * h), rel=1e-6)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_of_write_after_rebinding(found, backend):
    # v += 0.5 rebinds v: the write goes into the new v, whose even slots no longer depend on x
    fn = found.write_after_rebinding
    got = numbax.grad(fn, backend=backend)(X.copy())
    np.testing.assert_allclose(got, [1.0, 2.0, 1.0, 2.0])
    np.testing.assert_allclose(got, _central_differences(lambda x: fn(x.copy()), X), atol=1e-7)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_of_write_into_bool_array_is_zero(found, backend):
    # the write casts y to bool: nothing of y's value reaches the output
    b = np.array([False, False, False, False])
    assert numbax.grad(found.write_into_bool, argnums=1, backend=backend)(b, np.array(-2.0)) == 0.0


def test_view_read_after_its_array_changed_is_refused(found):
    with pytest.raises(numbax.errors.NumbaxDifferentiationError, match=r"x\[1:\] = \.\.\..*`v`.*read after"):
        numbax.grad(found.view_read_after_its_array_changed, backend="python")(X.copy())


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("name", ["outer_of_integers", "integer_identity", "trace_of_integers"])
def test_grad_of_an_integer_output_of_outer_or_eye_raises_jaxs_type_error(found, backend, name):
    # np.outer, np.trace, np.eye and np.identity were taken to give floats whatever their operands or dtype:
    # grad returned zeros where JAX raises
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        numbax.grad(getattr(found, name), argnums=(1, 2), backend=backend)(np.array([-2, 1, 3]), X.copy(), 0.5)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_an_alias_read_after_its_array_is_updated_in_place_is_refused_in_both_modes(found, backend):
    # forward mode's `x = x + 0.5` left v1 the old values, where NumPy's v1 sees the update: a wrong jvp
    fn, x = found.aliased_in_a_branch_then_updated, X.copy()
    np.testing.assert_array_equal(numbax.jit(fn, backend=backend)(x.copy(), 0.0), fn(x.copy(), 0.0))
    line = _line(found, "x += 0.5")
    message = rf":{line}: `x \+= \.\.\.` writes into `x`, and `v1` \(`v1 = x`\).*read after"
    with pytest.raises(numbax.errors.NumbaxDifferentiationError, match=message):
        numbax.jvp(fn, (x.copy(), 0.0), (np.ones(4), 0.0), backend=backend)
    with pytest.raises(numbax.errors.NumbaxDifferentiationError, match=message):
        numbax.grad(lambda a: np.sum(fn(a, 0.0)), backend=backend)(x.copy())


def _mapped_over_x(fn, backend: str, transform: str, x, *rest):
    """``jit(fn)(x, *rest)``, or the second example of ``vmap`` over two copies of ``x`` (``rest`` unmapped)."""
    if transform == "jit":
        return numbax.jit(fn, backend=backend)(x, *rest)
    return numbax.vmap(fn, in_axes=(0,) + (None,) * len(rest), backend=backend)(np.stack([x, x]), *rest)[1]


def _value_and_dtype(fn, backend: str, transform: str, *args):
    """``jit(fn)(*args)`` or ``vmap(fn)`` of two copies of each argument (its first example), and NumPy's."""
    if transform == "jit":
        got = numbax.jit(fn, backend=backend)(*args)
    else:
        got = numbax.vmap(fn, backend=backend)(*[np.stack([a, a]) for a in args])[0]
    return np.asarray(got), np.asarray(fn(*args))


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("transform", ["jit", "vmap"])
@pytest.mark.parametrize("name, dtypes", [
    ("numpy_scalar_promotes_float32", (np.float32,)), ("numpy_scalar_promotes_float32", (np.int16,)),
    ("numpy_scalar_in_a_variable", (np.float32,)), ("numpy_scalar_compared", (np.float32,)),
    ("read_scalar_promotes", (np.float32, np.float64)), ("read_scalar_promotes", (np.float64, np.float32))])
def test_numpy_scalar_promotes_float32(found, transform, backend, name, dtypes):
    # np.sin(0.5), np.exp(1.0), np.float64(0.1), y[0] and np.sum(y) are NumPy scalars: strong, unlike 0.5.
    fn = getattr(found, name)
    args = [np.array([0.1, -0.7, 1.1, 0.5]).astype(d) for d in dtypes]
    got, expected = _value_and_dtype(fn, backend, transform, *args)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_with_numpy_scalar_keeps_the_parameters_dtype(found, backend):
    x = X.astype(np.float32)
    got = numbax.grad(found.grad_of_numpy_scalar, backend=backend)(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, 2 * (np.sin(0.5) + X), rtol=1e-6)
    value, _ = numbax.value_and_grad(found.grad_of_numpy_scalar, backend=backend)(x)
    np.testing.assert_allclose(value, found.grad_of_numpy_scalar(x), rtol=1e-6)


def test_grad_through_fill(found):
    np.testing.assert_allclose(numbax.grad(found.fill_overwrites, backend="python")(X.copy()), np.zeros(4))


def test_grad_of_length_divided_by_zero_raises(found):
    with pytest.raises((ZeroDivisionError, numbax.errors.NumbaxError)):
        numbax.grad(found.length_divided_by_zero, backend="python")(X)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("y, expected", [(np.array([0.0, 2.0, 3.0]), [6.0, 0.0, 0.0]),
                                         (np.array([0.0, 2.0, 0.0]), [0.0, 0.0, 0.0]), (np.array(0.0), 1.0)])
def test_grad_of_prod_with_a_zero(found, y, expected, backend):
    got = numbax.grad(found.product, backend=backend)(y)
    np.testing.assert_allclose(got, expected)
    np.testing.assert_allclose(got, _central_differences(found.product, y), atol=1e-8)


def _central_differences(fn, x, h=1e-6):
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros(x.shape)
    for k in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[k] = h
        out[k] = (fn(x + step) - fn(x - step)) / (2 * h)
    return out


def test_grad_complex_input_follows_jax(found):
    z = np.array([3 + 4j, 1 - 1j])
    np.testing.assert_allclose(numbax.grad(found.modulus, backend="python")(z), np.conj(z) / np.abs(z))


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("transform", ["jit", "vmap"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8])
def test_ufunc_of_bool_follows_numpy(found, transform, backend, dtype):
    # NumPy computes np.sin of these in float16, whose rounding no compiled dtype reproduces: refused.
    b = np.array([1, 0, 1]).astype(dtype)
    with pytest.raises(numbax.errors.NumbaxDtypeError, match="float16") as info:
        _value_and_dtype(found.ufunc_of_bool, backend, transform, b)
    assert f"{found.__name__}.py:{_line(found, 'np.sin(b) + np.sin(0.5)')}:" in str(info.value)
    assert ".astype(np.float64)" in str(info.value)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("transform", ["jit", "vmap"])
@pytest.mark.parametrize("dtype", [np.int16, np.uint16])
def test_ufunc_of_int16_is_float32_as_in_numpy(found, transform, backend, dtype):
    b = np.array([1, 0, 3]).astype(dtype)
    got, expected = _value_and_dtype(found.ufunc_of_bool, backend, transform, b)
    assert got.dtype == expected.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-6)


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


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("transform", ["jit", "vmap", "grad"])
@pytest.mark.parametrize("name, line", [
    ("dtype_changes_in_some_examples", "while j < 1 and np.sum(n) < 0:"),
    ("dtype_changes_in_a_branch", "if np.sum(n) < 0:")])
def test_dtype_changing_loop_is_refused(found, transform, backend, name, line):
    # NumPy's dtype after the loop (or branch) depends on the data: int64 for n = [1, 2], float64 for [-1, -2].
    # Compiled code has one dtype per variable, so numbax refuses, as JAX's while_loop and cond do.
    fn = getattr(found, name)
    n, y = np.array([[1, 2], [-1, -2]]), np.full((2, 2), 0.5)
    if transform == "grad":
        fn, make = getattr(found, "summed_" + name), functools.partial(numbax.grad, argnums=1)
    else:
        make = numbax.jit if transform == "jit" else numbax.vmap
    with pytest.raises(numbax.errors.NumbaxDtypeError, match="`n` has dtype int64 or float64") as info:
        make(fn, backend=backend)(*((n, y) if transform == "vmap" else (n[1], y[1])))
    assert f"{found.__name__}.py:{_line(found, line)}:" in str(info.value)
    assert "n = n.astype(np.float64)" in str(info.value)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_loop_summing_floats_from_a_python_int_still_compiles(found, backend):
    # ``s = 0`` is a weak Python int: it takes the floats' dtype, as in NumPy.
    np.testing.assert_allclose(numbax.jit(found.sum_from_zero, backend=backend)(X), np.sum(X))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_of_complex_output_of_uninferred_dtype_raises(found, backend):
    # np.stack's output dtype is not inferred: the generated code checks it, at the user's line.
    with pytest.raises(TypeError, match=rf"{found.__name__}\.py:\d+.*real-valued outputs.*complex128"):
        numbax.grad(found.sum_of_stacked, backend=backend)(np.array([1 + 2j, -1.5j]))
    np.testing.assert_allclose(numbax.grad(found.sum_of_stacked, backend=backend)(X), np.ones(4))


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


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_branch_or_loop_that_rebinds_to_a_value_of_zero_derivative_kills_its_cotangent(found, backend):
    # the branch or loop emitted no adjoint code, so the cotangent of x passed through as if x were unchanged
    grad = functools.partial(numbax.grad, backend=backend)
    np.testing.assert_array_equal(grad(found.floor_division_in_a_branch)(X, X, 1.0), np.zeros(4))
    np.testing.assert_array_equal(grad(found.floor_division_in_a_loop)(X), np.zeros(4))
    np.testing.assert_array_equal(grad(found.floor_in_a_loop_of_n)(X, 2), np.zeros(4))
    np.testing.assert_allclose(grad(found.floor_in_a_loop_of_n)(X, 0), 2 * X)
    np.testing.assert_array_equal(grad(found.ceil_in_a_while_loop)(X), np.zeros(4))
    np.testing.assert_array_equal(grad(found.ceil_in_a_while_loop)(X + 5.0), np.full(4, 2.0))


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("transform", ["jit", "vmap"])
def test_a_copy_keeps_its_dtype_for_the_loops_dtype_check(found, backend, transform):
    # x.copy() of float32 had no inferred dtype, so the loop promoting it to float64 (np.sin(0.5) is a strong
    # NumPy scalar) on some examples went unrefused: vmap gave float32 where NumPy gives float64
    x = np.array([-2.0, -2.0, -2.0, 0.5], dtype=np.float32)
    args = (x,) if transform == "jit" else (np.stack([x, x + 3.0]),)
    with pytest.raises(numbax.NumbaxDtypeError) as info:
        getattr(numbax, transform)(found.promoted_copy_in_a_while_loop, backend=backend)(*args)
    assert f"{found.__name__}.py:{_line(found, 'while j1 < 1 and np.sum(v1)')}:" in str(info.value)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("transform", ["jit", "vmap"])
def test_a_numpy_integer_scalar_promotes_a_float32_array_as_in_numpy(found, backend, transform):
    # np.maximum of Python ints is a (strong) np.int64: with a float32 array NumPy 2 computes in float64,
    # where Numba kept float32
    x = np.array([-2.0, 0.3, 1.7], dtype=np.float32)
    for fn, args in ((found.minimum_of_a_counter, (x,)), (found.plus_a_numpy_integer, (x, 3))):
        expected = fn(*args)
        got = _mapped_over_x(fn, backend, transform, *args)
        assert got.dtype == expected.dtype == np.float64
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("name", ["number_or_array_after_a_loop", "where_of_a_number_or_an_array_after_a_loop"])
def test_a_variable_that_is_a_number_or_an_array_after_a_loop_is_refused(found, backend, name):
    # after no iteration v1 is still the float: code written for the array read ``v1.ndim`` in a broadcast
    # check and cast it with ``v1.astype`` (AttributeError on python), and Numba cannot unify the two (cpu)
    x = np.arange(6.0).reshape(2, 3).astype(np.float32)
    with pytest.raises(numbax.NumbaxSpecializationError,
                       match="`v1` has 0 dimensions before this loop and 2 dimensions after an iteration") as info:
        numbax.jit(getattr(found, name), backend=backend)(x, 0)
    loop_line = inspect.getsourcelines(getattr(found, name))[1] + 2
    assert f"{found.__name__}.py:{loop_line}:" in str(info.value)
    assert "its final shape before the loop" in str(info.value)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("transform", ["jit", "vmap"])
@pytest.mark.parametrize("name, line", [
    ("sine_of_a_squared_bool", "v3 = np.sin(np.where((0.5) > 0.25, x, v1))"),
    ("exp_of_where_int8_or_bool", "np.exp(np.where(x, x.astype(np.int8), x))"),
    ("sqrt_of_where_bool_or_square", "np.sqrt(np.where(x, x, x ** 2))")])
def test_a_squared_bool_array_is_int8_as_in_numpy(found, backend, transform, name, line):
    # NumPy computes ``bool array ** 2`` as np.square (int8), not by promotion with a weak 2 (int64): numbax
    # inferred int64, so np.sin of it, float16 in NumPy, was computed in float64 instead of refused
    fn = getattr(found, name)
    x = np.array([[True, False, True, True], [False, False, True, False], [True, True, True, False]])
    args = (x, None, -2.0) if name == "sine_of_a_squared_bool" else (x,)
    assert np.asarray(fn(*args)).dtype == np.float16
    with pytest.raises(numbax.NumbaxDtypeError, match="float16") as info:
        if transform == "jit":
            numbax.jit(fn, backend=backend)(*args)
        else:
            numbax.vmap(fn, in_axes=(0,) + (None,) * (len(args) - 1), backend=backend)(np.stack([x, x]), *args[1:])
    assert f"{found.__name__}.py:{_line(found, line)}:" in str(info.value)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("transform", ["jit", "vmap"])
@pytest.mark.parametrize("name, dtype", [
    ("square_of_a_bool", np.int8), ("doubled_bool", np.float64), ("cube_of_a_bool", np.float64)])
def test_powers_and_products_of_bools_keep_numpys_dtype(found, backend, transform, name, dtype):
    x = np.array([[True, False, True], [False, True, True]])
    got, expected = _value_and_dtype(getattr(found, name), backend, transform, x)
    assert got.dtype == expected.dtype == dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_bool_array_to_a_run_time_python_int_is_refused(found, backend):
    # NumPy gives int8 for the exponent 2 (np.square) and int64 for others: the dtype is not known at compile time
    with pytest.raises(numbax.NumbaxDtypeError, match="np.square") as info:
        numbax.jit(found.bool_to_a_run_time_power, backend=backend)(np.array([True, False]), 2)
    assert f"{found.__name__}.py:{_line(found, 'return x ** n')}:" in str(info.value)
    np.testing.assert_array_equal(numbax.jit(found.bool_to_a_run_time_power, backend=backend)(
        np.array([1.5, 2.0]), 2), [2.25, 4.0])


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_reduction_of_a_number_with_keepdims(found, backend):
    # rt.sum(0.5, None, True) reached Numba, whose reductions take arrays only (and grad's error named no line)
    x, y, s = np.full(4, -2.0), np.array(-2.0), -2.0
    got = numbax.jit(found.sum_of_a_number_with_keepdims, backend=backend)(x.copy(), y, s)
    assert np.ndim(got) == 0 and got == 0.5
    np.testing.assert_array_equal(
        numbax.grad(found.summed_sum_of_a_number_with_keepdims, backend=backend)(x.copy(), y, s), np.zeros(4))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_reductions_of_numbers_and_0d_arrays_follow_numpy(found, backend):
    # NumPy reduces a number as a 0-d array: axis 0 or -1 allowed (not for mean), a scalar even with keepdims
    fn, x, y, s = found.reductions_of_numbers, X, np.array(0.7), -1.3
    got = numbax.jit(fn, backend=backend)(x, y, s)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, fn(x, y, s), rtol=1e-12)
    xs, ys, ss = np.stack([x, 2 * x]), np.array([0.7, -0.4]), np.array([-1.3, 2.0])
    np.testing.assert_allclose(numbax.vmap(fn, backend=backend)(xs, ys, ss),
                               np.stack([fn(xs[k], ys[k], ss[k]) for k in range(2)]), rtol=1e-12)
    summed = found.summed_reductions_of_numbers
    dx, dy, ds = numbax.grad(summed, argnums=(0, 1, 2), backend=backend)(x, y, s)
    np.testing.assert_allclose(dx, _central_differences(lambda v: summed(v, y, s), x), atol=1e-7)
    assert np.ndim(dy) == 0 and dy == pytest.approx(_central_differences(lambda v: summed(x, v, s), y), abs=1e-7)
    assert np.ndim(ds) == 0 and ds == pytest.approx(_central_differences(lambda v: summed(x, y, v), s), abs=1e-7)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_mean_of_a_number_over_axis_0_is_refused_at_the_users_line(found, backend):
    # NumPy raises AxisError; compiled, the runtime's reason and the user's line (grad's output check, which
    # takes in the user's expression, had no line)
    for fn, make in ((found.mean_of_a_number_over_axis_0, numbax.jit),
                     (found.summed_mean_of_a_number_over_axis_0, numbax.grad)):
        with pytest.raises((np.exceptions.AxisError, numbax.errors.NumbaxShapeError),
                           match="axis 0 is out of bounds for array of dimension 0") as info:
            make(fn, backend=backend)(X)
        if backend == "cpu":
            assert f"{found.__name__}.py:" in str(info.value)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_cotangent_of_a_0d_element_summed_from_an_array(found, backend):
    # the loop's last element (a 0-d value on cpu) broadcast against x: its cotangent is the sum of an array,
    # which rt.unbroadcast wrote as `out[] += g[i0]` (a SyntaxError from inside the runtime)
    x = X.astype(np.float32)
    got = numbax.grad(found.where_of_the_last_element, backend=backend)(x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.ones(4))


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("x", [np.array(True), np.True_])
def test_a_squared_0d_bool_is_refused(found, backend, x):
    # NumPy: int8 for a 0-d array (np.square), int64 for a NumPy scalar; np.sin of them float16 or float64.
    # The abstract value does not tell them apart, and cpu computed float64 for the 0-d array
    assert np.sin(np.array(True) ** 2).dtype == np.float16 and np.sin(np.True_ ** 2).dtype == np.float64
    with pytest.raises(numbax.NumbaxDtypeError, match="np.square") as info:
        numbax.jit(found.sine_of_a_squared_0d_value, backend=backend)(x)
    assert f"{found.__name__}.py:{_line(found, 'return np.sin(x ** 2)')}:" in str(info.value)
    np.testing.assert_allclose(numbax.jit(found.sine_of_a_squared_0d_value, backend=backend)(np.array(0.5)),
                               np.sin(0.25), rtol=1e-15)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int8, np.int32, np.float64])
def test_reduction_methods_keep_numpys_dtype_under_vmap(found, backend, dtype):
    # ``x.min(axis=-1)`` had no abstract value (only functions were probed), so ``+ 0.5`` was computed as
    # Numba computes a float32 scalar and a float: in float64, where NumPy keeps float32
    x = (np.arange(6).reshape(2, 3) % 3 + 1).astype(dtype)
    xs = np.stack([x, 2 * x])
    got = numbax.vmap(found.reduction_methods_plus_numbers, backend=backend)(xs)
    for k, column in enumerate(got):
        expected = [found.reduction_methods_plus_numbers(xs[b])[k] for b in range(2)]
        assert column.dtype == np.asarray(expected[0]).dtype
        np.testing.assert_allclose(column, np.stack(expected), rtol=1e-6)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("transform", ["jit", "vmap"])
def test_minimum_and_maximum_of_equal_zeros_are_numpys(found, backend, transform):
    # NumPy returns the second of two equal operands (np.maximum(0.0, -0.0) is -0.0), Numba the first: the
    # infinity 1 / the result changed sign. NaN in either operand wins in both
    x = np.array([[-2.0, 0.0, -0.0, np.nan], [1.0, -0.0, 0.0, 2.0]])
    for fn, args in ((found.reciprocal_of_a_maximum, (x,)), (found.reciprocal_of_a_minimum, (x, -1.0))):
        expected = fn(*args)
        got = _mapped_over_x(fn, backend, transform, *args)
        np.testing.assert_array_equal(got, expected)
        assert np.isinf(expected).sum() >= 2 and np.array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("integer", [np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("inexact", [np.float32, np.complex64])
def test_integer_arrays_with_float32_arrays_compute_in_float64(found, backend, integer, inexact):
    # NumPy: int64 array + float32 array is float64; Numba's loop for them is float32 (its values rounded to
    # float32 too): the float operand is cast first
    x = np.array([[1.5, 2.0, 3.0], [4.0, 5.0, 2.0 ** 24]], dtype=inexact)
    y = np.array([[-2], [3]]).astype(integer)
    got = numbax.jit(found.integers_plus_floats, backend=backend)(x, y)
    for value, expected in zip(got, found.integers_plus_floats(x, y)):
        assert np.asarray(value).dtype == expected.dtype and expected.dtype.itemsize == 2 * x.dtype.itemsize
        np.testing.assert_array_equal(value, expected)


def test_a_scalar_cotangent_divided_by_zero_is_numpys_infinity(found):
    # the seed of the python backend's gradient was the Python float 1.0, and 1.0 / 0.0 raised
    # ZeroDivisionError from generated code, where NumPy's scalars (and cpu) give inf
    x, y = np.array([[2.0, 1.0, -0.5], [0.5, 0.0, -1.25]]), np.array(0.5)
    with np.errstate(all="ignore"):
        python = numbax.grad(found.mean_over_zero_after_a_branch, argnums=(0, 2), backend="python")(x, y, 0.0)
        cpu = numbax.grad(found.mean_over_zero_after_a_branch, argnums=(0, 2), backend="cpu")(x, y, 0.0)
    assert python[0][0, 1] == np.inf and np.count_nonzero(python[0]) == 1
    for a, b in zip(python, cpu):
        np.testing.assert_array_equal(a, b)


def _scanned_products(x):
    return numbax.lax.scan(lambda carry, row: (carry, row[0] * row[1]), 0, x)[1]


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32])
def test_scan_stacks_narrow_scalars_in_numpys_dtype(backend, dtype):
    # rt.stack_buffer took the leaf's Numba type, which computes int8 scalars in int64 (vmap's stacking too)
    x = (np.arange(6).reshape(3, 2) % 3 + 1).astype(dtype)
    got = numbax.jit(_scanned_products, backend=backend)(x)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, x[:, 0] * x[:, 1])


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_an_update_of_a_slice_reads_its_operand_before_writing(found, backend):
    # cpu's in-place operator read x[1] while writing the rows of x[::-1], row 1 before row 0
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    got = numbax.jit(found.reversed_rows_plus_a_row, backend=backend)(x.copy())
    np.testing.assert_array_equal(got, found.reversed_rows_plus_a_row(x.copy()))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_of_a_store_into_an_array_whose_cotangent_is_broadcast(found, backend):
    # the cotangent of x was the read-only broadcast of a sum's; zeroing its slot wrote into it (python:
    # "assignment destination is read-only", cpu: Numba's typing error), since the slot's own cotangent had
    # marked it owned before its copy was made
    x = np.arange(12.0).reshape(3, 4)
    got = numbax.grad(found.reversed_into_itself, backend=backend)(x.copy())
    expected = 2 * (np.sum(x[::-1], axis=1) + 2.0)[::-1, None] * np.ones((3, 4))
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_write_into_integers_passes_no_derivative_where_their_kind_was_not_inferred(found, backend):
    # v holds integers (np.where of ints), but its kind was not inferred (y is float32, which the abstract
    # values leave unknown): the store's cotangent went back to x (found on python, seed 0). The generated
    # code asks Numba (rt.stored_cotangent), which decides from v's dtype; forward mode too
    x, y = np.array([-2.0, -1.5, 0.5, 2.5]), np.full((3, 4), -2.0, np.float32)
    np.testing.assert_array_equal(numbax.grad(found.stored_into_integers_of_unknown_kind, backend=backend)(x, y),
                                  np.zeros(4))
    tangents = (np.ones(4), np.ones((3, 4), np.float32))
    out, tangent = numbax.jvp(found.stored_into_integers_of_unknown_kind, (x, y), tangents, backend=backend)
    assert out == found.stored_into_integers_of_unknown_kind(x, y) and tangent == 0.0


def _stacked_rows(x):
    out = np.sin(x)

    def row(e):
        return e * np.sum(out), e * 2.0

    return numbax.vmap(row)(x)


def _calls_stacked_rows(x):
    return _stacked_rows(x)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_inlining_keeps_a_helpers_names_apart_from_those_of_the_helpers_it_inlines(backend):
    """A helper's ``out`` and the ``vmap`` buffer ``out_1`` beside it: inlining the loop's call of ``row`` first
    named its copy of ``out`` ``out_1`` too, and renaming the helper then made them one variable (the second
    output overwrote the closure's value: 5.82 for 3.50)."""
    x = np.arange(3.0)
    first, second = numbax.jit(_calls_stacked_rows, backend=backend)(x)
    np.testing.assert_allclose(first, x * np.sum(np.sin(x)))
    np.testing.assert_allclose(second, 2.0 * x)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_both_modes_keep_the_dtype_of_an_array_updated_in_place(found, backend):
    # NumPy's float32 ``y += x`` of a float64 x computes in float64 and stores float32; the transformations'
    # ``y = y + x`` kept float64 (values unrounded)
    x, y = np.array([-2.0, -1.0, 0.5, 2.5]), np.full((3, 4), -2.0, np.float32)
    y[1] = 1e-3
    tangents = (np.ones(4), np.ones((3, 4), np.float32))
    out, tangent = numbax.jvp(found.updated_in_place_from_a_wider_dtype, (x, y.copy()), tangents, backend=backend)
    want = found.updated_in_place_from_a_wider_dtype(x, y.copy())
    assert out.dtype == want.dtype == np.float32 and tangent.dtype == np.float32
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(tangent, np.full((3, 4), 2.0, np.float32))

    def total(x, y):
        return np.sum(found.updated_in_place_from_a_wider_dtype(x, y))
    value, (dx, dy) = numbax.value_and_grad(total, argnums=(0, 1), backend=backend)(x, y.copy())
    assert value.dtype == np.float32 and dx.dtype == np.float64 and dy.dtype == np.float32
    np.testing.assert_array_equal(value, total(x, y.copy()))
    np.testing.assert_array_equal(dx, np.full(4, 3.0))
    np.testing.assert_array_equal(dy, np.ones((3, 4), np.float32))


def _shifted_sine(x, y):
    y[::-1] += 0.5
    return np.sin(y) + x


def _inverse_after_a_write(y):
    y[:, 0] += np.tanh(0.25)
    return np.negative(np.linalg.inv(y[:1, :1]))


def _sorted_through_a_closure(x, y, s):
    def f0(a, b=0.5):
        return y

    v1 = f0(b=s, a=y)
    v1.sort()
    return v1


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_jacobians_of_a_function_writing_into_its_argument_start_each_run_from_the_argument(backend):
    # found by the extended grammar (seed 100): jacfwd ran each column's forward mode after the previous ones had
    # written into y (0.8776, cos(-2 + 1.5), for cos(-1.5)); jacrev's rows replayed the function after its first
    # run had (inv at y + 0.5 for y + 0.25: 0.16 for 0.1975); vjp's and linearize's pullbacks likewise
    import jax.numpy as jnp

    from .references import jax  # in float64 mode

    x, y = np.full(4, -2.0), np.array([[-2.0], [-1.0], [0.5]])
    want = jax.jacfwd(lambda x, y: jnp.sin(y.at[::-1].add(0.5)) + x, argnums=(0, 1))(x, y)
    for make in (numbax.jacfwd, numbax.jacrev):
        y_in = y.copy()
        got = make(_shifted_sine, argnums=(0, 1), backend=backend)(x, y_in)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)
        np.testing.assert_array_equal(y_in, y)  # as after grad: the argument as passed
    hessian = numbax.hessian(lambda y: np.sum(_shifted_sine(x, y)), backend=backend)(y.copy())
    np.testing.assert_allclose(hessian, jax.hessian(lambda y: jnp.sum(jnp.sin(y + 0.5) + x))(y), rtol=1e-12)
    z = np.array([[2.0], [-1.75], [1.75]])
    expected = 1.0 / (2.0 + np.tanh(0.25)) ** 2  # d/dz of -1 / (z + tanh(0.25))
    for make in (numbax.jacfwd, numbax.jacrev):
        np.testing.assert_allclose(make(_inverse_after_a_write, backend=backend)(z.copy())[0, 0, :, 0],
                                   [expected, 0.0, 0.0], rtol=1e-12)
    out, pullback = numbax.vjp(_inverse_after_a_write, z.copy(), backend=backend)
    np.testing.assert_allclose(pullback(np.ones((1, 1)))[0][:, 0], [expected, 0.0, 0.0], rtol=1e-12)
    out, linear = numbax.linearize(_inverse_after_a_write, z.copy(), backend=backend)
    np.testing.assert_allclose(linear(np.eye(3)[:, :1]), [[expected]], rtol=1e-12)
    np.testing.assert_allclose(linear(np.eye(3)[:, :1]), [[expected]], rtol=1e-12)  # again: the same point
    # (seed 101) the closure returns y itself, which the sort then writes into: found by what a helper returns
    w = np.array([[0.5, -0.5, 0.25, -1.75]], np.float32)
    for make in (numbax.jacfwd, numbax.jacrev):
        got = make(_sorted_through_a_closure, argnums=1, backend=backend)(np.zeros((3, 4)), w.copy(), -1)
        np.testing.assert_array_equal(got.reshape(4, 4), np.eye(4)[np.argsort(w[0])])


def _nan_to_num_of_numbers(x):
    return np.nan_to_num(0.5 / x) + np.nan_to_num(1.0, nan=2.0)


def _difference_of_a_number(x):
    return np.diff(0.5) + x


def _view_of_a_taken_column_scaled(x):
    v1 = np.take(x, -1, axis=-1) * 1.0
    v2 = v1[1:]
    v2 *= 0.5
    return np.sum(v1)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_composites_of_numbers_follow_numpy_or_are_refused_at_the_users_line(backend):
    # found by the extended grammar (seed 100): np.nan_to_num(0.5) read ``x.dtype`` of a float and raised at a
    # line of composites.py; NumPy takes a number there. An operand a composite's Python cannot take (np.diff of
    # a number, which NumPy refuses too) is refused at the user's call
    x = np.array([0.0, 2.0], np.float32)
    with np.errstate(divide="ignore"):
        want = _nan_to_num_of_numbers(x)
        got = numbax.jit(_nan_to_num_of_numbers, backend=backend)(x)
    assert got.dtype == want.dtype == np.float64  # np.nan_to_num(1.0) is a float64 NumPy scalar, not weak
    np.testing.assert_array_equal(got, want)
    with pytest.raises(numbax.NumbaxError, match="np.diff of these operands") as info:
        numbax.jit(_difference_of_a_number, backend=backend)(x)
    assert f"{__file__}:{inspect.getsourcelines(_difference_of_a_number)[1] + 1}:" in str(info.value)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_write_through_a_view_of_a_composites_result_is_refused_by_grad(backend):
    # found by the extended grammar (seed 101): np.take's moveaxis had no abstract value, so ``v1`` had no rank,
    # and the alias check took ``v2 *= 0.5`` for a number's update: grad dropped the write (1.0 for 0.5 in dx)
    x = np.arange(12.0).reshape(3, 4)
    assert numbax.jit(_view_of_a_taken_column_scaled, backend=backend)(x.copy()) == 12.0
    with pytest.raises(numbax.NumbaxDifferentiationError, match="may share memory") as info:
        numbax.grad(_view_of_a_taken_column_scaled, backend=backend)(x.copy())
    assert f"{__file__}:{inspect.getsourcelines(_view_of_a_taken_column_scaled)[1] + 3}:" in str(info.value)


def _ignores_its_second_argument(x, y):
    return np.sum(0.5 + x)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_the_zero_gradient_of_an_unused_0d_complex_argument_is_complex(backend):
    # found by the extended run on cpu (seed 103): Numba's rt.zeros_like of a complex number was the float 0.0,
    # so the gradient of a 0-d complex128 argument came back float64 (JAX: complex128 zeros)
    dx, dy = numbax.grad(_ignores_its_second_argument, argnums=(0, 1), backend=backend)(X, np.array(-2.0 - 2.0j))
    np.testing.assert_array_equal(dx, np.ones(4))
    assert np.ndim(dy) == 0 and np.asarray(dy).dtype == np.complex128 and dy == 0


def _float32_plus_int64(x, y):
    return x + y


def _float32_times_int64_summed(x, y):
    return np.sum(x * y)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_jvp_of_float32_plus_int64_has_numpys_float64(backend):
    # found on the cpu backend (seeds 2727 and 4242, minimized): jit gave NumPy's float64, jvp's output float32
    # (specialize wrote no x.astype(np.float64) in code a transformation differentiates, which has astype's rule)
    x, y = np.full(4, -2.0, np.float32), np.full(4, -2)
    dx, dy = np.ones(4, np.float32), np.zeros(4, jax_float0())
    out, tangent = numbax.jvp(_float32_plus_int64, (x, y), (dx, dy), backend=backend)
    assert out.dtype == tangent.dtype == numbax.jit(_float32_plus_int64)(x, y).dtype == (x + y).dtype
    np.testing.assert_array_equal(tangent, np.ones(4))
    value, slope = numbax.jvp(_float32_times_int64_summed, (x, y), (dx, dy), backend=backend)
    assert value.dtype == slope.dtype == np.float64 and value == 16.0 and slope == -8.0
    gradient = numbax.grad(_float32_times_int64_summed, backend=backend)(x, y)
    assert gradient.dtype == np.float32 and np.array_equal(gradient, y.astype(np.float32))
    assert numbax.jit(numbax.grad(_float32_times_int64_summed))(x, y).dtype == np.float32


def jax_float0():
    """JAX's tangent dtype of an integer argument."""
    import jax

    return jax.dtypes.float0


def _largest_harmonic_row_norm(x):
    return np.linalg.norm(np.linalg.norm(x, ord=-1, axis=1), np.inf)


def test_jvp_of_the_largest_of_norms_is_jaxs_rule_op_by_op():
    # found by the extended grammar (python backend, seed 57, minimized): the rows with a zero have norm 0 for
    # ord=-1 and a nan tangent (JAX's too). The infinity norm's rule, JAX's _reduce_chooser_jvp_rule, multiplies the
    # tangents by a 0/1 mask of the largest elements, so a nan tangent elsewhere makes the result's nan: numbax and
    # JAX op by op (jax.disable_jit) agree. Under jax.jit, XLA's simplifier turns that product with a converted mask
    # into a select and returns the third row's tangent: numbax keeps the rule's own numbers.
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    x = np.array([[0., -1., 0., -0.5], [1.25, 2., 1.5, 0.], [0.5, 1.25, -1.25, -2.]])
    t = np.ones_like(x)
    with np.errstate(all="ignore"):
        _, got = numbax.jvp(_largest_harmonic_row_norm, (x,), (t,))
    with jax.disable_jit():
        _, want = jax.jvp(lambda a: jnp.linalg.norm(jnp.linalg.norm(a, ord=-1, axis=1), jnp.inf), (x,), (t,))
    assert np.isnan(got) and np.isnan(want)


def _mean_of_no_rows(y):
    return np.mean(y[1:])


def _variance_of_no_columns(y):
    v = np.diff(y).copy()
    v += 0.5
    return np.sum(np.var(v, axis=0))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_of_the_mean_of_an_empty_array_is_an_empty_contribution(backend):
    # found by the extended grammar (seed 102; the construct is the default grammar's): y[1:] of one row is empty,
    # NumPy's mean is nan, JAX's gradient is zeros; the python backend raised ZeroDivisionError from generated code
    # (cpu gives the zeros): mean's VJP scales by size(ans) / size(a), which are NumPy integers now (rt.size_of).
    # So did the variance's along an axis of an empty array, first order (its count of elements per result) and
    # second (the wide grammar's compositions, seed 35)
    with np.errstate(all="ignore"):
        got = numbax.grad(_mean_of_no_rows, backend=backend)(np.ones((1, 4)))
        np.testing.assert_array_equal(got, np.zeros((1, 4)))
        y = np.full((3, 1), -2.0)
        gradient = numbax.grad(_variance_of_no_columns, backend=backend)
        np.testing.assert_array_equal(gradient(y), np.zeros((3, 1)))
        np.testing.assert_array_equal(numbax.grad(_summed(gradient), backend=backend)(y), np.zeros((3, 1)))


def _summed(fn):
    def summed(y):
        return np.sum(fn(y) * 1.0)

    return summed


def _row_of_integers_incremented(x, y):
    v = x[1]
    v += 1
    return 0.5 + x + y


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_an_update_through_a_view_of_an_array_without_a_derivative_is_refused(backend):
    # found by the extended grammar (seed 105): jvp's output was -1.5 where NumPy's is -0.5, and value_and_grad's
    # value and gradient were wrong the same way (a float x not differentiated too): canonicalize makes `v += 1`
    # a new value `v_1 = v + 1`, so x kept its old row. Refused now, active or not, at the user's line
    x, y = np.full((3, 4), -2), np.zeros(4)
    tangents = (np.zeros((3, 4), dtype=[("float0", np.void, 0)]), np.ones(4))
    with pytest.raises(numbax.NumbaxDifferentiationError, match="`v \\+= ...` writes into `v`, which may share") as info:
        numbax.jvp(_row_of_integers_incremented, (x.copy(), y), tangents, backend=backend)
    assert info.value.origin.lineno == inspect.getsourcelines(_row_of_integers_incremented)[1] + 2
    with pytest.raises(numbax.NumbaxDifferentiationError, match="may share memory"):
        numbax.value_and_grad(lambda y, x: np.sum(_row_of_integers_incremented(x, y)), backend=backend)(
            y, x.astype(np.float64))


def _row_incremented_in_place(y, x):
    x[1] += 1
    return np.sum(0.5 + x + y * x)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_the_refusals_rewrite_through_the_array_itself_is_right(backend, dtype):
    x, y = np.full((3, 4), -2, dtype=dtype), np.ones(4)
    value, grad = numbax.value_and_grad(_row_incremented_in_place, backend=backend)(y, x.copy())
    assert value == _row_incremented_in_place(y, x.copy()) == -34.0
    np.testing.assert_array_equal(grad, np.full(4, -5.0))  # the rows of x after the write: -2, -1, -2
    out, tangent = numbax.jvp(lambda v: _row_incremented_in_place(v, x.copy()), (y,), (np.ones(4),),
                              backend=backend)
    assert out == -34.0 and tangent == -20.0


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_heaviside_of_bools_alone_is_refused_and_with_a_float_follows_numpy(found, backend):
    # NumPy gives float16 of two bool arrays (seed 210, python backend): jit gave float64
    b = np.array([False, True, False, True])
    with pytest.raises(numbax.NumbaxError, match="np.heaviside of bool or integer operands alone") as info:
        numbax.jit(found.heaviside_of_bools, backend=backend)(b)
    assert f"{found.__file__}:{_line(found, 'return np.heaviside(x, x)')}" in str(info.value)
    y = np.array([-2.0, 0.5, 0.0, 3.0])
    got = numbax.jit(found.heaviside_of_bools_and_a_float, backend=backend)(b, y)
    expected = found.heaviside_of_bools_and_a_float(b, y)
    assert got.dtype == expected.dtype == np.float64
    np.testing.assert_array_equal(got, expected)


_HEAVISIDE_OPERANDS = {"float32": np.array([-1.0, 0.0, 2.0, np.nan], np.float32),
                       "float64": np.array([-1.0, 0.0, np.nan, 3.0]), "int64": np.array([-1, 0, 2, 5]), "bool": np.array([True, False, True, False]),
                       "python float": -1.0, "python int": 3, "0-d float32": np.array(0.0, np.float32)}


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_norms_of_integers_are_numpys_and_a_float16_constant_is_refused(found, backend):
    # found by the wide grammar (seed 4, cpu backend): np.linalg.norm of an integer array did not compile (Numba's
    # takes floats; NumPy makes the array float64 first), and np.sin(0.5 > 0.5), NumPy's float16 folded while
    # compiling, reached Numba ("NotImplementedError inside Numba: float16", without the user's line)
    x = np.array([-2, -2, 3, -2])
    for fn in (found.norm_of, found.norms_of_rows):
        np.testing.assert_allclose(numbax.jit(fn, backend=backend)(x.reshape(2, 2)), fn(x.reshape(2, 2)), rtol=1e-15)
    np.testing.assert_allclose(numbax.vmap(found.norm_of, backend=backend)(np.stack([x, -x])), [np.sqrt(21.0)] * 2)
    with pytest.raises(numbax.NumbaxError, match="a float16 value") as info:
        numbax.jit(found.sine_of_a_comparison, backend=backend)(np.ones(2))
    assert info.value.origin.lineno == _line(found, "return np.sin(0.5 > 0.5) + x")


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_the_tangent_of_a_float_sum_of_integers_is_zero(found, backend):
    # found by the wide grammar (seed 5, python backend): jvp of np.sum(x, dtype=np.float64) of a bool or integer
    # x gave the sum itself as its tangent: the reduction's rule ignored `dtype=`, so the output was taken for an
    # integer, whose tangent code was the output (float0 expected, ignored); a float output's tangent is zero
    for x in (np.array([True, False, True]), np.array([1, 2, 3])):
        for fn in (found.float_sum, found.float_cumsum):
            out, tangent = numbax.jvp(fn, (x,), (np.zeros(3, dtype=[("float0", np.void, 0)]),), backend=backend)
            np.testing.assert_array_equal(out, fn(x))
            assert np.asarray(tangent).dtype == np.float64
            np.testing.assert_array_equal(tangent, np.zeros_like(out))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_the_clip_method_with_its_own_keywords_is_differentiated_as_jax(found, backend):
    # x.clip(min=..., max=...), the method's own keyword names, was refused by grad and jvp ("call it with NumPy's
    # own argument names": the rule names np.clip's bounds a_min, a_max); the specializer passes them by position
    x = np.array([-1.0, 0.2, 0.7, 2.0])
    np.testing.assert_allclose(numbax.jit(found.clipped_by_keywords, backend=backend)(x),
                               found.clipped_by_keywords(x), rtol=1e-15)
    np.testing.assert_array_equal(numbax.grad(found.clipped_by_keywords, backend=backend)(x), [1.0, 3.0, 3.0, 2.0])
    _, tangent = numbax.jvp(found.clipped_by_keywords, (x,), (np.ones(4),), backend=backend)
    assert tangent == 9.0
    # NumPy 2.1's and JAX's np.clip(x, min=..., max=...), one bound or both
    np.testing.assert_allclose(numbax.jit(found.clipped_as_in_jax, backend=backend)(x), found.clipped_as_in_jax(x),
                               rtol=1e-15)
    np.testing.assert_array_equal(numbax.grad(found.clipped_as_in_jax, backend=backend)(x), [1.0, 3.0, 2.0, 1.0])


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_the_tangent_of_a_bool_clipped_by_a_float_keyword_is_zero(found, backend):
    # found by the wide grammar (seed 7, python backend): x.clip(max=0.5) of a bool was taken for a bool (the
    # keyword's bound was left out of the rule's promotion), and an inactive output of integer kind was its own
    # tangent: jvp gave the output [1.5, 1.5, 1.5, 0.5] as its tangent
    y = np.array([[True, True, True, False]])
    out, tangent = numbax.jvp(found.clipped_bool, (y,), (np.zeros(y.shape, dtype=[("float0", np.void, 0)]),),
                              backend=backend)
    np.testing.assert_array_equal(out, [[1.5, 1.5, 1.5, 0.5]])
    assert tangent.dtype == np.float64
    np.testing.assert_array_equal(tangent, np.zeros((1, 4)))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_vmap_of_a_dot_of_bool_or_narrow_integer_vectors_is_numpys(found, backend):
    # found by the wide grammar (seed 5, python backend): vmap of np.matmul(x, x) of bool rows summed the products
    # as integers ([4, 6, 5] where NumPy's logical dot plus 3 is [4, 4, 4]); int8 rows did not wrap
    rows = np.array([[False, True, False, False], [True, True, True, False], [True, False, True, False]])
    for batch in (rows, (rows * 100).astype(np.int8), rows * 0.5):
        got = numbax.vmap(found.dot_plus, in_axes=(0, None), backend=backend)(batch, 3)
        expected = np.stack([found.dot_plus(row, 3) for row in batch])
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("order", [None, 0, 1, 2, 3, 0.5, np.inf])
def test_the_norm_of_float32_is_float32_for_every_order(found, backend, order):
    # found by the wide grammar (seed 6, cpu backend): np.linalg.norm(x, ord=1) of float32 was float64 on cpu
    # (Numba's own norm gives float64 of float32 for every order but the vector 2-norm's); every norm goes to
    # numbax.runtime.norm, whose dtypes are NumPy's
    x = np.array([-2.0, 1.0, 3.0, 0.5], np.float32)
    for args in ((x, order), (x.reshape(2, 2), order if order in (None, 1, 2, np.inf) else "fro")):
        got, expected = numbax.jit(found.norm_by, static_argnums=1, backend=backend)(*args), found.norm_by(*args)
        assert np.asarray(got).dtype == np.asarray(expected).dtype == np.float32, args
        np.testing.assert_allclose(got, expected, rtol=2e-7)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_the_derivatives_of_angle_at_zero_are_jaxs_nan(found, backend):
    # found by the wide grammar (seed 2 python, seed 4 cpu): grad of np.angle of a Python 0.0 raised
    # ZeroDivisionError (a complex division, -1j * g / z), and jacfwd of np.angle at 0 gave 0 where JAX's
    # atan2 rule gives nan
    x = np.array([0.0, 1.0, -1.0, 0.0])
    expected = np.array([np.nan, 0.0, 0.0, np.nan])
    np.testing.assert_array_equal(numbax.grad(found.angles, backend=backend)(x), expected)
    np.testing.assert_array_equal(numbax.jacfwd(np.angle, backend=backend)(x).diagonal(), expected)
    np.testing.assert_array_equal(numbax.jvp(found.angles, (x,), (np.ones(4),), backend=backend)[1], np.nan)
    assert np.isnan(numbax.grad(found.angles, backend=backend)(0.0))
    z = np.array([1.0 + 2.0j, 0.0j, -0.5j])
    np.testing.assert_allclose(numbax.grad(found.angles, backend=backend)(z),
                               [-(2.0 + 1.0j) / 5.0, np.nan + np.nan * 1j, 2.0 + 0.0j], rtol=1e-15)


_CLIP_OPERANDS = {"floats": np.array([-2.0, 0.5, np.nan, 3.0]), "ints": np.array([-2, 0, 1, 3]),
                  "float32": np.array([-2.0, 0.5, 1.0, 3.0], np.float32), "number": 0.5, "int": 1, "none": None,
                  "lows": np.array([0.0, 0.5, 1.0, -1.0]), "highs": np.array([1.0, 0.5, 2.0, 0.0])}


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_clip_of_a_number_or_without_bounds_is_numpys(found, backend):
    # found by the wide grammar (seed 4, cpu backend): np.clip(0.5, x, 0.5), a number clipped by an array, did not
    # compile on cpu (Numba's np.clip takes arrays only), nor np.clip(x, None, None) (NumPy 2 copies)
    clip = numbax.jit(found.clip_of, backend=backend)
    for a, low, high in itertools.product(("floats", "ints", "float32", "number", "int"),
                                          ("number", "int", "none", "lows"), ("number", "none", "highs")):
        args = tuple(_CLIP_OPERANDS[name] for name in (a, low, high))
        got, expected = clip(*args), found.clip_of(*args)
        assert np.asarray(got).dtype == np.asarray(expected).dtype, (a, low, high)
        np.testing.assert_array_equal(got, expected)
    x = np.array([-2.0, -2.0, -2.0, 0.5])
    np.testing.assert_array_equal(numbax.jacfwd(lambda v: found.clip_of(0.5, v, 0.5), backend=backend)(x)[3],
                                  [0.0, 0.0, 0.0, 0.25])  # JAX's ties: maximum, then minimum, each shares half


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_the_second_derivative_of_cbrt_at_zero_is_jaxs_infinity(found, backend):
    # found by the wide grammar (seed 3, python backend): jvp of grad of np.cbrt at 0 was nan (the derivative
    # 1 / (3 ans ans) differentiated again is 0 / 0 there), JAX's is -inf (its ans ** -2 / 3); at -0.0, +inf
    x = np.array([-2.0, 0.0, 1.5, -0.0])
    first = numbax.grad(found.cube_roots, backend=backend)(x)
    np.testing.assert_allclose(first, np.array([1 / 3 * 4 ** (-1 / 3), np.inf, 1 / 3 * 1.5 ** (-2 / 3), np.inf]),
                               rtol=1e-14)
    second = numbax.hessian(found.cube_roots, backend=backend)(x).diagonal()
    np.testing.assert_allclose(second, [2 / 9 * 2 ** (-5 / 3), -np.inf, -2 / 9 * 1.5 ** (-5 / 3), np.inf], rtol=1e-14)
    _, forward = numbax.jvp(numbax.grad(found.cube_roots, backend=backend), (x,), (np.ones(4),), backend=backend)
    np.testing.assert_allclose(forward, second, rtol=1e-14)  # two generated paths: equal to rounding


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_ufuncs_written_as_composites_compute_in_numpys_loop_dtype(found, backend):
    # found by the extended grammar (test_fuzz, python backend): np.deg2rad of a bool array gave float64 where
    # NumPy's loops give float16; of int16 float64 where NumPy's is float32; of complex numbers a value where NumPy
    # has no loop (TypeError)
    degrees = numbax.jit(found.degrees_to_radians, backend=backend)
    for x in (np.array([1, -2], np.int16), np.array([3, 2], np.uint16), np.array([1, -2], np.int32), 3, 2.5,
              np.array([1.5, -2.0], np.float32), np.float32(1.5)):
        got, expected = degrees(x), found.degrees_to_radians(x)
        assert np.asarray(got).dtype == np.asarray(expected).dtype, x
        np.testing.assert_allclose(got, expected, rtol=1e-7)
    for x, message in ((np.array([True, False]), "gives float16 in NumPy"), (np.array([1, 2], np.int8), "float16"),
                       (np.array([1j]), "NumPy raises TypeError")):
        with pytest.raises(numbax.NumbaxDtypeError, match=message):
            degrees(x)
    with pytest.raises(TypeError):
        found.degrees_to_radians(np.array([1j]))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_heaviside_has_numpys_dtype_for_every_pair_of_operands(found, backend):
    # found by the extended grammar (seed 120732, python backend): np.heaviside(s, y) of a Python float s and a
    # float32 y was float64 where NumPy's is float32 (the composite made zeros of x1's own dtype)
    heaviside = numbax.jit(found.heaviside_of_two, backend=backend)
    for x1, x2 in itertools.product(_HEAVISIDE_OPERANDS.values(), repeat=2):
        if np.asarray(x1).dtype.kind in "bi" and np.asarray(x2).dtype.kind in "bi":
            continue  # refused (test_heaviside_of_bools_alone_is_refused_and_with_a_float_follows_numpy)
        with np.errstate(invalid="ignore"):
            expected = np.heaviside(x1, x2)
        got = heaviside(x1, x2)
        assert np.asarray(got).dtype == expected.dtype, (x1, x2)
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("program", ["integers_taken", "integers_flattened_and_summed"])
def test_grad_of_integers_flattened_from_an_unknown_kind_is_refused(found, backend, program):
    # found by the extended grammar (seed 120732, python backend): np.ravel (inside np.take) and np.cumsum
    # without an axis took an operand of unknown kind (from a float32 array) for a float64 one, so grad of an
    # integer output gave zeros where JAX raises TypeError
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        numbax.grad(getattr(found, program), backend=backend)(np.ones((3, 4), np.float32), 0)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_np_matmul_of_a_matrix_and_a_vector_is_a_vector(found, backend):
    # found by the wide grammar (seed 2, python backend): jacfwd of np.matmul(x, y) raised IndexError; the
    # specializer took the generalized ufunc np.matmul for an elementwise one (rank: the larger operand's), so
    # `np.matmul(x, y).ndim` of a matrix and a vector was 2 in compiled code (`x @ y` was right)
    x, y = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    for a, b in ((x, y), (y, x.T), (y, y), (x, x.T)):
        np.testing.assert_array_equal(numbax.jit(found.matmul_rank, backend=backend)(a, b), np.matmul(a, b).ndim)
    np.testing.assert_array_equal(numbax.jacfwd(found.matmul_of_two, backend=backend)(x, y),
                                  np.kron(np.eye(2), y).reshape(2, 2, 3))
    np.testing.assert_array_equal(numbax.jacrev(found.matmul_of_two, argnums=1, backend=backend)(x, y), x)


@pytest.mark.xfail(strict=True, reason="jacrev of an empty output maps vjp over no example: vmap's ValueError "
                                       "where JAX gives an empty Jacobian (seed 212, python backend; a run-time "
                                       "branch on the number of rows broke jacrev inside other transformations)")
def test_jacrev_of_an_empty_output_is_an_empty_jacobian(found):
    y = np.full((3, 1), -2.0)
    got = numbax.jacrev(found.empty_difference, backend="python")(y)
    assert got.shape == (3, 0, 3, 1)


@pytest.mark.xfail(strict=True, raises=ValueError,
                   reason="jacfwd of an empty input maps jvp over no column: vmap's 'needs at least one example' "
                          "(a run-time branch for it compiled a second forward mode into every jacfwd)")
def test_jacfwd_of_an_empty_input_is_an_empty_jacobian(found):
    assert numbax.hessian(found.sum_of_squares, backend="python")(np.zeros((2, 0))).shape == (2, 0, 2, 0)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_average_with_weights_that_sum_to_zero_raises_as_numpy_even_unused(found, backend):
    # found by the extended grammar (seed 120732, python backend): np.average's weights summing to zero gave nan
    # (JAX's value) where NumPy raises ZeroDivisionError, and an unused average was dropped with its error
    x = np.array([[0.0, 1.0, 2.0, 0.0], [1.0, 2.0, 3.0, 0.0], [1.0, 2.0, 3.0, 0.0]])
    for fn in (found.average_by_last_column, found.unused_average):
        with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
            fn(x)
        with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
            numbax.jit(fn, backend=backend)(x)
        with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
            numbax.grad(lambda x: np.sum(fn(x)), backend=backend)(x)
    x[:, -1] = [0.5, 1.0, -0.25]
    np.testing.assert_allclose(numbax.jit(found.average_by_last_column, backend=backend)(x),
                               found.average_by_last_column(x), rtol=1e-14)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_refusal_inside_a_composite_points_at_the_users_call(found, backend):
    # found by the extended grammar (seed 3333, cpu): jvp of np.kron of complex numbers was refused at the line of
    # numbax's composite (composites.py: `np.outer`), which the user never wrote; the composite's statements
    # carry the user's line now, in errors and in the generated code's comments
    z = np.array([0.5 - 2.0j, 1.0 + 0.5j])
    with pytest.raises(numbax.NumbaxDifferentiationError, match="np.outer for complex numbers") as info:
        numbax.jvp(found.kron_of_complex, (z,), (z,), backend=backend)
    assert info.value.origin.filename == found.__file__
    assert info.value.origin.lineno == _line(found, "return np.sum(np.real(np.kron(x, x)))")
    generated = numbax.source(numbax.grad(found.kron_of_reals, backend=backend), X)
    assert "composites.py" not in generated and "return np.sum(np.kron(x, x) ** 2)" in generated


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_np_where_broadcasts_a_number_against_an_empty_array(found, backend):
    # found by the compositions (seed 5, python): np.where(b > 0.25, v, b) of a (3, 0) array and numbers raised
    # "operands could not be broadcast together with shapes () (3,0) ()" (the check took the largest dim, 1,
    # as the broadcast one; it is the dim other than 1, here 0)
    v = np.zeros((3, 0))
    assert numbax.jit(found.where_of_empty_rows, backend=backend)(v, 0.5) == 0.0
    assert numbax.grad(found.where_of_empty_rows, backend=backend)(v, 0.5).shape == (3, 0)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_np_clip_broadcasts_to_its_bounds_and_takes_a_nan_bound_as_numpy(found, backend):
    # found while testing the above: Numba's np.clip (which the cpu backend called for an array with bounds) kept
    # the array's shape where a bound of more rows broadcasts it, (1, 3) clipped by (2, 3) bounds gave (1, 3),
    # and ignored a NaN bound (NumPy's result is NaN): silent wrong values; np.clip is minimum(maximum(a, lo), hi)
    a, b = np.array([[0.5, 1.5, -1.0]]), np.array([[0.75, 0.75, 0.75], [2.0, -1.0, 0.0]])
    for got, want in zip(numbax.jit(found.clipped_by_rows, backend=backend)(a, b), found.clipped_by_rows(a, b)):
        np.testing.assert_array_equal(got, want)
        assert got.shape == want.shape == (2, 3) or np.isnan(want).all()


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_python_ints_outside_a_narrow_dtype_are_numpys(found, backend):
    # np.clip(int8, 1, 300) and np.where(c, int8, 300) are int8 in NumPy 2 (a bound outside the range lets every
    # value through; where's 300 is cast as C casts, 44): the specializer raised Python's OverflowError from
    # inside a pass; `x + 300` raises NumPy's OverflowError, now at the user's line
    x = np.array([0, 1, 2, 3], np.int8)
    bounded = numbax.jit(found.narrow_integers_bounded, backend=backend)
    for got, want in zip(bounded(x), found.narrow_integers_bounded(x)):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype == np.int8
    with pytest.raises(numbax.NumbaxError, match="OverflowError.*300 out of bounds for int8") as info:
        numbax.jit(found.narrow_integer_plus_300, backend=backend)(x)
    assert info.value.origin.lineno == _line(found, "return x + 300")


def _gradient_along(gradient):
    def along(x, t):
        return np.sum(gradient(x) * t)

    return along


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("name", ["indexed_in_a_loop", "scaled_in_a_loop"])
def test_reverse_over_reverse_through_a_loop_that_saves_rows(found, backend, name):
    # found by the compositions (seed 11, python): grad of a gradient whose loop saved the array of each
    # iteration in a row table it never read: the table was dropped and its rows still written (NameError)
    from .references import jax, oracles  # in float64 mode

    fn = getattr(found, name)
    x, t = np.array([-2.0, -1.0, 3.0, 0.5]), np.array([0.5, -1.0, 2.0, 1.5])
    got = numbax.grad(_gradient_along(numbax.grad(fn, backend=backend)), backend=backend)(x, t)
    with jax.disable_jit():
        want = jax.jvp(jax.grad(oracles.to_jax(fn)), (x,), (t,))[1]
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_edge_operands_are_numpys(found, backend):
    # found by an edge-case sweep of jit against NumPy: np.average with weights of another shape gave a value
    # where NumPy raises (TypeError without axis, ValueError with one); np.float_power of complex infinities
    # (x * 1.0 makes inf - 0.5j inf + nanj); np.vander of a number raised Python's TypeError from the compiler;
    # int8 compared with a Python int outside int8's range raised OverflowError (NumPy 2 compares exactly)
    jit = functools.partial(numbax.jit, backend=backend)
    for a, w in ((np.arange(4.0), 3.0), (np.ones((2, 3)), np.ones(3)), (np.ones(3), np.ones(2))):
        with pytest.raises(TypeError, match="Axis must be specified when shapes of a and weights differ"):
            jit(found.average_of)(a, w)
    for a, w in ((np.ones((2, 3)), np.ones(2)), (np.ones((2, 3)), np.ones((1, 3))), (np.ones(3), np.ones(2))):
        with pytest.raises(ValueError, match="Shape of weights must be consistent with shape of a"):
            jit(found.average_of_rows)(a, w)
    a, w = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 0.5])
    np.testing.assert_allclose(jit(found.average_of_rows)(a, w), np.average(a, axis=-1, weights=w), rtol=1e-15)
    with pytest.raises(ValueError, match="axis is out of bounds for array of dimension 0"):  # NumPy's AxisError
        jit(found.average_of_rows)(2.0, 1.0)
    z = np.array([np.inf - 0.5j, -0.5 + 0.25j])
    if backend == "python":  # Numba's complex power of an infinity is NaN (NumPy's is not), left as Numba's
        np.testing.assert_array_equal(jit(found.float_power_of)(z, True), np.float_power(z, True))
    for x, y in ((np.array([-0.0, 2.0], np.float32), 3), (2, np.array([1, 2, -1])), (np.int8(3), 0.5)):
        got, want = jit(found.float_power_of)(x, y), np.float_power(x, y)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    with pytest.raises(ValueError, match="x must be a one-dimensional array"):
        jit(found.vander_of)(2.0)
    for x in (np.array([-3, 3, 2, 0], np.int8), np.array([0, 255], np.uint8)):
        for got, want in zip(jit(found.compared_beyond_int8)(x), found.compared_beyond_int8(x)):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_edge_operands_numpy_refuses_are_refused(found, backend):
    # found by the edge sweep on cpu: np.vdot of a vector of one element and one of four gave a value (Numba's
    # vdot takes the one element against any; NumPy raises); uint8 minus a Python int -1 passed at run time gave
    # 3 (the int wrapped to 255; NumPy raises OverflowError); np.sign of bools gave int8 (NumPy has no loop)
    jit = functools.partial(numbax.jit, backend=backend)
    with pytest.raises(ValueError, match="vdot flattens both") as info:
        jit(found.vdot_of)(np.array([1.0]), np.array([3.0, 1.0, -4.0, 3.0]))
    assert info.value.origin.lineno == _line(found, "return np.vdot(a, b)")
    assert jit(found.vdot_of)(np.ones((2, 3)), np.arange(6.0)) == 15.0
    a = np.array([2, 0], np.uint8)
    with pytest.raises(OverflowError, match="Python integer -1 out of bounds for uint8") as info:
        jit(found.less_by)(a, -1)
    assert info.value.origin.lineno == _line(found, "return a - k, np.subtract(a, k)")
    for got, want in zip(jit(found.less_by)(a, 1), found.less_by(a, 1)):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.uint8
    with pytest.raises(numbax.NumbaxDtypeError, match="np.sign"):
        jit(found.signs_of)(np.array([True, False]))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_variable_assigned_on_some_paths_is_pythons_error_where_unassigned(found, backend):
    # `if c > 0: a = ...` then `a` with c <= 0: the cpu backend returned [] (Numba reads a zeroed variable)
    # where Python raises UnboundLocalError; a flag each path sets is checked where `a` is read
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(numbax.jit(found.read_where_maybe_unassigned, backend=backend)(x, 1.0), [3.0, 5.0])
    with pytest.raises(UnboundLocalError, match="cannot access local variable 'a'") as info:
        numbax.jit(found.read_where_maybe_unassigned, backend=backend)(x, -1.0)
    assert info.value.origin.lineno == _line(found, "return a + 1.0")
    # a loop that ran no iteration, then an `if` that assigns it on one side only
    np.testing.assert_array_equal(numbax.jit(found.last_of_a_loop, backend=backend)(x, 3), [2.0, 4.0])
    with pytest.raises(UnboundLocalError, match="cannot access local variable 'a'"):
        numbax.jit(found.last_of_a_loop, backend=backend)(x, 0)
    again = numbax.jit(found.assigned_after_a_loop_on_one_side, backend=backend)
    np.testing.assert_array_equal(again(x, 0, 1.0), x)
    np.testing.assert_array_equal(again(x, 3, -1.0), [2.0, 4.0])
    with pytest.raises(UnboundLocalError, match="cannot access local variable 'a'"):
        again(x, 0, -1.0)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_maybe_assigned_variable_stays_checked_through_joins_loops_and_arms(found, backend):
    # `if c: a = x * 2` then `if d: a = 3.0` made `a` one variable (the number materialized) whose read was no
    # longer checked: with neither assigned the cpu backend returned x where Python raises; so did a `while`
    # loop that ran no iteration over a maybe-assigned `a`; and the read of `a` in an arm Python does not
    # evaluate (`a * 1.5 if i > 0 else ...`, `d > 0 and a > 0`) raised where Python does not
    both = numbax.jit(found.reassigned_to_a_number_on_one_side, backend=backend)
    assert both(1.5, 1.0, -1.0) == 4.5 and both(1.5, -1.0, 1.0) == 4.5
    with pytest.raises(UnboundLocalError, match="cannot access local variable 'a'") as info:
        both(1.5, -1.0, -1.0)
    assert info.value.origin.lineno == _line(found, "return a + x")
    arm = numbax.jit(found.read_in_an_arm, backend=backend)
    assert arm(1.5, -1.0, 1.0) == 7.5 and arm(1.5, 1.0, 2.0) == 10.5 and arm(1.5, 1.0, 0.0) == 4.5
    with pytest.raises(UnboundLocalError, match="cannot access local variable 'a'") as info:
        arm(1.5, -1.0, 0.0)
    assert info.value.origin.lineno == _line(found, "return x + a")
    assert numbax.grad(found.read_in_an_arm, backend=backend)(1.5, -1.0, 2.0) == 7.0
    after_and = numbax.jit(found.read_after_an_and, backend=backend)
    assert after_and(1.5, -1.0, -1.0) == 1.5 and after_and(1.5, 1.0, 1.0) == 3.0
    with pytest.raises(UnboundLocalError, match="cannot access local variable 'a'") as info:
        after_and(1.5, -1.0, 1.0)
    assert info.value.origin.lineno == _line(found, "b = d > 0 and a > 0.0")


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_rule_not_checked_for_complex_numbers_is_refused_where_the_dtype_was_not_inferred(found, backend):
    # found by the wide grammar (seed 34): grad of np.split of np.tile's result dropped the imaginary part of the
    # gradient of a complex input (np.split's rule is checked for real numbers only, and np.tile's result had no
    # inferred dtype); it is refused when compiling, and a value whose dtype is still unknown is checked
    z = np.full((3, 4), -2 - 2j)
    for mode in ("grad", "jvp"):
        with pytest.raises(TypeError, match="no .*derivative of np.split for complex numbers") as info:
            if mode == "grad":
                numbax.grad(found.split_of_a_tile, backend=backend)(z)
            else:
                numbax.jvp(found.split_of_a_tile, (z,), (z,), backend=backend)
        assert info.value.origin.lineno == _line(found, "def split_of_a_tile") + 1
    real = numbax.grad(found.split_of_a_tile, backend=backend)(z.real)
    np.testing.assert_array_equal(real, np.full((3, 4), np.cos(-2.0)))
    if backend == "python":  # np.squeeze's ndim, the data's, known when the code runs (cpu refuses it without axis)
        with pytest.raises(numbax.errors.NumbaxComplexDerivativeError, match="np.split for complex") as info:
            numbax.grad(found.split_of_a_squeeze, backend=backend)(z[:2, :, None])
        assert info.value.origin.lineno == _line(found, "def split_of_a_squeeze") + 1
        np.testing.assert_array_equal(numbax.grad(found.split_of_a_squeeze, backend=backend)(z.real[:2, :, None]),
                                      [[[1.0]] * 4, [[0.0]] * 4])


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_matrix_product_is_not_fused_as_elementwise(found, backend):
    # found by the wide grammar (seed 34): fusion took np.matmul, a NumPy ufunc with core dimensions, for an
    # elementwise one (`v + np.matmul(v, v.T)` in a loop, after grad's code folded the product into the sum)
    from .references import jax, oracles  # in float64 mode

    x = np.arange(12.0).reshape(3, 4) / 10
    want = jax.grad(oracles.to_jax(found.squared_in_a_loop))(x)
    np.testing.assert_allclose(numbax.grad(found.squared_in_a_loop, backend=backend)(x), want, rtol=1e-13)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_forward_mode_of_fmax_selects_as_jax(found, backend):
    # found by the wide grammar (seed 34): the tangent of np.fmax(0.5, norm of zeros) was NaN (the norm's NaN
    # tangent times 0), where JAX selects the side taken
    x, y = np.array([-2.0, 1.0]), np.full((3, 1), -2.0)
    got = numbax.jvp(found.bounded_norm, (x, y), (np.array([1.0, 2.0]), np.ones((3, 1))), backend=backend)[1]
    np.testing.assert_array_equal(got, [1.0, 2.0])


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_gradients_of_values_assigned_under_a_test_on_the_paths_that_skip_it(found, backend):
    # the join after `if c > 0: y = a * 3.0 else: y = x` made a zero cotangent shaped like `a` on the path
    # where `a` was never assigned (UnboundLocalError on the python backend); found by the compositions
    # (make test's own programs, python backend) as grad of a gradient through np.average under a branch
    from .references import jax, oracles  # in float64 mode

    x = np.array([1.0, 2.0])
    for c, want in ((1.0, [6.0, 6.0]), (-1.0, [1.0, 1.0])):
        np.testing.assert_array_equal(numbax.grad(found.assigned_and_read_under_one_test, backend=backend)(x, c),
                                      want)
    y, t = np.arange(12.0).reshape(3, 4) / 7.0, np.array([0.5, -1.0, 2.0, 1.5])
    for x in (np.array([-2.0, 0.75, 1.5, -2.0]), np.array([2.0, 0.75, 1.5, 2.0])):
        gradient = numbax.grad(found.average_under_a_branch, backend=backend)
        got = numbax.grad(_gradient_along_x(gradient), backend=backend)(x, y, t)
        with jax.disable_jit():
            twin = oracles.to_jax(found.average_under_a_branch)
            want = jax.jvp(lambda x: jax.grad(twin)(x, y), (x,), (t,))[1]
        np.testing.assert_allclose(got, want, rtol=1e-12)


def _gradient_along_x(gradient):
    def along(x, y, t):
        return np.sum(gradient(x, y) * t)

    return along


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_hypot_at_the_origin_is_jaxs_and_its_second_derivative_at_equal_magnitudes_is_exact(found, backend):
    # found by the compositions (wide grammar, seed 12): grad of np.hypot at (0, 0) was nan (0 / 0) where JAX gives
    # a half to each operand, and the second derivative after it nan where JAX's is 0. At |x| == |y| JAX's own
    # second derivative is 0 (its max/min formulation's tie) where the function's is y**2 / h**3: numbax's is exact
    from .references import jax, oracles  # in float64 mode

    x, y = np.array([0.0, 3.0, -2.0]), np.array([0.0, 4.0, 2.0])
    got = numbax.grad(found.hypot_of, argnums=(0, 1), backend=backend)(x, y)
    want = jax.grad(oracles.to_jax(found.hypot_of), argnums=(0, 1))(x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-15)
    hessian = numbax.hessian(found.hypot_of, backend=backend)(x, y)
    np.testing.assert_allclose(np.diag(hessian), [0.0, 16.0 / 125.0, 4.0 / 8.0 ** 1.5], rtol=1e-14)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_products_and_sinc_have_numpys_dtypes_and_wrap_as_numpy(found, backend):
    # found by the edge sweep on cpu: np.outer and np.convolve of float32 and int64 were float32 (NumPy: float64,
    # the integers rounded to float32 before), np.vdot of them too, np.vdot of bools counted (NumPy: any of the
    # ands), np.dot/np.vdot/np.inner of int8 vectors summed in int64 (600 where NumPy's int8 sum wraps to 88), and
    # np.sinc of integers was integers (NumPy: float64)
    pairs = [(np.array([1.5, 2.0, 3.0], np.float32), np.array([1, -3, 2 ** 30 + 1])),
             (np.array([100, 100, 100], np.int8), np.array([2, 2, 2], np.int8)),
             (np.array([True, False, True]), np.array([False, True, True]))]
    for a, b in pairs:
        for got, want in zip(numbax.jit(found.products_of, backend=backend)(a, b), found.products_of(a, b)):
            assert np.asarray(got).dtype == np.asarray(want).dtype or (np.ndim(got) == 0 and type(got) is not
                                                                        np.ndarray), (a.dtype, got, want)
            np.testing.assert_array_equal(got, want)
    for x in (np.array([3, 5, 0], np.uint8), np.array([True, False])):
        got = numbax.jit(found.sinc_of, backend=backend)(x)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, np.sinc(x), rtol=1e-14, atol=1e-15)  # sin's last bits are the CPU's


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_default_keywords_named_and_bool_indices_are_numpys(found, backend):
    # found by the edge sweep: np.sort(a, axis=-1) (the default, named) and np.sort(a, kind="stable") failed to
    # compile on cpu (Numba's sort takes neither); np.take of bools took them as a mask (NumPy: the indices 0 and 1)
    # and np.take_along_axis of bools gave a value (NumPy raises IndexError)
    a = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]])
    for got, want in zip(numbax.jit(found.sorted_along_the_last_axis, backend=backend)(a),
                         found.sorted_along_the_last_axis(a)):
        np.testing.assert_array_equal(got, want)
    x = np.arange(3.0)
    for i in (True, np.array([True, False, True])):
        np.testing.assert_array_equal(numbax.jit(found.taken_by_bools, backend=backend)(x, i), np.take(x, i))
    with pytest.raises(IndexError, match="must be an integer array"):
        numbax.jit(found.taken_along_by_bools, backend=backend)(a, np.zeros((2, 1), bool))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_fmod_of_narrow_integers_ufuncs_of_scalars_and_scans_of_numbers_are_numpys(found, backend):
    # found by the edge sweep on cpu (seed 6): np.fmod of int8 or int32 arrays was int64 (NumPy keeps the dtype);
    # np.divide of an int32 and a float32 number was float32 (NumPy's loops: float64); np.cumsum of a number was
    # a number (NumPy flattens it into a vector of one element); np.abs of a complex number stays a ufunc of it
    for a, b in ((np.array([7, -7, 5], np.int8), np.array([2, 2, -3], np.int8)), (np.int16(9), np.int8(4)),
                 (np.array([7, -7], np.int8), np.array([2, 3], np.uint64))):
        s = np.float32(-0.7581181)
        for got, want in zip(numbax.jit(found.remainders_and_scans, backend=backend)(a, b, s),
                             found.remainders_and_scans(a, b, s)):
            assert np.asarray(got).dtype == np.asarray(want).dtype and np.shape(got) == np.shape(want)
            np.testing.assert_array_equal(got, want)
