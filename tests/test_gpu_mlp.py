"""The seed's MLP (``examples/mlp.py``, the README's example) trains on the GPU backend, in Numba's CUDA
simulator (issue 15, item 4): its inputs are put on the GPU once, its own ``jit``-compiled step (``grad`` of
the loss and the SGD update) runs on them with the parameters staying device arrays from step to step, and
its losses agree with the CPU backend's step by step (rtol 1e-12); its gradient on the GPU agrees with
``jax.grad`` in float64."""
import importlib.util
import os

import jax
import jax.numpy as jnp
import numpy as np

import numbax
from numbax import tree_util

jax.config.update("jax_enable_x64", True)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = 4


def _seed_mlp():
    """``examples/mlp.py`` as a module."""
    spec = importlib.util.spec_from_file_location("seed_mlp", os.path.join(ROOT, "examples", "mlp.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mlp = _seed_mlp()


def _problem(batch=24):
    key, x_key = numbax.random.split(numbax.random.PRNGKey(0))
    params = mlp.init_params(key, [10, 20, 1])
    x = numbax.random.normal(x_key, (batch, 10))
    return params, x, np.sin(x[:, :1])


def _losses(params, x, y):
    """The loss before each of ``STEPS`` steps of the seed's own step, and the parameters after them."""
    loss = numbax.jit(mlp.loss)
    losses = []
    for _ in range(STEPS):
        losses.append(float(numbax.device_get(loss(params, x, y))))
        params = mlp.step(params, x, y)
        for leaf in tree_util.tree_leaves(params):
            assert hasattr(leaf, "__cuda_array_interface__") == hasattr(x, "__cuda_array_interface__"), leaf
    return losses, params


def test_the_seed_mlp_trains_on_the_gpu_with_its_inputs_put_there_once(gpu):
    params, x, y = _problem()
    want_losses, want_params = _losses(params, x, y)
    got_losses, got_params = _losses(*numbax.device_put((params, x, y), gpu))
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-12)
    assert got_losses[-1] < 0.9 * got_losses[0]
    got_params = numbax.device_get(got_params)
    for g, w in zip(tree_util.tree_leaves(got_params), tree_util.tree_leaves(want_params)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)


def _loss_jax(params, x, y):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - y) ** 2)


def test_the_seed_mlps_gradient_on_the_gpu_agrees_with_jax(gpu):
    params, x, y = _problem()
    value, grads = numbax.value_and_grad(mlp.loss)(*numbax.device_put((params, x, y), gpu))
    want_value, want_grads = jax.value_and_grad(_loss_jax)(jax.tree_util.tree_map(jnp.asarray, params), x, y)
    np.testing.assert_allclose(numbax.device_get(value), want_value, rtol=1e-12)
    for g, w in zip(tree_util.tree_leaves(numbax.device_get(grads)), jax.tree_util.tree_leaves(want_grads)):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12, atol=1e-15)
