"""Transformations made afresh (``numbax.grad(loss)(params)`` in a loop) are found again: the same object for
the same function and options, a new one for a new function or other options; results checked against JAX
(float64) and NumPy; the cache's bound; configuration that changes generated code still taking effect."""
import gc
import os
import sys
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax import transform_cache

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

X = np.array([0.3, -1.2, 0.7])
Y = np.array([1.5, 0.4, -0.6])
RTOL = 1e-12


def f(x, y):
    return np.sum(np.sin(x) * y)


def f_jax(x, y):
    return jnp.sum(jnp.sin(x) * y)


def g(x):
    return np.sin(x) * x[0]


def g_jax(x):
    return jnp.sin(x) * x[0]


def cube(v):
    return np.sum(v ** 3)


def scaled(x, n):
    return np.sum(x) * n


def with_aux(x):
    return np.sum(x * x), x[0]


MADE = {
    "jit": lambda: numbax.jit(f),
    "jit static_argnums": lambda: numbax.jit(scaled, static_argnums=1),
    "jit static_argnames": lambda: numbax.jit(scaled, static_argnames="n"),
    "jit decorator form": lambda: numbax.jit(static_argnums=(1,))(scaled),
    "grad": lambda: numbax.grad(f),
    "grad argnums": lambda: numbax.grad(f, argnums=(0, 1)),
    "grad has_aux": lambda: numbax.grad(with_aux, has_aux=True),
    "value_and_grad": lambda: numbax.value_and_grad(f, 1),
    "vmap": lambda: numbax.vmap(f),
    "vmap in_axes list": lambda: numbax.vmap(f, in_axes=[0, None]),
    "vmap in_axes dict": lambda: numbax.vmap(f, in_axes=({"a": 0},)),
    "jacfwd": lambda: numbax.jacfwd(g),
    "jacrev": lambda: numbax.jacrev(g),
    "jacobian": lambda: numbax.jacobian(g, argnums=0),
    "hessian": lambda: numbax.hessian(cube),
    "checkpoint": lambda: numbax.checkpoint(cube),
    "remat": lambda: numbax.remat(cube, prevent_cse=False),
    "jit(grad)": lambda: numbax.jit(numbax.grad(f)),
    "grad(grad)": lambda: numbax.grad(numbax.grad(cube)),
    "vmap(grad)": lambda: numbax.vmap(numbax.grad(f), in_axes=(0, None)),
    "jacfwd(jacrev)": lambda: numbax.jacfwd(numbax.jacrev(g)),
    "jit(vmap)": lambda: numbax.jit(numbax.vmap(f)),
    "grad(checkpoint)": lambda: numbax.grad(numbax.checkpoint(cube)),
    "jit(jit)": lambda: numbax.jit(numbax.jit(f)),
}


@pytest.mark.parametrize("name", list(MADE))
def test_the_same_function_and_options_give_the_same_object(name):
    assert MADE[name]() is MADE[name]()


def test_what_jvp_linearize_and_vjp_make_is_made_once():
    assert numbax.linearize(g, X)[1].pushforward is numbax.linearize(g, X)[1].pushforward
    assert numbax.vjp(g, X)[1].transformed is numbax.vjp(g, X)[1].transformed


def test_results_found_again_are_jax_results():
    for _ in range(2):
        np.testing.assert_allclose(numbax.jit(f)(X, Y), f_jax(X, Y), rtol=RTOL)
        np.testing.assert_allclose(numbax.grad(f, argnums=1)(X, Y), jax.grad(f_jax, argnums=1)(X, Y), rtol=RTOL)
        value, grads = numbax.value_and_grad(f, (0, 1))(X, Y)
        want_value, want_grads = jax.value_and_grad(f_jax, (0, 1))(X, Y)
        np.testing.assert_allclose(value, want_value, rtol=RTOL)
        for got, want in zip(grads, want_grads):
            np.testing.assert_allclose(got, want, rtol=RTOL)
        np.testing.assert_allclose(numbax.jit(numbax.grad(f))(X, Y), jax.grad(f_jax)(X, Y), rtol=RTOL)
        np.testing.assert_allclose(numbax.jacrev(g)(X), jax.jacrev(g_jax)(X), rtol=RTOL)
        np.testing.assert_allclose(numbax.hessian(cube)(X), jax.hessian(lambda v: jnp.sum(v ** 3))(X), rtol=RTOL)
        out, tangent = numbax.jvp(g, (X,), (Y,))
        want_out, want_tangent = jax.jvp(g_jax, (X,), (Y,))
        np.testing.assert_allclose(out, want_out, rtol=RTOL)
        np.testing.assert_allclose(tangent, want_tangent, rtol=RTOL)
        np.testing.assert_allclose(numbax.vjp(g, X)[1](Y)[0], jax.vjp(g_jax, X)[1](Y)[0], rtol=RTOL)
        np.testing.assert_allclose(numbax.grad(numbax.checkpoint(cube))(X), 3 * X ** 2, rtol=RTOL)


