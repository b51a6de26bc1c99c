"""User-written integer indices are bounds-checked (NumPy's IndexError at the user's line); generated ones are not."""
import inspect

import jax
import numpy as np
import pytest

import numbax
from numbax.errors import NumbaxError, NumbaxIndexError
from numbax.generated_source import source_for

jax.config.update("jax_enable_x64", True)

BACKENDS = ("python", "cpu")
X = np.array([.3, -.7, 1.1, .5])
A = np.arange(6.0).reshape(2, 3) / 7.0


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def _expect(exc_info, fn, text, message):
    """The error is NumPy's ``IndexError`` message at ``fn``'s line holding ``text``, as a numbax error."""
    error = exc_info.value
    assert isinstance(error, IndexError) and isinstance(error, NumbaxError)
    head = str(error).splitlines()[0]
    assert head == f"{__file__}:{_line_of(fn, text)}: {message}"
    assert text in str(error).splitlines()[1]


def read_past_end(x):
    return x[10]


def read_negative(x):
    return x * x[-10]


def write_past_end(x):
    y = x.copy()
    y[7] = 1.0
    return y


def write_far_past_end(x):
    y = x.copy()
    y[10 ** 7] = 1.0
    return y


def augmented_write(x, i):
    y = x.copy()
    y[i] += 1.0
    return y


def tuple_index(a, i, j):
    return a[i, j]


def tuple_index_with_slice(a, j):
    return a[:, j].sum()


def after_ellipsis(a, j):
    return a[..., j].sum()


def with_new_axis(a, j):
    return a[None, 0, j]


def loop_dot(x, y, n):
    s = 0.0
    for i in range(n):
        s += x[i] * y[i]
    return s


def loop_store(x, n):
    out = np.zeros(3)
    for i in range(n):
        out[i] = x[i] * 2.0
    return out


def lazy_and(x, i):
    if i < x.shape[0] and x[i] > 0.0:
        return 1.0
    return 0.0


def while_index(x, bound):
    i = 0
    while x[i] < bound:
        i += 1
    return i


def helper_reads(v, k):
    return v[k] * 2.0


def through_helper(x):
    return helper_reads(x, 4)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args, text, message", [
    (read_past_end, (X,), "x[10]", "index 10 is out of bounds for axis 0 with size 4"),
    (read_negative, (X,), "x[-10]", "index -10 is out of bounds for axis 0 with size 4"),
    (write_past_end, (X,), "y[7] = 1.0", "index 7 is out of bounds for axis 0 with size 4"),
    (write_far_past_end, (X,), "y[10 ** 7]", "index 10000000 is out of bounds for axis 0 with size 4"),
    (augmented_write, (X, -5), "y[i] += 1.0", "index -5 is out of bounds for axis 0 with size 4"),
    (tuple_index, (A, 2, 0), "a[i, j]", "index 2 is out of bounds for axis 0 with size 2"),
    (tuple_index, (A, 1, -4), "a[i, j]", "index -4 is out of bounds for axis 1 with size 3"),
    (tuple_index_with_slice, (A, 3), "a[:, j]", "index 3 is out of bounds for axis 1 with size 3"),
    (after_ellipsis, (A, 3), "a[..., j]", "index 3 is out of bounds for axis 1 with size 3"),
    (with_new_axis, (A, 5), "a[None, 0, j]", "index 5 is out of bounds for axis 1 with size 3"),
    (loop_dot, (X, X[:3], 4), "s += x[i] * y[i]", "index 3 is out of bounds for axis 0 with size 3"),
    (loop_store, (X, 4), "out[i] = x[i]", "index 3 is out of bounds for axis 0 with size 3"),
    (while_index, (X, 2.0), "while x[i] < bound", "index 4 is out of bounds for axis 0 with size 4"),
    (through_helper, (X,), "return v[k] * 2.0", "index 4 is out of bounds for axis 0 with size 4"),
])
def test_out_of_bounds_raises_numpys_index_error_at_the_users_line(backend, fn, args, text, message):
    with pytest.raises(IndexError) as numpy_error:
        fn(*args)
    assert str(numpy_error.value) == message
    source_fn = helper_reads if fn is through_helper else fn
    with pytest.raises(NumbaxIndexError) as info:
        numbax.jit(fn, backend=backend)(*args)
    _expect(info, source_fn, text, message)


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_bounds_indices_agree_with_numpy(backend):
    np.testing.assert_allclose(numbax.jit(tuple_index, backend=backend)(A, -1, -3), tuple_index(A, -1, -3))
    np.testing.assert_allclose(numbax.jit(after_ellipsis, backend=backend)(A, -1), after_ellipsis(A, -1))
    np.testing.assert_allclose(numbax.jit(augmented_write, backend=backend)(X, -4), augmented_write(X, -4))
    np.testing.assert_allclose(numbax.jit(loop_dot, backend=backend)(X, X, 4), loop_dot(X, X, 4))
    assert numbax.jit(while_index, backend=backend)(X, 1.0) == while_index(X, 1.0) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_index_that_is_not_evaluated_is_not_checked(backend):
    assert numbax.jit(lazy_and, backend=backend)(X, 7) == 0.0
    assert numbax.jit(lazy_and, backend=backend)(X, 0) == 1.0


