"""``numbax.nn`` against ``jax.nn`` (float64): values, gradients in both modes and second derivatives,
outside compiled code (NumPy) and inside it; the derivatives at kinks are JAX's."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import jit_or_eager, to_jax  # noqa: E402,F401  (to_jax's module turns on jax_enable_x64)

X = np.array([[-2.5, -0.3, 0.0, 0.4], [1.7, 6.0, -7.0, 3.2]])
ELEMENTWISE = ["relu", "relu6", "sigmoid", "softplus", "silu", "swish", "gelu", "elu", "leaky_relu", "log_sigmoid"]
ALONG_AXES = ["softmax", "log_softmax", "standardize"]


def gelu_exact(x, m):
    return m.gelu(x, approximate=False)


def elu_half(x, m):
    return m.elu(x, alpha=0.5)


def leaky_fifth(x, m):
    return m.leaky_relu(x, negative_slope=0.2)


def softmax_columns(x, m):
    return m.softmax(x, axis=0)


def log_softmax_columns(x, m):
    return m.log_softmax(x, axis=0)


def logsumexp_rows(x, m):
    return m.logsumexp(x, axis=1)


def logsumexp_all(x, m):
    return m.logsumexp(x)


def _named(name):
    def apply(x, m):
        return getattr(m, name)(x)

    return apply


_KEYWORDS = [gelu_exact, elu_half, leaky_fifth, softmax_columns, log_softmax_columns, logsumexp_rows, logsumexp_all]
CASES = [_named(n) for n in ELEMENTWISE + ALONG_AXES] + _KEYWORDS
IDS = ELEMENTWISE + ALONG_AXES + [f.__name__ for f in _KEYWORDS]
WEIGHTS = np.linspace(0.5, 1.5, X.size).reshape(X.shape)


def _loss(case, m, xp):
    def loss(x):
        out = case(x, m)
        if out.ndim == 2:
            return xp.sum(out * WEIGHTS)
        return xp.sum(out * WEIGHTS[:, 0]) if out.ndim == 1 else out * 1.5

    return loss


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_and_gradients_follow_jax(case):
    np.testing.assert_allclose(case(X, nn), case(X, jax.nn), rtol=1e-12, atol=1e-14)
    ours, theirs = _loss(case, nn, np), _loss(case, jax.nn, jnp)
    np.testing.assert_allclose(numbax.jit(ours, backend="python")(X), theirs(X), rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(ours, backend="python")(X), jit_or_eager(jax.grad(theirs))(X), rtol=1e-10,
                               atol=1e-14)
    tangent = np.cos(X)
    np.testing.assert_allclose(numbax.jvp(ours, (X,), (tangent,), backend="python")[1],
                               jit_or_eager(lambda x, t: jax.jvp(theirs, (x,), (t,))[1])(X, tangent), rtol=1e-10,
                               atol=1e-14)
    np.testing.assert_allclose(numbax.hessian(ours, backend="python")(X), jit_or_eager(jax.hessian(theirs))(X),
                               rtol=1e-8, atol=1e-12)


def mlp(w, x):
    hidden = nn.gelu(x @ w)
    return np.sum(nn.log_softmax(hidden) * nn.one_hot(np.array([0, 2]), 3))


def jax_mlp(w, x):
    hidden = jax.nn.gelu(x @ w)
    return jnp.sum(jax.nn.log_softmax(hidden) * jax.nn.one_hot(jnp.array([0, 2]), 3))


def test_compiled_gradient_of_a_small_network():
    w = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    np.testing.assert_allclose(numbax.grad(mlp)(w, X), jax.grad(jax_mlp)(w, X), rtol=1e-10)


def encode(labels):
    return nn.one_hot(labels, 4)


def test_one_hot_is_jaxs():
    labels = np.array([2, 0, 1])
    np.testing.assert_array_equal(nn.one_hot(labels, 4), jax.nn.one_hot(labels, 4))
    np.testing.assert_array_equal(numbax.jit(encode, backend="python")(labels), jax.nn.one_hot(labels, 4))
