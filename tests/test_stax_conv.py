"""``numbax.example_libraries.stax``'s ``Conv``, ``GeneralConv``, ``SumPool``, ``AvgPool`` and ``Selu`` against
``jax.example_libraries.stax`` (float64): output shapes, parameters (JAX's bits), outputs, and derivatives
in both modes for parameters and inputs, on tiny inputs; and the refusals."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.example_libraries import stax as jax_stax

import numbax
from numbax import random
from numbax.example_libraries import stax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

X = np.cos(np.arange(2 * 5 * 6 * 3, dtype=float)).reshape(2, 5, 6, 3)
LAYERS = {
    "conv_valid": lambda s: s.Conv(4, (3, 2)),
    "conv_same_strided": lambda s: s.Conv(2, (3, 3), (2, 1), "SAME"),
    "general_conv": lambda s: s.GeneralConv(("NHWC", "HWIO", "NHWC"), 2, (2, 2), padding="SAME"),
    "sum_pool": lambda s: s.SumPool((2, 2)),
    "avg_pool_same": lambda s: s.AvgPool((3, 2), (2, 2), "SAME"),
    "network": lambda s: s.serial(s.Conv(2, (2, 2), padding="SAME"), s.Selu, s.AvgPool((2, 2)), s.Flatten,
                                  s.Dense(3)),
}


def _both(name):
    (init, apply), (jax_init, jax_apply) = LAYERS[name](stax), LAYERS[name](jax_stax)
    shape, params = init(random.PRNGKey(0), X.shape)
    jax_shape, jax_params = jax_init(jax.random.PRNGKey(0), X.shape)
    assert tuple(shape) == tuple(int(d) for d in jax_shape)
    for ours, theirs in zip(jax.tree.leaves(params), jax.tree.leaves(jax_params)):
        np.testing.assert_array_equal(ours, theirs)
    return apply, jax_apply, params


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_outputs_and_gradients_are_jaxs(name):
    apply, jax_apply, params = _both(name)
    want = jax_apply(params, X)
    np.testing.assert_allclose(apply(params, X), want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(numbax.jit(apply)(params, X), want, rtol=1e-12, atol=1e-15)

    def loss(p, x):
        return np.sum(np.sin(apply(p, x)))

    def jax_loss(p, x):
        return jnp.sum(jnp.sin(jax_apply(p, x)))

    grads, jax_grads = numbax.grad(loss, argnums=(0, 1))(params, X), jax.grad(jax_loss, argnums=(0, 1))(params, X)
    for ours, theirs in zip(jax.tree.leaves(grads), jax.tree.leaves(jax_grads)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-13)
    tangents = (jax.tree.map(np.cos, params), np.sin(X))
    np.testing.assert_allclose(numbax.jvp(loss, (params, X), tangents)[1],
                               jax.jvp(jax_loss, (params, X), tangents)[1], rtol=1e-10)


def test_conv_gradient_is_central_differences():
    apply, _, params = _both("conv_same_strided")

    def loss(x):
        return np.sum(apply(params, x) ** 2)

    grad, h = numbax.grad(loss)(X), 1e-6
    for index in [(0, 0, 0, 0), (1, 4, 5, 2), (0, 2, 3, 1)]:
        e = np.zeros_like(X)
        e[index] = h
        np.testing.assert_allclose(grad[index], (loss(X + e) - loss(X - e)) / (2 * h), rtol=1e-6)


def test_selu_is_jaxs():
    x = np.array([-2.0, -0.1, 0.0, 0.5, 3.0])
    np.testing.assert_allclose(numbax.nn.selu(x), jax.nn.selu(x), rtol=1e-15)

    def total(v):
        return np.sum(numbax.nn.selu(v))

    np.testing.assert_allclose(numbax.grad(total)(x), jax.grad(lambda v: jnp.sum(jax.nn.selu(v)))(x), rtol=1e-14)


@pytest.mark.parametrize("make, message", [
    (lambda: stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 2, (2, 2)), "dimension_numbers"),
    (lambda: stax.Conv(2, (2, 2, 2)), "a window of 3 dims"),
    (lambda: stax.Conv(2, (2, 2), padding=((1, 1), (0, 0))), "padding"),
    (lambda: stax.AvgPool((2, 2), spec="NCHW"), "spec"),
])
def test_what_is_not_implemented_is_refused_when_the_layer_is_made(make, message):
    with pytest.raises(numbax.NumbaxStaticArgumentError, match=message):
        make()