def weighted_by_last(x):
    return np.sum(x * x[-1]) + x[0] * x[2]


def weighted_by_missing(x):
    return np.sum(x * x[-10])


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_checked_code_is_right_and_still_checks(backend):
    expected = jax.grad(lambda x: jax.numpy.sum(x * x[-1]) + x[0] * x[2])(X)
    np.testing.assert_allclose(numbax.grad(weighted_by_last, backend=backend)(X), expected, rtol=1e-12)
    with pytest.raises(NumbaxIndexError) as info:
        numbax.grad(weighted_by_missing, backend=backend)(X)
    _expect(info, weighted_by_missing, "x[-10]", "index -10 is out of bounds for axis 0 with size 4")


def loop_energy(x, n):
    s = 0.0
    for i in range(n):
        s += x[i] * x[i + 1]
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_through_a_checked_loop(backend):
    expected = jax.grad(lambda x: sum(x[i] * x[i + 1] for i in range(3)))(X)
    np.testing.assert_allclose(numbax.grad(loop_energy, backend=backend)(X, 3), expected, rtol=1e-12)
    with pytest.raises(NumbaxIndexError) as info:
        numbax.grad(loop_energy, backend=backend)(X, 4)
    _expect(info, loop_energy, "x[i + 1]", "index 4 is out of bounds for axis 0 with size 4")


def second_entry(row):
    return row[1] * row[-1]


def entry_five(row):
    return row[5]


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_checks_the_users_index_per_example(backend):
    np.testing.assert_allclose(numbax.vmap(second_entry, backend=backend)(A), A[:, 1] * A[:, -1])
    with pytest.raises(NumbaxIndexError) as info:
        numbax.vmap(entry_five, backend=backend)(A)
    _expect(info, entry_five, "row[5]", "index 5 is out of bounds for axis 0 with size 3")


def no_user_indexing(x, w):
    return np.sum(np.tanh(x * w) ** 2)


def row_loop(a):
    s = 0.0
    for row in a:
        s += np.sum(row)
    return s


@pytest.mark.parametrize("transform", ["jit", "grad", "vmap"])
def test_generated_indices_are_not_checked(transform):
    for fn, args in ((no_user_indexing, (X, X)), (row_loop, (A,))):
        source = source_for(fn, args if transform != "vmap" else (A,) * len(args), transform=transform)
        assert "check_index" not in source, source


def test_generated_code_shows_one_short_check_per_index():
    source = numbax.source(tuple_index, A, 1, 2)
    where = f"{__file__}:{_line_of(tuple_index, 'a[i, j]')}"
    assert f"rt.check_index(a, i, 0, '{where}:11')" in source
    assert f"rt.check_index(a, j, 1, '{where}:11')" in source


def test_the_error_survives_pickling():
    import pickle

    error = NumbaxIndexError("index 4 is out of bounds for axis 0 with size 4", f"{__file__}:1:0")
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == str(error) and again.where == error.where


def cubic_entry(x):
    return x[1] ** 3 * x[-1]


def slope_of_entry(x):
    return numbax.grad(cubic_entry)(x)[1] + x[0] * x[1]


def slope_past_end(x):
    return numbax.grad(cubic_entry)(x)[9]


def test_second_derivatives_through_checked_indices():
    expected = jax.grad(lambda x: jax.grad(lambda z: z[1] ** 3 * z[-1])(x)[1] + x[0] * x[1])(X)
    np.testing.assert_allclose(numbax.grad(slope_of_entry)(X), expected, rtol=1e-12)
    with pytest.raises(NumbaxIndexError) as info:
        numbax.grad(slope_past_end)(X)
    _expect(info, slope_past_end, "(x)[9]", "index 9 is out of bounds for axis 0 with size 4")
