"""A new array and a view of one stay what NumPy makes them, in compiled code and in both modes.

Found by the differential tester's forward-mode checks: ``y = x.copy()`` followed by a write into ``x`` gave
``y`` the tangent of the written ``x`` (forward mode passed ``dx`` itself as ``y``'s tangent), forward over
reverse through an in-place ``sort`` gave zero second derivatives (the gradient's saved copy shared its
tangent's memory), and compiled code copied where NumPy returns a view (``np.diag`` of a matrix,
``np.diagonal``, ``np.flip`` along an axis, a real array's ``conj()``), so a later write into the array did
not show. Each case here writes into the array after taking the copy or the view, and compares with NumPy
(values) or with the exact directional derivative (the functions are linear in ``x``, so a central difference
is exact up to rounding) or JAX.
"""
from __future__ import annotations

import numpy as np
import pytest

import numbax
from numbax.errors import NumbaxDifferentiationError, NumbaxTypingError

X = np.array([1.5, -2.0, 0.5])
T = np.array([1.0, 2.0, 3.0])
A = np.arange(9.0).reshape(3, 3) - 3.5


def copied(x):
    y = x.copy()
    x[0] = 7.0
    x[1] += x[2]
    return y * 2.0 + x


def copied_by_function(x):
    y = np.copy(x)
    x[0] = 7.0
    return y * 2.0 + x


def positive(x):
    y = +x
    x[1] = 7.0
    return y * 2.0 + x


def conjugated_ufunc(x):
    y = np.conj(x)
    x[2] *= 3.0
    return y * 2.0 + x


def kept_and_updated(x):
    x_old = x.copy()
    x[0] = x[0] * 3.0
    return x - x_old


def transposed_view(x):
    y = np.transpose(x)
    x[0] = 7.0
    return y * 2.0 + x


def _directional(fn, x, t, h=1e-3):
    return (fn(x + h * t) - fn(x - h * t)) / (2 * h)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("fn", [copied, copied_by_function, positive, conjugated_ufunc, kept_and_updated])
def test_a_copys_tangent_keeps_the_value_it_was_made_from(fn, backend):
    out, tangent = numbax.jvp(fn, (X.copy(),), (T.copy(),), backend=backend)
    np.testing.assert_allclose(out, fn(X.copy()), rtol=1e-13)
    np.testing.assert_allclose(tangent, _directional(fn, X, T), rtol=1e-9)


@pytest.mark.parametrize("transform", ["jvp", "grad"])
def test_a_write_into_an_array_whose_transpose_is_read_later_is_refused(transform):
    with pytest.raises(NumbaxDifferentiationError, match=r"test_view_semantics.py:\d+.*may share"):
        if transform == "jvp":
            numbax.jvp(transposed_view, (X.copy(),), (T.copy(),), backend="python")
        else:
            numbax.grad(lambda x: np.sum(transposed_view(x)), backend="python")(X.copy())


def sort_then_square(y):
    y.sort()
    return np.sum(y * y)


def in_place_sum(x, s):
    v = x.copy()
    v += x * s
    return np.sum(v * v)


def while_loop(x, s):
    acc = s
    k = 0
    while k < 3 and acc < 10.0:
        acc = acc * np.sin(x[k]) + acc ** 2
        k += 1
    return acc


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_forward_over_reverse_through_an_in_place_sort(backend):
    hvp = numbax.jvp(numbax.grad(sort_then_square, backend=backend), (X.copy(),), (T,), backend=backend)[1]
    np.testing.assert_allclose(hvp, 2.0 * T, rtol=1e-13)


