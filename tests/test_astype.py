"""``x.astype(dtype)`` differentiated in both modes: a float cast passes the derivative (float32 too, with
NumPy's float32 arithmetic), a cast to integers passes none, as in JAX; a cast to complex passes it too (and
back to a real dtype, its real part: ``test_complex_second_order``). The float64 and integer casts are also in
the rule table (``grad_rules_cases``), to second order."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402  (also turns on jax_enable_x64)

X = np.array([0.3, -0.7, 2.6])


def narrowed(x, m):
    y = x.astype(m.float32)
    k = (x * 2).astype(m.int64)
    return m.sum(m.sin(y).astype(m.float64) * k + x.astype(m.float64) ** 2)


def ours(x):
    return narrowed(x, np)


def theirs(x):
    return narrowed(x, jnp)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_float32_and_integer_casts_follow_jax(backend):
    np.testing.assert_allclose(numbax.grad(ours, backend=backend)(X), jax.grad(theirs)(X), rtol=1e-6)
    np.testing.assert_allclose(numbax.jvp(ours, (X,), (np.ones(3),), backend=backend)[1],
                               jax.jvp(theirs, (X,), (jnp.ones(3),))[1], rtol=1e-6)
    np.testing.assert_allclose(numbax.hessian(ours, backend=backend)(X), jax.hessian(theirs)(X), rtol=1e-6,
                               atol=1e-7)


def complex_cast(x):
    return np.sum(np.abs(x.astype(np.complex128) * (1 + 2j)))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_complex_cast_follows_jax(backend):
    # it was refused (the rule was not checked for complex values); a second derivative through np.abs of the
    # complex value is, at np.abs's line
    twin = to_jax(complex_cast)
    np.testing.assert_allclose(numbax.grad(complex_cast, backend=backend)(X), jax.grad(twin)(X), rtol=1e-13)
    np.testing.assert_allclose(numbax.jvp(complex_cast, (X,), (np.ones(3),), backend=backend)[1],
                               jax.jvp(twin, (X,), (jnp.ones(3),))[1], rtol=1e-13)
    with pytest.raises(numbax.NumbaxDifferentiationError, match="rt.abs_slope for complex numbers") as info:
        numbax.hessian(complex_cast, backend="python")(X)
    assert info.value.origin.lineno == complex_cast.__code__.co_firstlineno + 1


def constructed(x, m):
    k = m.array(x * 2, dtype=m.int64)
    y = m.asarray(x, dtype="float32")
    same = m.asarray(x, dtype=m.float64)
    return m.sum(m.sin(y).astype(m.float64) * k + same ** 2 + m.array(y, dtype=m.float64))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_np_array_and_asarray_with_a_dtype_differentiate_as_casts(backend):
    # np.array(x, dtype=...) was refused under every transformation but jit ("unexpected keyword argument")
    def f(x):
        return constructed(x, np)

    def jf(x):
        return constructed(x, jnp)

    assert numbax.jit(f, backend=backend)(X) == pytest.approx(float(jf(X)), rel=1e-6)
    np.testing.assert_allclose(numbax.grad(f, backend=backend)(X), jax.grad(jf)(X), rtol=1e-6)
    np.testing.assert_allclose(numbax.jvp(f, (X,), (np.ones(3),), backend=backend)[1],
                               jax.jvp(jf, (X,), (jnp.ones(3),))[1], rtol=1e-6)
    np.testing.assert_allclose(numbax.hessian(f, backend=backend)(X), jax.hessian(jf)(X), rtol=1e-6, atol=1e-12)
    batch = np.stack([X, X[::-1], X * 3.0])
    np.testing.assert_allclose(numbax.vmap(numbax.grad(f), backend=backend)(batch),
                               np.stack([jax.grad(jf)(b) for b in batch]), rtol=1e-6)


def test_asarray_of_its_own_dtype_is_the_array_itself():
    def written(x):
        y = np.asarray(x, dtype=np.float64)  # NumPy returns x: the write below is a write into x
        y[0] = 5.0
        return x[0] + np.array(x, dtype=np.float64)[1]

    x = X.copy()
    assert numbax.jit(written)(x) == pytest.approx(written(X.copy()))