def test_a_kept_transformation_and_one_made_afresh_agree():
    kept = numbax.grad(f, argnums=(0, 1))
    want = kept(X, Y)
    for got, expected in zip(numbax.grad(f, argnums=(0, 1))(X, Y), want):
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_allclose(numbax.jit(scaled, static_argnums=1)(X, 3), 3 * np.sum(X), rtol=RTOL)
    np.testing.assert_allclose(numbax.jit(scaled, static_argnums=1)(X, 4), 4 * np.sum(X), rtol=RTOL)


def test_a_function_defined_again_with_another_body_is_transformed_anew():
    for k in range(3):
        if k == 0:
            def h(x):
                return np.sum(x * x)
        elif k == 1:
            def h(x):
                return np.sum(np.sin(x))
        else:
            def h(x):
                return np.sum(x) ** 3
        want = [2 * X, np.cos(X), 3 * np.sum(X) ** 2 * np.ones(3)][k]
        np.testing.assert_allclose(numbax.grad(h)(X), want, rtol=RTOL)
        np.testing.assert_allclose(numbax.jit(h)(X), [np.sum(X * X), np.sum(np.sin(X)), np.sum(X) ** 3][k],
                                   rtol=RTOL)


def test_a_function_defined_again_over_another_value_is_transformed_anew():
    for k in (2.0, 3.0):
        def h(x):
            return np.sum(x) * k

        np.testing.assert_allclose(numbax.jit(h)(X), k * np.sum(X), rtol=RTOL)
        np.testing.assert_allclose(numbax.grad(h)(X), k * np.ones(3), rtol=RTOL)


def test_every_option_that_changes_the_result_is_in_the_key():
    assert numbax.grad(f, 0) is not numbax.grad(f, 1)
    np.testing.assert_allclose(numbax.grad(f, 0)(X, Y), np.cos(X) * Y, rtol=RTOL)
    np.testing.assert_allclose(numbax.grad(f, 1)(X, Y), np.sin(X), rtol=RTOL)
    assert numbax.grad(f) is not numbax.value_and_grad(f)
    single, one = numbax.grad(f, 1)(X, Y), numbax.grad(f, (1,))(X, Y)  # their code differs in structure
    np.testing.assert_allclose(single, np.sin(X), rtol=RTOL)
    assert type(one) is tuple and len(one) == 1
    np.testing.assert_allclose(one[0], np.sin(X), rtol=RTOL)
    assert numbax.jacfwd(g) is not numbax.jacrev(g)
    assert numbax.jit(f) is not numbax.jit(f, backend="python")
    assert numbax.jit(scaled) is not numbax.jit(scaled, static_argnums=1)
    assert numbax.jit(f, fastmath=True) is not numbax.jit(f)
    assert numbax.grad(with_aux, has_aux=True) is not numbax.grad(with_aux)
    gradient, aux = numbax.grad(with_aux, has_aux=True)(X)
    np.testing.assert_allclose(gradient, 2 * X, rtol=RTOL)
    assert aux == X[0]
    matrix = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(numbax.vmap(f, in_axes=(0, None))(matrix, Y), [f(r, Y) for r in matrix], rtol=RTOL)
    np.testing.assert_allclose(numbax.vmap(f, in_axes=(None, 0))(Y, matrix), [f(Y, r) for r in matrix], rtol=RTOL)
    np.testing.assert_allclose(numbax.vmap(f, in_axes=(1, None))(matrix.T, Y), [f(r, Y) for r in matrix],
                               rtol=RTOL)
    assert numbax.vmap(f, in_axes=(0, None)) is not numbax.vmap(f, in_axes=[0, None])
    numbax.vmap(f, in_axes=1)
    with pytest.raises(TypeError, match="vmap in_axes"):  # JAX's refusal, not vmap(f, in_axes=1) found again
        numbax.vmap(f, in_axes=True)


def test_options_without_a_key_are_not_cached_and_not_refused():
    first, second = numbax.grad(f, (np.int64(1),)), numbax.grad(f, (np.int64(1),))
    assert first is not second
    np.testing.assert_allclose(second(X, Y)[0], np.sin(X), rtol=RTOL)
    with pytest.raises(TypeError):
        numbax.vmap(f, in_axes={0})(X, Y)


