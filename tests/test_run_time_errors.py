"""Python's ZeroDivisionError for Python numbers, and NumPy's shape ValueErrors, as numbax errors at the user's line."""
import inspect

import numpy as np
import pytest

import numbax
from numbax.errors import NumbaxError, NumbaxShapeError, NumbaxZeroDivisionError

BACKENDS = ("python", "cpu")
X = np.array([.3, -.7, 1.1, .5])


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def _raised(exc_type, fn, args):
    """What Python and NumPy raise running ``fn`` themselves."""
    with pytest.raises(exc_type) as info:
        fn(*args)
    return str(info.value)


def length_floor_zero(x):
    return len(x) // 0


def divide(x, a, b):
    return a / b


def modulo(x, a, b):
    return a % b


def floor_divide(x, a, b):
    return a // b


def divide_in_place(x, a, b):
    s = a
    s /= b
    return s


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args, text", [
    (length_floor_zero, (X,), "len(x) // 0"),
    (divide, (X, 1.0, 0.0), "a / b"),
    (divide, (X, 1, 0), "a / b"),
    (modulo, (X, 3, 0), "a % b"),
    (modulo, (X, 3.0, 0.0), "a % b"),
    (floor_divide, (X, 3.0, 0.0), "a // b"),
    (divide_in_place, (X, 2.0, 0.0), "s /= b"),
])
def test_python_numbers_divided_by_zero_raise_zero_division_error(backend, fn, args, text):
    message = _raised(ZeroDivisionError, fn, args)
    with pytest.raises(NumbaxZeroDivisionError) as info:
        numbax.jit(fn, backend=backend)(*args)
    assert isinstance(info.value, ZeroDivisionError) and isinstance(info.value, NumbaxError)
    assert str(info.value).splitlines()[0] == f"{__file__}:{_line_of(fn, text)}: {message}"


def divide_arrays(x, b):
    return x / b


def divide_numpy_scalar(x, b):
    return np.float64(x[0]) / b


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_values_divided_by_zero_keep_numpys_inf(backend):
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(numbax.jit(divide_arrays, backend=backend)(X, 0.0), X / 0.0)
        assert numbax.jit(divide_numpy_scalar, backend=backend)(X, 0.0) == np.inf
    assert numbax.jit(divide, backend=backend)(X, 1.0, 4.0) == 0.25
    assert numbax.jit(modulo, backend=backend)(X, 7, 3) == 1


def add_mismatched(x):
    return x + np.ones(3)


def ufunc_mismatched(x):
    return np.multiply(x, np.ones(3))


def dot_mismatched(x):
    return np.dot(np.ones((2, 3)), x)


def matmul_mismatched(x):
    return np.ones((2, 3)) @ x


def reshape_method(x):
    return x.reshape(3, 2)


def reshape_function(x):
    return np.reshape(x, (5,))


def reshape_unknown_dim(x):
    return x.reshape(-1, 3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, text", [
    (add_mismatched, "x + np.ones(3)"),
    (ufunc_mismatched, "np.multiply(x, np.ones(3))"),
    (dot_mismatched, "np.dot(np.ones((2, 3)), x)"),
    (matmul_mismatched, "np.ones((2, 3)) @ x"),
    (reshape_method, "x.reshape(3, 2)"),
    (reshape_function, "np.reshape(x, (5,))"),
    (reshape_unknown_dim, "x.reshape(-1, 3)"),
])
def test_shape_mismatches_raise_numpys_value_error_at_the_users_line(backend, fn, text):
    message = _raised(ValueError, fn, (X,))
    with pytest.raises(NumbaxShapeError) as info:
        numbax.jit(fn, backend=backend)(X)
    assert isinstance(info.value, ValueError)
    assert str(info.value).splitlines()[0] == f"{__file__}:{_line_of(fn, text)}: {message}"


def fitting_shapes(x, m):
    return (x + x[::-1]) @ m.reshape(4, 2) + np.dot(m.reshape(2, 4), x).sum() + x.reshape(-1, 2).sum()


