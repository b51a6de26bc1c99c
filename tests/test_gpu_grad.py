"""Per-example derivatives on the GPU backend, in Numba's CUDA simulator: ``vmap`` of ``grad``,
``value_and_grad`` and ``jvp`` of a function of numbers is one kernel, each thread running one example's
forward and reverse (or tangent) code, reverse mode's tapes in device memory (a ``while`` loop's growing by
relaunch). Each agrees with the CPU backend (rtol 1e-12) and, where JAX can differentiate the program (not
through a ``while`` loop), with JAX in float64 (``jax.vmap`` of ``jax.grad``/``jax.jvp``).
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax import tree_util

jax.config.update("jax_enable_x64", True)


def smooth(x, w):
    if x > 0.0:
        return w * np.tanh(x) + x * x
    return w * np.exp(x)


def smooth_jax(x, w):
    return jnp.where(x > 0.0, w * jnp.tanh(x) + x * x, w * jnp.exp(x))


def ode(y0, k, steps):
    y = y0
    for _ in range(steps):
        y = y + 0.01 * (-k * y + np.sin(y))
    return y


def ode_jax(y0, k, steps):
    y = y0
    for _ in range(steps):
        y = y + 0.01 * (-k * y + jnp.sin(y))
    return y


def pendulum(theta, k, steps):
    v = 0.0
    for _ in range(steps):
        theta, v = theta + 0.05 * v, v - 0.05 * k * np.sin(theta)
    return theta * theta + v


def pendulum_jax(theta, k, steps):
    v = 0.0
    for _ in range(steps):
        theta, v = theta + 0.05 * v, v - 0.05 * k * jnp.sin(theta)
    return theta * theta + v


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12:
        x = x - (x * x - a) / (2.0 * x)
    return x


X = np.linspace(-1.0, 1.5, 5)
W = np.linspace(0.5, 2.0, 5)
K = np.linspace(1.0, 2.0, 4)
Y0 = np.linspace(0.1, 1.0, 4)
STEPS = 12

# id, numbax function, JAX function, arguments, in_axes
CASES = [
    ("grad_branches", numbax.grad(smooth, argnums=(0, 1)), jax.grad(smooth_jax, argnums=(0, 1)), (X, W), 0),
    ("value_and_grad_branches", numbax.value_and_grad(smooth), jax.value_and_grad(smooth_jax), (X, W), 0),
    ("grad_ode_tape", numbax.grad(ode, argnums=(0, 1)), jax.grad(ode_jax, argnums=(0, 1)), (Y0, K, STEPS),
     (0, 0, None)),
    ("grad_pendulum_two_states", numbax.grad(pendulum, argnums=(0, 1)), jax.grad(pendulum_jax, argnums=(0, 1)),
     (Y0, K, STEPS), (0, 0, None)),
    ("value_and_grad_shared_k", numbax.value_and_grad(ode, argnums=1), jax.value_and_grad(ode_jax, argnums=1),
     (Y0, 1.5, STEPS), (0, None, None)),
]


def tangent_of_ode(y0, k, steps):
    return numbax.jvp(lambda a, b: ode(a, b, steps), (y0, k), (1.0, 0.5))


def tangent_of_ode_jax(y0, k, steps):
    return jax.jvp(lambda a, b: ode_jax(a, b, steps), (y0, k), (1.0, 0.5))


def tangent_of_smooth(x, w):
    return numbax.jvp(smooth, (x, w), (1.0, 0.0))


def tangent_of_smooth_jax(x, w):
    return jax.jvp(smooth_jax, (x, w), (1.0, 0.0))


CASES += [
    ("jvp_ode", tangent_of_ode, tangent_of_ode_jax, (Y0, K, STEPS), (0, 0, None)),
    ("jvp_branches", tangent_of_smooth, tangent_of_smooth_jax, (X, W), 0),
]


def assert_agrees(got, expected, rtol):
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected)
    for e, g in zip(tree_util.tree_leaves(expected), tree_util.tree_leaves(got)):
        e, g = np.asarray(e), np.asarray(g)
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-300)


def _steps_static(fn, in_axes):
    """JAX traces the loops over a static trip count; the function of the mapped arguments only."""
    if in_axes == 0:
        return fn, 0
    return (lambda a, b: fn(a, b, STEPS)), in_axes[:2]


@pytest.mark.parametrize("name, fn, jax_fn, args, in_axes", CASES, ids=[c[0] for c in CASES])
def test_per_example_derivatives_agree_with_the_cpu_backend_and_jax(gpu, name, fn, jax_fn, args, in_axes):
    expected = numbax.vmap(fn, in_axes)(*args)
    out = numbax.vmap(fn, in_axes, backend="gpu")(*args)
    for leaf in tree_util.tree_leaves(out):
        assert not isinstance(leaf, np.ndarray), f"a result on the host: {leaf!r}"
    got = numbax.device_get(out)
    assert_agrees(got, expected, rtol=1e-12)
    jax_fn, jax_axes = _steps_static(jax_fn, in_axes)
    oracle = jax.vmap(jax_fn, in_axes=jax_axes)(*args[:2])
    assert_agrees(got, tree_util.tree_map(np.asarray, tree_util.tree_structure(expected).unflatten(
        jax.tree_util.tree_leaves(oracle))), rtol=1e-10)
    source = numbax.source(numbax.vmap(fn, in_axes, backend="gpu"), *args)
    assert source.count("@cuda.jit") == 1, source


def test_the_tape_of_a_for_loop_lives_in_device_memory_one_slot_per_example():
    source = numbax.source(numbax.vmap(numbax.grad(ode, argnums=1), (0, 0, None), backend="gpu"), Y0, K, STEPS)
    assert "tape = gr.empty((len(range(steps)), 1, batch), np.float64)" in source, source
    assert "tape[row, 0, i] = y" in source and "np.empty" not in source, source


def spiral_out(v, limit):
    while v < limit:
        v = v * 1.5 + 0.1 * np.sin(v)
    return v


def test_per_example_gradient_through_a_while_loop(gpu):
    """A Newton solve: its while loop's tape grows in the kernel (the driver launches again when it is full)."""
    a = np.linspace(1.5, 3.0, 4)
    expected = numbax.vmap(numbax.grad(newton_sqrt))(a)
    got = numbax.device_get(numbax.vmap(numbax.grad(newton_sqrt), backend="gpu")(a))
    assert_agrees(got, expected, rtol=1e-12)
    np.testing.assert_allclose(got, 0.5 / np.sqrt(a), rtol=1e-10)


def test_a_while_loop_longer_than_the_first_tape_relaunches_with_longer_tapes(gpu):
    v = np.array([0.5, 1.0, 3.0, 1e3])  # 20 and more iterations where the first tape holds 16 rows
    mapped = numbax.vmap(numbax.grad(spiral_out), in_axes=(0, None))
    got = numbax.device_get(numbax.vmap(numbax.grad(spiral_out), in_axes=(0, None), backend="gpu")(v, 1e5))
    assert_agrees(got, mapped(v, 1e5), rtol=1e-12)
    source = numbax.source(numbax.vmap(numbax.grad(spiral_out), in_axes=(0, None), backend="gpu"), v, 1e5)
    assert "gr.empty((16 * _scale_1, 1, batch), np.float64)" in source and "return" in source, source
