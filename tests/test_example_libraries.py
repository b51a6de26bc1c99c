"""``numbax.example_libraries`` (``optimizers``, ``stax``) and ``numbax.nn.initializers`` against JAX's (float64):
initial parameters bit for bit, layers' values, optimizer trajectories outside and inside ``numbax.jit``,
gradients through a network in both modes, and an MLP trained with Adam."""
import functools
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.example_libraries import optimizers as jax_optimizers
from jax.example_libraries import stax as jax_stax

import numbax
from numbax import random, tree_util
from numbax.example_libraries import optimizers, stax
from numbax.nn import initializers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

RTOL = 1e-12


def assert_trees_close(ours, theirs, rtol=RTOL, atol=1e-14):
    ours_leaves, ours_def = tree_util.tree_flatten(ours)
    theirs_leaves = jax.tree.leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves), (ours_def, jax.tree.structure(theirs))
    for a, b in zip(ours_leaves, theirs_leaves):
        b = np.asarray(b)
        assert np.shape(a) == b.shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# -- initializers ---------------------------------------------------------------------------------------------

SCALINGS = ["glorot_normal", "glorot_uniform", "xavier_normal", "xavier_uniform", "lecun_normal", "lecun_uniform",
            "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform"]


@pytest.mark.parametrize("name", SCALINGS)
@pytest.mark.parametrize("shape", [(5, 7), (3, 3, 4, 6)])
def test_variance_scaling_initializers_are_jaxs_bits(name, shape):
    ours = getattr(initializers, name)()(random.PRNGKey(3), shape)
    theirs = np.asarray(getattr(jax.nn.initializers, name)()(jax.random.PRNGKey(3), shape))
    assert ours.dtype == theirs.dtype == np.float64
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("name, arguments", [("normal", (0.3,)), ("uniform", (0.3,)), ("truncated_normal", (0.3,)),
                                             ("constant", (1.5,))])
def test_distribution_initializers_are_jaxs_bits(name, arguments):
    ours = getattr(initializers, name)(*arguments)(random.PRNGKey(5), (4, 6))
    theirs = np.asarray(getattr(jax.nn.initializers, name)(*arguments)(jax.random.PRNGKey(5), (4, 6)))
    assert np.array_equal(ours, theirs)


def test_zeros_ones_and_custom_axes_and_float32():
    key, jkey = random.PRNGKey(1), jax.random.PRNGKey(1)
    assert np.array_equal(initializers.zeros(key, (2, 3)), jax.nn.initializers.zeros(jkey, (2, 3)))
    assert np.array_equal(initializers.ones(key, (2,)), jax.nn.initializers.ones(jkey, (2,)))
    ours = initializers.glorot_normal(in_axis=0, out_axis=(1, 2), dtype=np.float32)(key, (3, 4, 5))
    theirs = np.asarray(jax.nn.initializers.glorot_normal(in_axis=0, out_axis=(1, 2), dtype=jnp.float32)(
        jkey, (3, 4, 5)))
    assert ours.dtype == np.float32 and np.array_equal(ours, theirs)


def test_initializers_refuse_what_they_do_not_draw():
    with pytest.raises(numbax.NumbaxDtypeError, match="real floating"):
        initializers.glorot_normal()(random.PRNGKey(0), (2, 2), np.complex128)
    with pytest.raises(ValueError, match="in_axis"):
        initializers.he_normal()(random.PRNGKey(0), (3,))
    with pytest.raises(ValueError, match="invalid mode"):
        initializers.variance_scaling(1.0, "fan_sum", "normal")(random.PRNGKey(0), (2, 2))
    with pytest.raises(ValueError, match="invalid distribution"):
        initializers.variance_scaling(1.0, "fan_in", "cauchy")(random.PRNGKey(0), (2, 2))


# -- optimizers -----------------------------------------------------------------------------------------------

def quadratic_loss(params, x):
    residual = x @ params["w"] + params["b"]
    return np.sum(residual * residual) + 0.25 * np.sum(params["w"] ** 4)


def jax_quadratic_loss(params, x):
    residual = x @ params["w"] + params["b"]
    return jnp.sum(residual * residual) + 0.25 * jnp.sum(params["w"] ** 4)


X = np.random.default_rng(0).normal(size=(4, 3))
PARAMS = {"w": np.random.default_rng(1).normal(size=(3, 2)), "b": np.random.default_rng(2).normal(size=2)}


