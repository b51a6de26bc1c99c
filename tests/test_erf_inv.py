"""``numbax.lax.erf_inv`` and ``numbax.scipy.special.erfinv`` against ``jax.lax.erf_inv`` (float64) and SciPy:
values outside and inside compiled code, both modes, a second derivative and central differences."""
import jax
import numpy as np
import pytest
import scipy.special

import numbax
import numbax.scipy.special
from grad_corpus.oracles import to_jax  # noqa: F401  (turns on jax_enable_x64)

U = np.array([-0.999999, -0.97, -0.5, -1e-9, 0.0, 0.02, 0.3, 0.8, 0.9999, 1.0 - 1e-12])


def loss(u):
    return np.sum(numbax.lax.erf_inv(u) * u)


def jax_loss(u):
    return (jax.lax.erf_inv(u) * u).sum()


def scipy_loss(u):
    return np.sum(numbax.scipy.special.erfinv(u) ** 2)


def test_values_against_jax_and_scipy():
    want = np.asarray(jax.lax.erf_inv(U))
    np.testing.assert_allclose(numbax.lax.erf_inv(U), want, rtol=1e-12)
    for backend in ("python", "cpu"):
        np.testing.assert_allclose(numbax.jit(numbax.lax.erf_inv, backend=backend)(U), want, rtol=1e-12)
        np.testing.assert_allclose(numbax.jit(numbax.scipy.special.erfinv, backend=backend)(U),
                                   scipy.special.erfinv(U), rtol=1e-12)
    edges = numbax.jit(numbax.lax.erf_inv)(np.array([-1.0, 1.0, 1.5]))
    np.testing.assert_array_equal(edges[:2], [-np.inf, np.inf])
    assert np.isnan(edges[2]) and np.isnan(jax.lax.erf_inv(1.5))


def test_both_modes_and_second_order_against_jax():
    want = np.asarray(jax.grad(jax_loss)(U))
    np.testing.assert_allclose(numbax.grad(loss)(U), want, rtol=1e-12)
    t = np.linspace(-1.0, 1.0, U.size)
    np.testing.assert_allclose(numbax.jvp(loss, (U,), (t,))[1], float(jax.jvp(jax_loss, (U,), (t,))[1]), rtol=1e-12)
    inner = U[1:-2]
    np.testing.assert_allclose(numbax.hessian(loss)(inner), np.asarray(jax.hessian(jax_loss)(inner)), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(numbax.grad(scipy_loss)(inner), np.asarray(jax.grad(
        lambda u: (jax.scipy.special.erfinv(u) ** 2).sum())(inner)), rtol=1e-12)


@pytest.mark.parametrize("u", [-0.6, 0.05, 0.7])
def test_the_derivative_is_the_true_one(u):
    h = 1e-6
    central = (scipy.special.erfinv(u + h) - scipy.special.erfinv(u - h)) / (2 * h)
    np.testing.assert_allclose(numbax.grad(numbax.lax.erf_inv)(u), central, rtol=1e-8)
