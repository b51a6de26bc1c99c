"""Dims taken as equal: reverse mode's code may assume that parameters' dims it combines are equal.

Where ``a + b`` combines arrays (NumPy would also broadcast a length 1) or ``a @ b`` multiplies them,
the generated gradient takes their dims as equal, checks them first (``rt.assume_equal``), and so can
fuse the MLP's adjoints into loops and sum a bias's gradient over the batch inside them. A call where
one differs (a bias of length 1) raises ``rt.ShapesDiffer`` at the check, and numbax runs the code it
generates without the assumption. Gradients are compared with JAX's on both backends, for both kinds
of call, in either order.
"""
import re

import jax
import jax.numpy as jnp
import numba
import numpy as np
import pytest

import numbax
from numbax import runtime as rt

jax.config.update("jax_enable_x64", True)

BACKENDS = ["python", "cpu"]


def two_layers(params, x, y):
    (w1, b1), (w2, b2) = params
    h = np.tanh(x @ w1 + b1)
    return np.mean((h @ w2 + b2 - y) ** 2)


def _jax(fn):
    return type(fn)(fn.__code__, dict(fn.__globals__, np=jnp), fn.__name__)


def _params(hidden_bias: int, rng):
    return [(rng.normal(size=(3, 5)), rng.normal(size=hidden_bias)), (rng.normal(size=(5, 2)), rng.normal(size=2))]


def _check(got, want):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_length_one_bias_runs_the_general_code_and_both_agree_with_jax(backend):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    grad = numbax.grad(two_layers, backend=backend)
    for hidden_bias in (5, 1, 5, 1):  # the checked code, the general code, and back
        params = _params(hidden_bias, rng)
        _check(grad(params, x, y), jax.grad(_jax(two_layers))(params, x, y))


def test_value_and_grad_falls_back_too():
    rng = np.random.default_rng(1)
    params, x, y = _params(1, rng), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    value, grads = numbax.value_and_grad(two_layers)(params, x, y)
    want_value, want_grads = jax.value_and_grad(_jax(two_layers))(params, x, y)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    _check(grads, want_grads)


def test_the_source_checks_the_dims_and_fuses_the_bias_gradients():
    rng = np.random.default_rng(2)
    source = numbax.grad(two_layers).lower_source(_params(5, rng), rng.normal(size=(4, 3)), rng.normal(size=(4, 2)))
    assert "rt.assume_equal(params_0_1.shape[0], params_0_0.shape[1])" in source
    assert "dparams_0_1 = np.zeros(params_0_0.shape[1])" in source
    assert re.search(r"dparams_0_1\[j1_\d\] \+= dt", source)
    assert "rt.unbroadcast" not in source


def test_inside_jit_the_gradient_takes_no_dims_as_equal():
    """A gradient generated inside a compiled function has no caller to fall back to."""
    def step(params, x, y):
        return numbax.grad(two_layers)(params, x, y)

    rng = np.random.default_rng(3)
    params, x, y = _params(1, rng), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    jitted = numbax.jit(step)
    _check(jitted(params, x, y), jax.grad(_jax(two_layers))(params, x, y))
    assert "assume_equal" not in jitted.lower_source(params, x, y)


def bias_sum(x, b):
    return np.sum(np.sin(x + b) * x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bias_shape", [(3, 4), (4,), (1,)])
def test_bias_gradients_summed_over_leading_axes(bias_shape, backend):
    rng = np.random.default_rng(4)
    x, b = rng.normal(size=(2, 3, 4)), rng.normal(size=bias_shape)
    got = numbax.grad(bias_sum, argnums=(0, 1), backend=backend)(x, b)
    _check(got, jax.grad(_jax(bias_sum), argnums=(0, 1))(x, b))


@pytest.mark.parametrize("check", [rt.assume_equal, numba.njit(lambda n, m: rt.assume_equal(n, m))])
def test_assume_equal_raises_shapes_differ(check):
    check(3, 3)
    with pytest.raises(rt.ShapesDiffer):
        check(3, 1)