def schedules(module):
    """Each schedule of ``module`` (``optimizers`` or JAX's), made with the same arguments."""
    return {"exponential_decay": module.exponential_decay(0.1, 3, 0.5),
            "inverse_time_decay": module.inverse_time_decay(0.1, 2, 0.5),
            "inverse_time_decay_staircase": module.inverse_time_decay(0.1, 2, 0.5, staircase=True),
            "polynomial_decay": module.polynomial_decay(0.1, 6, 0.01, power=2.0),
            "piecewise_constant": module.piecewise_constant([2, 5], [0.1, 0.05, 0.01])}


OPTIMIZERS = {  # name -> arguments after the step size
    "sgd": (), "momentum": (0.9,), "nesterov": (0.8,), "adagrad": (), "rmsprop": (), "rmsprop_momentum": (),
    "adam": (), "adamax": (), "sm3": (0.8,)}
CASES = [(name, 0.05) for name in OPTIMIZERS] + [
    ("sgd", "exponential_decay"), ("momentum", "inverse_time_decay"), ("adam", "inverse_time_decay_staircase"),
    ("rmsprop", "polynomial_decay"), ("sgd", "piecewise_constant")]


def made(module, name, step_size):
    if isinstance(step_size, str):
        step_size = schedules(module)[step_size]
    return getattr(module, name)(step_size, *OPTIMIZERS[name])


def jax_trajectory(name, step_size, steps=10):
    init, update, get_params = made(jax_optimizers, name, step_size)
    state = init(jax.tree.map(jnp.asarray, PARAMS))
    for i in range(steps):
        state = update(i, jax.grad(jax_quadratic_loss)(get_params(state), X), state)
    return get_params(state)


@pytest.mark.parametrize("name, step_size", CASES)
def test_optimizer_trajectory_matches_jax_outside_and_inside_jit(name, step_size):
    init, update, get_params = made(optimizers, name, step_size)

    @numbax.jit
    def step(i, opt_state, x):
        params = get_params(opt_state)
        return update(i, numbax.grad(quadratic_loss)(params, x), opt_state)

    outside = inside = init(PARAMS)
    for i in range(10):
        outside = update(i, numbax.grad(quadratic_loss)(get_params(outside), X), outside)
        inside = step(i, inside, X)
    expected = jax_trajectory(name, step_size)
    assert_trees_close(get_params(outside), expected)
    assert_trees_close(get_params(inside), expected)
    assert tree_util.tree_structure(inside) == tree_util.tree_structure(outside)


@pytest.mark.parametrize("name", sorted(schedules(optimizers)))
def test_schedules_match_jax(name):
    ours, theirs = schedules(optimizers)[name], schedules(jax_optimizers)[name]
    for i in range(12):
        np.testing.assert_allclose(ours(i), float(theirs(i)), rtol=RTOL)


def test_make_schedule():
    assert optimizers.make_schedule(0.3)(7) == 0.3
    schedule = optimizers.exponential_decay(0.1, 2, 0.5)
    assert optimizers.make_schedule(schedule) is schedule
    with pytest.raises(TypeError):
        optimizers.make_schedule([0.1, 0.2])
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [0.1, 0.2])


def test_optimizer_state_is_jaxs_pytree():
    state = optimizers.adam(0.1)[0](PARAMS)
    jax_state = jax_optimizers.adam(0.1)[0](jax.tree.map(jnp.asarray, PARAMS))
    assert isinstance(state, optimizers.OptimizerState)
    leaves, treedef = tree_util.tree_flatten(state)
    assert len(leaves) == len(jax.tree.leaves(jax_state)) == 6
    assert_trees_close(state, jax_state)
    assert tree_util.tree_unflatten(treedef, leaves).tree_def == state.tree_def
    identity = numbax.jit(lambda s: s)(state)
    assert isinstance(identity, optimizers.OptimizerState) and identity.subtree_defs == state.subtree_defs
    assert_trees_close(identity, jax_state)


def test_pack_and_unpack_optimizer_state_round_trip():
    state = optimizers.momentum(0.1, 0.9)[0](PARAMS)
    marked = optimizers.unpack_optimizer_state(state)
    assert set(marked) == {"w", "b"} and isinstance(marked["w"], optimizers.JoinPoint)
    packed = optimizers.pack_optimizer_state(marked)
    assert packed.tree_def == state.tree_def and packed.subtree_defs == state.subtree_defs
    for a, b in zip(tree_util.tree_leaves(packed), tree_util.tree_leaves(state), strict=True):
        assert a is b
    with pytest.raises(TypeError, match="JoinPoint"):
        optimizers.pack_optimizer_state({"w": np.ones(2)})


