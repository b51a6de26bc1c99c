"""``numbax.random.multivariate_normal`` against ``jax.random.multivariate_normal`` (float64): the same standard
normal bits, so the same samples to rounding, for each method, outside and inside compiled code."""
import jax
import numpy as np
import pytest

import numbax
from grad_corpus.oracles import to_jax  # noqa: F401  (turns on jax_enable_x64)
from numbax import random

COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])
MEAN = np.array([1.0, -2.0, 0.5])


def sample_total(mean, key):
    return np.sum(random.multivariate_normal(key, mean, COV, (5,)))


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_samples_are_jaxs_outside_and_inside_jit(method):
    theirs = np.asarray(jax.random.multivariate_normal(jax.random.PRNGKey(3), MEAN, COV, (5,), method=method))
    ours = random.multivariate_normal(random.PRNGKey(3), MEAN, COV, (5,), method=method)
    assert ours.shape == (5, 3)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    jitted = numbax.jit(lambda k, m, c: random.multivariate_normal(k, m, c, (5,), method=method))
    np.testing.assert_allclose(jitted(random.PRNGKey(3), MEAN, COV), theirs, rtol=1e-12, atol=1e-14)


def test_default_shape_batched_mean_and_float32():
    mean = np.stack([MEAN, -MEAN])
    theirs = np.asarray(jax.random.multivariate_normal(jax.random.PRNGKey(1), mean, COV))
    np.testing.assert_allclose(random.multivariate_normal(random.PRNGKey(1), mean, COV), theirs, rtol=1e-12)
    with pytest.raises(numbax.NumbaxError, match="known at compile time"):  # inside compiled code: give shape
        numbax.jit(lambda k, m, c: random.multivariate_normal(k, m, c))(random.PRNGKey(1), MEAN, COV)
    single = random.multivariate_normal(random.PRNGKey(2), MEAN.astype(np.float32), COV.astype(np.float32))
    assert single.dtype == np.float32


def test_the_sample_mean_moves_with_the_mean_in_reverse_mode():
    grad = numbax.grad(sample_total)(MEAN, random.PRNGKey(0))
    np.testing.assert_allclose(grad, np.full(3, 5.0), rtol=1e-12)


def test_bad_arguments_raise_jaxs_errors():
    with pytest.raises(ValueError, match="method must be one of"):
        random.multivariate_normal(random.PRNGKey(0), MEAN, COV, method="qr")
    with pytest.raises(ValueError, match="cov.shape"):
        random.multivariate_normal(random.PRNGKey(0), MEAN, COV[:2, :2])
