"""``np.dot``, ``@`` and ``np.matmul`` of operands of two dtypes, of integers, of 0-d and of more than two dims
inside compiled code: NumPy's values and result dtypes (Numba's own ``np.dot`` takes floats of one dtype and at
most two dims only); derivatives through mixed float dtypes and integer data as JAX's."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

RNG = np.random.default_rng(3)
DTYPES = [(np.float32, np.float64), (np.int64, np.float64), (np.float32, np.int64), (np.int64, np.int64),
          (np.int32, np.int64), (np.float64, np.complex128), (np.bool_, np.bool_), (np.bool_, np.float64)]
SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 2, 3), (4, 3, 2)), ((), (3, 2))]


def _array(shape, dtype):
    values = RNG.normal(size=shape) * 3
    return (values > 0) if dtype is np.bool_ else values.astype(dtype)


def dot(a, b):
    return np.dot(a, b)


def matmul_operator(a, b):
    return a @ b


DOT = numbax.jit(dot)
MATMUL = numbax.jit(matmul_operator)


@pytest.mark.parametrize("dtypes", DTYPES, ids=lambda d: f"{np.dtype(d[0])}-{np.dtype(d[1])}")
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_dot_and_matmul_are_numpys(dtypes, shapes):
    a, b = _array(shapes[0], dtypes[0]), _array(shapes[1], dtypes[1])
    want = np.dot(a, b)
    got = DOT(a, b)
    assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6 if np.float32 in dtypes else 1e-13)
    if min(len(shapes[0]), len(shapes[1])) and max(len(shapes[0]), len(shapes[1])) <= 2:
        got = MATMUL(a, b)
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_allclose(got, a @ b, rtol=1e-6 if np.float32 in dtypes else 1e-13)


def loss(w, x):
    return np.sum(np.tanh(np.dot(x, w)))


def jax_loss(w, x):
    return jnp.sum(jnp.tanh(jnp.dot(x, w)))


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("w_dtype, x_dtype", [(np.float64, np.float32), (np.float64, np.int64),
                                              (np.float32, np.float64)])
def test_derivatives_through_two_dtypes_are_jaxs(backend, w_dtype, x_dtype):
    w, x = RNG.normal(size=(3, 2)).astype(w_dtype), (RNG.normal(size=(4, 3)) * 3).astype(x_dtype)
    tol = dict(rtol=1e-5, atol=1e-6) if np.float32 in (w_dtype, x_dtype) else dict(rtol=1e-12, atol=1e-13)
    g = numbax.grad(loss, backend=backend)(w, x)
    assert g.dtype == w.dtype
    np.testing.assert_allclose(g, jax.grad(jax_loss)(w, x), **tol)  # (1 - tanh² of large sums: absolute error)
    t = np.ones_like(w)
    _, tangent = numbax.jvp(lambda v: loss(v, x), (w,), (t,), backend=backend)
    np.testing.assert_allclose(tangent, jax.jvp(lambda v: jax_loss(v, x), (w,), (t,))[1], **tol)