def test_update_refuses_a_gradient_of_another_structure():
    init, update, get_params = optimizers.sgd(0.1)
    state = init(PARAMS)
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        update(0, {"w": PARAMS["w"]}, state)
    with pytest.raises(TypeError, match="did not match the parameter tree"):  # JAX's error, inside jit too
        numbax.jit(lambda s: update(0, [s.packed_state[0][0]], s))(state)


def test_l2_norm_and_clip_grads_match_jax_outside_and_inside_jit():
    jax_params = jax.tree.map(jnp.asarray, PARAMS)
    np.testing.assert_allclose(optimizers.l2_norm(PARAMS), float(jax_optimizers.l2_norm(jax_params)), rtol=RTOL)
    for max_norm in (0.5, 100.0):
        expected = jax_optimizers.clip_grads(jax_params, max_norm)
        assert_trees_close(optimizers.clip_grads(PARAMS, max_norm), expected)
        assert_trees_close(numbax.jit(optimizers.clip_grads)(PARAMS, max_norm), expected)
    np.testing.assert_allclose(numbax.jit(optimizers.l2_norm)(PARAMS), float(jax_optimizers.l2_norm(jax_params)),
                               rtol=RTOL)


# -- stax ------------------------------------------------------------------------------------------------------

def residual(module):
    return module.serial(module.FanOut(2), module.parallel(module.Dense(4), module.Identity), module.FanInSum)


def concatenated(module):
    return module.serial(module.FanOut(2), module.parallel(module.Dense(2), module.Tanh), module.FanInConcat())


LAYERS = {  # name -> (layer of a module, input shape)
    "Dense": (lambda m: m.Dense(3), (5, 4)),
    "Dense_3d": (lambda m: m.Dense(3, m.glorot(), m.randn()), (2, 3, 4)),
    "Relu": (lambda m: m.Relu, (5, 4)), "Tanh": (lambda m: m.Tanh, (5, 4)), "Sigmoid": (lambda m: m.Sigmoid, (5, 4)),
    "Softplus": (lambda m: m.Softplus, (5, 4)), "Elu": (lambda m: m.Elu, (5, 4)),
    "LeakyRelu": (lambda m: m.LeakyRelu, (5, 4)), "Exp": (lambda m: m.Exp, (5, 4)),
    "LogSoftmax": (lambda m: m.LogSoftmax, (5, 4)), "Softmax": (lambda m: m.Softmax, (5, 4)),
    "Gelu": (lambda m: m.Gelu, (5, 4)), "Identity": (lambda m: m.Identity, (5, 4)),
    "Flatten": (lambda m: m.Flatten, (2, 3, 2)),
    "BatchNorm": (lambda m: m.BatchNorm(axis=0), (6, 3)),
    "BatchNorm_default_axes": (lambda m: m.BatchNorm(beta_init=m.randn(), gamma_init=m.randn()), (2, 3, 2, 2)),
    "BatchNorm_no_scale": (lambda m: m.BatchNorm(axis=(0, 1), scale=False, beta_init=m.randn()), (3, 2, 4)),
    "residual": (residual, (5, 4)), "concatenated": (concatenated, (5, 4)),
    "serial_with_elementwise": (lambda m: m.serial(m.Dense(3), m.Elu, m.Dense(2), m.Softmax), (5, 4)),
}


def inputs(shape):
    return np.random.default_rng(7).normal(size=shape) * 1.5


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_init_is_jaxs_and_apply_matches_jax_outside_and_inside_jit(name):
    layer, shape = LAYERS[name]
    init_fun, apply_fun = layer(stax)
    jax_init, jax_apply = layer(jax_stax)
    out_shape, params = init_fun(random.PRNGKey(2), shape)
    jax_out_shape, jax_params = jax_init(jax.random.PRNGKey(2), shape)
    assert tuple(out_shape) == tuple(jax_out_shape)
    assert tree_util.tree_structure(params) == tree_util.tree_structure(jax.tree.map(np.asarray, jax_params))
    for ours, theirs in zip(tree_util.tree_leaves(params), jax.tree.leaves(jax_params), strict=True):
        assert np.array_equal(ours, theirs)
    x = inputs(shape)
    expected = np.asarray(jax_apply(jax_params, jnp.asarray(x)))
    assert expected.shape == tuple(out_shape)
    np.testing.assert_allclose(apply_fun(params, x), expected, rtol=RTOL, atol=1e-14)
    np.testing.assert_allclose(numbax.jit(apply_fun)(params, x), expected, rtol=RTOL, atol=1e-14)