def test_forward_over_reverse_through_an_in_place_update_and_a_while_loops_tape():
    from grad_corpus.oracles import to_jax  # noqa: F401 - JAX in float64
    import jax
    import jax.numpy as jnp

    hvp = numbax.jvp(numbax.grad(in_place_sum, argnums=(0, 1), backend="python"), (X.copy(), 0.5), (T, 0.25),
                     backend="python")[1]
    want = jax.jvp(jax.grad(lambda x, s: jnp.sum((x + x * s) ** 2), argnums=(0, 1)), (X, 0.5), (T, 0.25))[1]
    np.testing.assert_allclose(hvp[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(hvp[1], want[1], rtol=1e-12)

    def unrolled(x, s):
        acc = s
        for k in range(3):
            acc = jnp.where(acc < 10.0, acc * jnp.sin(x[k]) + acc ** 2, acc)
        return acc

    xv = np.array([0.3, 0.7, 1.1])
    got = numbax.hessian(while_loop, argnums=(0, 1), backend="python")(xv, 0.8)
    want = jax.hessian(unrolled, argnums=(0, 1))(xv, 0.8)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(got[i][j], want[i][j], rtol=1e-12)


def diag_of_matrix(a):
    y = np.diag(a)
    a[0, 0] = 70.0
    a[2, 2] *= 3.0
    return y * 2.0


def diagonal_function(a):
    y = np.diagonal(a, 1)
    a[0, 1] = 70.0
    return y * 2.0


def diagonal_method(a):
    y = a.diagonal()
    a[1, 1] += 10.0
    return y * 2.0


def flipped_along_an_axis(a):
    y = np.flip(a, axis=1)
    a[0, 0] = 70.0
    a[1, 0] += 10.0
    return y * 2.0


def conj_method_of_reals(x):
    y = x.conj()
    x[0] = 7.0
    return y * 2.0 + x


def conjugate_method_of_reals(x):
    y = x.conjugate()
    x[0] = 7.0
    return y * 2.0 + x


def view_method(x):
    y = x.view()
    x[1] = 7.0
    return y * 2.0 + x


@pytest.mark.parametrize("fn, arg", [(diag_of_matrix, A), (diagonal_function, A), (diagonal_method, A),
                                     (flipped_along_an_axis, A), (conj_method_of_reals, X),
                                     (conjugate_method_of_reals, X), (view_method, X)])
def test_compiled_views_see_later_writes_as_numpys_do(fn, arg):
    np.testing.assert_array_equal(numbax.jit(fn)(arg.copy()), fn(arg.copy()))


def strided_diagonal(a):
    return np.diag(a[:, ::2]) + np.diagonal(a[::-1], -1)


def test_a_diagonal_of_a_strided_array_is_numpys():
    b = np.arange(20.0).reshape(4, 5)
    np.testing.assert_array_equal(numbax.jit(strided_diagonal)(b), strided_diagonal(b))


def mask_of_a_matrix(a):
    return a[a > 0] * 2.0


def test_numbas_own_failure_is_reported_at_the_users_line():
    with pytest.raises(NumbaxTypingError, match=r"test_view_semantics.py:\d+.*inside Numba"):
        numbax.jit(mask_of_a_matrix)(A.copy())


def reshaped_columns(x):
    v = x[:, ::2].reshape(2, 2, 3)  # a view in NumPy: the strides allow one
    v[0, 0, 0] = 99.0
    return x


def reshaped_steps(x):
    v = x[::2].reshape(-1)
    v[1] = 99.0
    return x


def reshaped_transpose(x):
    v = x.T.reshape(-1)  # a copy in NumPy: the transpose's elements are not in C order
    v[0] = 99.0
    return x + v[1]


@pytest.mark.parametrize("fn, arg", [(reshaped_columns, np.arange(24.0).reshape(2, 12)),
                                     (reshaped_steps, np.arange(6.0)),
                                     (reshaped_transpose, np.arange(6.0).reshape(2, 3))])
def test_a_reshape_of_a_strided_array_is_a_view_where_numpys_is(fn, arg):
    # compiled code copied every array not in C order, so a write into the reshape was lost
    np.testing.assert_array_equal(numbax.jit(fn)(arg.copy()), fn(arg.copy()))


def test_view_strides_are_numpys_for_strided_views():
    from numbax.runtime.arrays import view_strides

    rng = np.random.default_rng(0)
    for _ in range(400):
        a = np.arange(24.0).reshape(rng.permutation([2, 3, 4]))
        v = a[tuple(slice(None, None, int(s)) for s in rng.choice([1, 2, -1], 3))]
        v = v.T if rng.random() < 0.3 else v
        sizes = [d for d in range(1, v.size + 1) if v.size % d == 0]
        first = int(rng.choice(sizes))
        new = (first, v.size // first)
        try:
            w = v.view()
            w.shape = new
            want = w.strides
        except AttributeError:  # NumPy would copy
            want = None
        ok, strides = view_strides(v.shape, v.strides, v.itemsize, np.array(new))
        assert ok == (want is not None)
        if ok:
            assert all(s == t for s, t, n in zip(strides, want, new) if n != 1)