def row_of(m):
    return m + np.ones(3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fitting_shapes_run_as_numpy_does(backend):
    m = np.arange(8.0)
    np.testing.assert_allclose(numbax.jit(fitting_shapes, backend=backend)(X, m), fitting_shapes(X, m))


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_checks_each_examples_shapes(backend):
    with pytest.raises(NumbaxShapeError) as info:
        numbax.vmap(row_of, backend=backend)(np.ones((2, 4)))
    assert f"{__file__}:{_line_of(row_of, 'm + np.ones(3)')}" in str(info.value)


def sum_of_no_copies(x):
    return np.sum(np.repeat(x, 0)) + np.sum(x * x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_repeat_with_no_copies_is_the_rest(backend):
    np.testing.assert_allclose(numbax.grad(sum_of_no_copies, backend=backend)(X), 2.0 * X, rtol=1e-15)
    assert numbax.jit(sum_of_no_copies, backend=backend)(X) == sum_of_no_copies(X)


def eigenvalues(m):
    return np.linalg.eigvals(m)


def eigen_pairs(m):
    w, v = np.linalg.eig(m)
    return w, v


ROTATION = np.array([[0.0, -1.0], [1.0, 0.0]])
SYMMETRIC = np.array([[2.0, 1.0], [1.0, 3.0]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_eig_of_a_real_matrix_with_real_eigenvalues_is_numpys(backend):
    np.testing.assert_allclose(np.sort(numbax.jit(eigenvalues, backend=backend)(SYMMETRIC)),
                               np.sort(np.linalg.eigvals(SYMMETRIC)), rtol=1e-14)
    w, v = numbax.jit(eigen_pairs, backend=backend)(SYMMETRIC)
    np.testing.assert_allclose(SYMMETRIC @ v, v * w, atol=1e-14)


def test_eig_of_a_real_matrix_with_complex_eigenvalues_says_what_to_do():
    np.testing.assert_allclose(numbax.jit(eigenvalues, backend="python")(ROTATION), np.linalg.eigvals(ROTATION))
    for fn, text in ((eigenvalues, "np.linalg.eigvals(m)"), (eigen_pairs, "np.linalg.eig(m)")):
        with pytest.raises(numbax.NumbaxDomainError) as info:
            numbax.jit(fn)(ROTATION)
        assert isinstance(info.value, ValueError)
        assert str(info.value).startswith(f"{__file__}:{_line_of(fn, text)}: {text.split('(')[0]} of a real matrix")
        assert "astype(np.complex128)" in str(info.value)
    complex_values = numbax.jit(eigenvalues)(ROTATION.astype(np.complex128))
    np.testing.assert_allclose(np.sort(complex_values.imag), [-1.0, 1.0], atol=1e-14)
    np.testing.assert_allclose(complex_values.real, 0.0, atol=1e-14)


def halve_until(a, b):
    n = 0
    while a // b:
        a = a // 2
        b = b - 1
        n += 1
    return n


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_while_test_is_checked_on_every_iteration(backend):
    assert numbax.jit(halve_until, backend=backend)(40, 10) == halve_until(40, 10) == 3
    message = _raised(ZeroDivisionError, halve_until, (40, 2))
    with pytest.raises(NumbaxZeroDivisionError) as info:
        numbax.jit(halve_until, backend=backend)(40, 2)
    assert str(info.value).splitlines()[0] == f"{__file__}:{_line_of(halve_until, 'while a // b')}: {message}"


def integer_power(x, n, k):
    return n ** k


def numpy_integer_power(x, n, k):
    return np.power(n, k)


def integer_power_in_place(x, n, k):
    m = n.copy()
    m[0] **= k
    m **= k
    return m


def python_int_to_a_negative_constant(x, n, k):
    return len(x) ** -2 + 2 ** (len(x) - 2)


I = np.array([3, -2, 0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", [
    (integer_power, (I, -1)), (integer_power, (2, I)), (integer_power, (I[0], np.int64(-1))),
    (numpy_integer_power, (I, I)), (integer_power_in_place, (I, -1)), (integer_power, (I, I[::-1])),
])
def test_integers_to_negative_integer_powers_raise_numpys_value_error(backend, fn, args):
    # compiled code gave 0 where NumPy raises (2 ** i of an i with a negative element), silently
    message = _raised(ValueError, fn, (X,) + args)
    with pytest.raises(numbax.NumbaxIntegerPowerError, match=r"test_run_time_errors.py:\d+: " + message) as info:
        numbax.jit(fn, backend=backend)(X, *args)
    assert isinstance(info.value, ValueError)
    positive = tuple(np.abs(a) for a in args)
    np.testing.assert_array_equal(numbax.jit(fn, backend=backend)(X, *positive), fn(X, *positive))


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_ints_to_negative_powers_are_floats_or_refused(backend):
    # a constant exponent: Python's float (compiled code gave 0); one known at run time: its type would depend
    # on its value, so a negative one raises, saying what to write
    assert numbax.jit(python_int_to_a_negative_constant, backend=backend)(X, 0, 0) == \
        python_int_to_a_negative_constant(X, 0, 0) == 4 ** -2 + 4
    with pytest.raises(numbax.NumbaxIntegerPowerError, match="is a float in Python") as info:
        numbax.jit(integer_power, backend=backend)(X, 2, -1)
    assert "float(n) ** k" in str(info.value)
    assert numbax.jit(integer_power, backend=backend)(X, 2, 3) == 8


def shifts(i, k):
    return np.left_shift(1, i) + (i >> k)


@pytest.mark.parametrize("backend", BACKENDS)
def test_shift_counts_beyond_the_integers_bits_are_refused(backend):
    # compiled code gave -2**63 for np.left_shift(1, 64), where NumPy gives 0 (LLVM's shift is undefined there)
    within = np.array([0, 7, 63])
    np.testing.assert_array_equal(numbax.jit(shifts, backend=backend)(within, 2), shifts(within, 2))
    for i, k, count in ((np.array([0, 64]), 1, 64), (within, -1, -1)):
        with pytest.raises(numbax.NumbaxUnimplementedValueError,
                           match=rf"test_run_time_errors.py:\d+: a shift count of {count} is outside 0..63"):
            numbax.jit(shifts, backend=backend)(i, k)


def item_of(x):
    return x.item() * 2.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_item_of_an_array_of_more_than_one_element_raises_numpys_value_error_at_the_users_line(backend):
    message = _raised(ValueError, item_of, (X,))
    with pytest.raises(NumbaxShapeError, match=r"test_run_time_errors.py:\d+: " + message) as info:
        numbax.jit(item_of, backend=backend)(X)
    assert isinstance(info.value, ValueError)
    assert numbax.jit(item_of, backend=backend)(X[:1]) == 2.0 * X[0]