MLP = [lambda m: m.Dense(5), lambda m: m.Tanh, lambda m: m.Dense(3), lambda m: m.LogSoftmax]


def mlp(module):
    return module.serial(*[layer(module) for layer in MLP])


def cross_entropy(predict, np_module):
    def loss(params, x, targets):
        return -np_module.mean(np_module.sum(predict(params, x) * targets, axis=1))
    return loss


def mlp_problem():
    x = inputs((6, 4))
    targets = np.eye(3)[[0, 2, 1, 1, 0, 2]]
    (_, params), (_, jax_params) = mlp(stax)[0](random.PRNGKey(4), (-1, 4)), mlp(jax_stax)[0](
        jax.random.PRNGKey(4), (-1, 4))
    return x, targets, params, jax_params


def test_grad_through_a_network_matches_jax_in_both_modes_and_central_differences():
    x, targets, params, jax_params = mlp_problem()
    loss = cross_entropy(mlp(stax)[1], np)
    jax_loss = cross_entropy(mlp(jax_stax)[1], jnp)
    assert_trees_close(numbax.grad(loss)(params, x, targets), jax.grad(jax_loss)(jax_params, x, targets))
    tangent = tree_util.tree_map(lambda p: np.cos(np.arange(p.size).reshape(p.shape)), params)
    value, derivative = numbax.jvp(lambda p: loss(p, x, targets), (params,), (tangent,))
    jax_value, jax_derivative = jax.jvp(lambda p: jax_loss(p, x, targets), (jax_params,),
                                        (jax.tree.map(jnp.asarray, tangent),))
    np.testing.assert_allclose(value, float(jax_value), rtol=RTOL)
    np.testing.assert_allclose(derivative, float(jax_derivative), rtol=RTOL)
    h = 1e-6
    shifted = [loss(tree_util.tree_map(lambda p, t: p + s * h * t, params, tangent), x, targets) for s in (1, -1)]
    np.testing.assert_allclose(derivative, (shifted[0] - shifted[1]) / (2 * h), rtol=1e-7)


def test_second_derivatives_through_a_network_match_jax():
    x, targets, params, jax_params = mlp_problem()
    loss = cross_entropy(mlp(stax)[1], np)
    jax_loss = cross_entropy(mlp(jax_stax)[1], jnp)
    ours = numbax.hessian(lambda v: loss(params, v, targets[:2]))(x[:2])
    theirs = jax.hessian(lambda v: jax_loss(jax_params, v, targets[:2]))(x[:2])
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-10, atol=1e-13)


def test_mlp_trained_with_adam_inside_jit_follows_jaxs_losses():
    x, targets, params, jax_params = mlp_problem()
    loss = cross_entropy(mlp(stax)[1], np)
    jax_loss = cross_entropy(mlp(jax_stax)[1], jnp)
    opt_init, opt_update, get_params = optimizers.adam(1e-2)
    jax_init, jax_update, jax_get_params = jax_optimizers.adam(1e-2)

    @numbax.jit
    def update(i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, numbax.grad(loss)(params, *batch), opt_state)

    @jax.jit
    def jax_step(i, opt_state, batch):
        return jax_update(i, jax.grad(jax_loss)(jax_get_params(opt_state), *batch), opt_state)

    opt_state, jax_state = opt_init(params), jax_init(jax_params)
    losses, jax_losses = [], []
    for i in range(20):
        opt_state, jax_state = update(i, opt_state, (x, targets)), jax_step(i, jax_state, (x, targets))
        losses.append(loss(get_params(opt_state), x, targets))
        jax_losses.append(float(jax_loss(jax_get_params(jax_state), x, targets)))
    np.testing.assert_allclose(losses, jax_losses, rtol=1e-11)
    assert losses[-1] < 0.8 * losses[0]


def dropout_network(module, mode="train"):
    return module.serial(module.Dense(6), module.Dropout(0.6, mode), module.Relu)