def test_the_cache_is_bounded():
    first = lambda x: x * 2.0  # noqa: E731
    made = weakref.ref(numbax.grad(first))
    alive = weakref.ref(first)
    del first
    for _ in range(10_000):
        numbax.grad(lambda x: x * 2.0)
    assert transform_cache.size() <= transform_cache.BOUND
    gc.collect()
    assert made() is None and alive() is None


def test_debug_nans_takes_effect_on_a_transformation_found_again():
    def logsum(x):
        return np.sum(np.log(x))

    numbax.jit(logsum)(np.array([-1.0]))
    with numbax.config.debug_nans():
        with pytest.raises(FloatingPointError):
            numbax.jit(logsum)(np.array([-1.0]))
        with pytest.raises(FloatingPointError):
            numbax.grad(logsum)(np.array([-1.0]))
    assert np.isnan(numbax.jit(logsum)(np.array([-1.0])))


def test_disable_jit_takes_effect_on_a_transformation_found_again():
    seen = []

    def noted(x):
        seen.append(1)
        return np.sum(x)

    numbax.jit(noted)
    with numbax.config.disable_jit():
        assert numbax.jit(noted)(X) == np.sum(X)
    assert seen == [1]


def test_jit_as_a_decorator_of_a_new_function_each_time():
    for k in range(2):
        @numbax.jit
        def h(x):
            return np.sum(x) + k

        np.testing.assert_allclose(h(X), np.sum(X) + k, rtol=RTOL)


def test_a_transformation_made_inside_compiled_code_is_found_again():
    def step(x):
        return x - 0.1 * numbax.grad(cube)(x)

    for _ in range(2):
        np.testing.assert_allclose(numbax.jit(step)(X), X - 0.3 * X ** 2, rtol=RTOL)


def test_the_rule_of_a_shared_checkpoint_cannot_be_replaced():
    with pytest.raises(numbax.NumbaxDifferentiationError, match="shared by every checkpoint of cube"):
        numbax.checkpoint(cube).defvjp(lambda x: (x, None), lambda r, g: (g,))
    np.testing.assert_allclose(numbax.grad(numbax.checkpoint(cube))(X), 3 * X ** 2, rtol=RTOL)


def test_a_global_bound_anew_makes_a_transformation_made_afresh_read_it_again():
    """``numbax.grad(f)(x)`` written afresh after ``SCALE = 3.0`` computes with 3.0, as before the cache (and as
    ``jax.grad``); the identities of the globals ``f`` reads, and those of the functions it calls, are in the key.
    """
    global SCALE
    SCALE = 2.0
    try:
        assert numbax.grad(scaled_by_global)(X)[0] == 2.0
        assert numbax.grad(calls_scaled)(X)[0] == 2.0
        assert numbax.jit(numbax.grad(lambda x: calls_scaled(x)))(X)[0] == 2.0
        SCALE = 3.0
        assert numbax.grad(scaled_by_global)(X)[0] == 3.0
        assert numbax.grad(calls_scaled)(X)[0] == 3.0  # read by a function it calls
        assert numbax.grad(scaled_by_global) is numbax.grad(scaled_by_global)
    finally:
        SCALE = 2.0
    assert numbax.grad(scaled_by_global)(X)[0] == 2.0


def calls_scaled(x):
    return scaled_by_global(x)


SCALE = 2.0


def scaled_by_global(x):
    return np.sum(x) * SCALE


def test_clear_caches_forgets_the_transformations_made():
    """``numbax.clear_caches()``, JAX's name: a transformation made afresh after it is a new object."""
    first = numbax.grad(scaled_by_global)
    assert numbax.grad(scaled_by_global) is first
    numbax.clear_caches()
    again = numbax.grad(scaled_by_global)
    assert again is not first
    np.testing.assert_allclose(again(X), first(X))


class _Model:
    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):
        return np.sum(x * x) * self.scale


def test_a_bound_method_is_found_again_by_its_function_and_object():
    """``model.apply`` is a new object at each access: the key is its function and its object."""
    model, other = _Model(2.0), _Model(3.0)
    assert numbax.grad(model.apply) is numbax.grad(model.apply)
    assert numbax.grad(other.apply) is not numbax.grad(model.apply)
    np.testing.assert_allclose(numbax.grad(model.apply)(X), 4.0 * X)
    np.testing.assert_allclose(numbax.grad(other.apply)(X), 6.0 * X)
