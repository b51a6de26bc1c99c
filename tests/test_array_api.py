"""NumPy 2's array-API functions (``numbax.primitives.array_api``: ``np.vecdot``, ``np.matvec``, ``np.vecmat``,
``np.matrix_transpose``, ``np.astype``, ``np.cumulative_sum``/``prod`` and ``np.linalg``'s ``vecdot``,
``matmul``, ``tensordot``, ``outer``, ``cross``, ``diagonal``, ``trace``, ``matrix_transpose``,
``vector_norm``, ``matrix_norm``) beyond the rule table (``grad_rules_cases``, which checks both modes to
second order against JAX and finite differences): values and dtypes against NumPy, complex operands (the
first operand of ``vecdot`` and ``vecmat`` conjugated) against JAX, ``vmap`` against stacking, and the
refusals: keywords numbax does not implement and NumPy's errors, at the user's line."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402  (turns on jax_enable_x64)

A = np.array([[1.5, -2.0, 0.5], [3.0, 0.25, -1.0], [0.5, 2.0, 4.0]])


def every_function(a):
    v = a[0]
    return (np.vecdot(a, v), np.vecdot(a, a, axis=0), np.linalg.vecdot(a, v), np.matvec(a, v), np.vecmat(v, a),
            np.matrix_transpose(a), np.linalg.matrix_transpose(a[None]),
            np.astype(a, np.complex64 if a.dtype.kind == "c" else np.float32),
            np.cumulative_sum(a, axis=1), np.cumulative_sum(v, include_initial=True),
            np.cumulative_prod(a, axis=0, include_initial=True), np.linalg.matmul(a, a), np.linalg.tensordot(a, a),
            np.linalg.outer(v, a[1]), np.linalg.cross(a, v), np.linalg.diagonal(a, offset=-1),
            np.linalg.trace(a[None], offset=1))


def every_norm(a):
    return (np.linalg.vector_norm(a), np.linalg.vector_norm(a, axis=0, keepdims=True),
            np.linalg.vector_norm(a[None], axis=(0, 2), ord=1), np.linalg.vector_norm(a, axis=(1, 0), ord=np.inf),
            np.linalg.vector_norm(a, axis=(0, 1), ord=0, keepdims=True), np.linalg.matrix_norm(a),
            np.linalg.matrix_norm(a, ord=np.inf, keepdims=True))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_values_and_dtypes_match_numpy(dtype):
    a = A.astype(dtype) if dtype != np.complex128 else A + 0.5j * A[::-1]
    for got, want in zip(numbax.jit(every_function)(a), every_function(a)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_norms_match_numpy(dtype):
    a = A.astype(dtype)
    for got, want in zip(numbax.jit(every_norm)(a), every_norm(a)):
        assert np.asarray(got).dtype == np.asarray(want).dtype and np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def conjugated(z, w):
    return np.real(np.sum(np.vecdot(z, w) * np.vecmat(z[0], w)) + np.vecdot(w, z, axis=0)[1] * 1j)


def test_complex_operands_follow_jax_in_both_modes():
    z = A + 1j * A.T
    w = np.cos(A) - 0.5j * A
    want = jax.grad(to_jax(conjugated), argnums=(0, 1))(z, w)
    got = numbax.grad(conjugated, argnums=(0, 1), backend="python")(z, w)
    for g, h in zip(got, want):
        np.testing.assert_allclose(g, h, rtol=1e-12)
    tangents = (np.sin(A) + 0.25j, A.T - 1j)
    _, tangent = numbax.jvp(conjugated, (z, w), tangents, backend="python")
    np.testing.assert_allclose(tangent, jax.jvp(to_jax(conjugated), (z, w), tangents)[1], rtol=1e-12)


def batched(a, x):
    return np.vecdot(a, x) + np.matvec(a, x) * np.linalg.vector_norm(a, axis=(0, 1))


def test_vmap_matches_stacking():
    a = np.stack([A, A * 0.5, A.T])
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0], [2.0, 0.0, -2.0]])
    np.testing.assert_allclose(numbax.vmap(batched)(a, x), np.stack([batched(a[i], x[i]) for i in range(3)]),
                               rtol=1e-12)


def short_vectors(a, v):
    return np.vecdot(a, v)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_vectors_of_different_lengths_raise_at_the_users_line(backend):
    with pytest.raises(ValueError, match=r"test_array_api.py:\d+"):
        numbax.jit(short_vectors, backend=backend)(A, np.ones(2))


def vecdot_out(a):
    return np.vecdot(a, a, out=np.zeros(3))


def astype_no_copy(a):
    return np.astype(a, np.float32, copy=False)


def trace_dtype(a):
    return np.linalg.trace(a, dtype=np.float32)


@pytest.mark.parametrize("fn, keyword", [(vecdot_out, "out"), (astype_no_copy, "copy"), (trace_dtype, "dtype")])
def test_keywords_numbax_does_not_implement_are_refused_at_the_users_line(fn, keyword):
    with pytest.raises(numbax.NumbaxSpecializationError, match=f"`{keyword}=`") as info:
        numbax.jit(fn)(A)
    assert info.value.origin.filename == __file__


def transpose_of_a_vector(a):
    return np.matrix_transpose(a[0])


def cumulative_without_axis(a):
    return np.cumulative_sum(a)


@pytest.mark.parametrize("fn", [transpose_of_a_vector, cumulative_without_axis])
def test_numpys_errors_are_numpys(fn):
    with pytest.raises(ValueError) as numpys:
        fn(A)
    with pytest.raises(ValueError) as numbaxs:
        numbax.jit(fn, backend="python")(A)
    assert str(numbaxs.value) in str(numpys.value)


def test_coverage_and_the_jnp_namespace_have_them():
    import numbax.numpy as numbax_numpy

    table = numbax.coverage()
    for name in ("vecdot", "matvec", "vecmat", "matrix_transpose", "astype", "cumulative_sum", "cumulative_prod",
                 "linalg.vecdot", "linalg.matmul", "linalg.tensordot", "linalg.outer", "linalg.cross",
                 "linalg.diagonal", "linalg.trace", "linalg.matrix_transpose", "linalg.vector_norm",
                 "linalg.matrix_norm"):
        assert table[f"numpy.{name}"] == {"grad": True, "jvp": True}, name
        assert hasattr(jnp, name.split(".")[-1]) or hasattr(jnp.linalg, name.split(".")[-1])
    assert numbax_numpy.vecdot is np.vecdot and numbax_numpy.linalg.vector_norm is np.linalg.vector_norm