def test_dropout_draws_jaxs_mask_from_the_key_inside_compiled_code_too():
    x = inputs((4, 3))
    (init_fun, apply_fun), (jax_init, jax_apply) = dropout_network(stax), dropout_network(jax_stax)
    _, params = init_fun(random.PRNGKey(0), (-1, 3))
    _, jax_params = jax_init(jax.random.PRNGKey(0), (-1, 3))
    expected = np.asarray(jax_apply(jax_params, x, rng=jax.random.PRNGKey(9)))
    ours = apply_fun(params, x, rng=random.PRNGKey(9))
    np.testing.assert_allclose(ours, expected, rtol=RTOL, atol=1e-14)
    assert 0 < np.count_nonzero(ours == 0) < ours.size
    with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
        apply_fun(params, x)
    jitted = numbax.jit(lambda p, v, k: apply_fun(p, v, rng=k))
    np.testing.assert_allclose(jitted(params, x, random.PRNGKey(9)), expected, rtol=RTOL, atol=1e-14)
    grads = numbax.grad(lambda p, v, k: np.sum(apply_fun(p, v, rng=k) ** 2))(params, x, random.PRNGKey(9))
    jax_grads = jax.grad(lambda p, v, k: jnp.sum(jax_apply(p, v, rng=k) ** 2))(jax_params, x, jax.random.PRNGKey(9))
    for ours_leaf, jax_leaf in zip(numbax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(jax_grads)):
        np.testing.assert_allclose(ours_leaf, jax_leaf, rtol=RTOL, atol=1e-14)
    test_apply, jax_test_apply = dropout_network(stax, "test")[1], dropout_network(jax_stax, "test")[1]
    np.testing.assert_allclose(numbax.jit(lambda p, v, k: test_apply(p, v, rng=k))(params, x, random.PRNGKey(9)),
                               np.asarray(jax_test_apply(jax_params, x, rng=jax.random.PRNGKey(9))),
                               rtol=RTOL, atol=1e-14)


def test_what_is_not_provided_is_a_missing_name_and_other_keywords_are_refused():
    for name in ("ConvTranspose", "Conv1DTranspose", "GeneralConvTranspose", "shape_dependent"):
        assert not hasattr(stax, name)
    with pytest.raises(ImportError):
        from numbax.example_libraries.stax import ConvTranspose  # noqa: F401
    init_fun, apply_fun = mlp(stax)
    _, params = init_fun(random.PRNGKey(0), (-1, 4))
    with pytest.raises(numbax.NumbaxError, match="unexpected or repeated argument `mode`"):
        numbax.jit(lambda p, v: apply_fun(p, v, mode="train"))(params, inputs((2, 4)))


@optimizers.optimizer
def signed_descent(step_size):
    def init(x0):
        return x0, np.zeros_like(x0)

    def update(i, g, state):
        x, count = state
        return x - step_size * np.sign(g), count + 1.0

    def get_params(state):
        return state[0]

    return init, update, get_params


def test_a_users_optimizer_over_pytrees_outside_and_inside_jit():
    init, update, get_params = signed_descent(0.1)
    step = numbax.jit(lambda i, s, x: update(i, numbax.grad(quadratic_loss)(get_params(s), x), s))
    outside = inside = init(PARAMS)
    expected = dict(PARAMS)
    for i in range(3):
        grads = numbax.grad(quadratic_loss)(expected, X)
        expected = {k: expected[k] - 0.1 * np.sign(grads[k]) for k in expected}
        outside = update(i, numbax.grad(quadratic_loss)(get_params(outside), X), outside)
        inside = step(i, inside, X)
    for state in (outside, inside):
        for k in expected:
            np.testing.assert_allclose(get_params(state)[k], expected[k], rtol=RTOL)
        assert all(np.all(leaf[1] == 3.0) for leaf in state.packed_state)


@pytest.mark.parametrize("x0", [np.float64(1.5), np.arange(24.0).reshape(2, 3, 4) - 10.0])
def test_sm3_keeps_one_accumulator_per_axis_of_a_scalar_and_a_3d_array(x0):
    init, update, get_params = optimizers.sm3(0.1)
    jax_init, jax_update, jax_get_params = jax_optimizers.sm3(0.1)
    step = numbax.jit(lambda i, state, g: update(i, g, state))
    outside = inside = init(x0)
    theirs = jax_init(jnp.asarray(x0))
    for i in range(4):
        g = np.sin(np.asarray(get_params(outside)) * (i + 1)) + 0.1
        outside, inside, theirs = update(i, g, outside), step(i, inside, g), jax_update(i, jnp.asarray(g), theirs)
    assert np.shape(get_params(inside)) == np.shape(x0)
    assert_trees_close(get_params(outside), jax_get_params(theirs))
    assert_trees_close(get_params(inside), jax_get_params(theirs))
