"""Transformations of functions with ``*args`` and ``**kwargs`` parameters, as JAX's: positional arguments are
counted as passed at the call (``argnums`` and ``in_axes`` index them), keyword arguments are passed through
(not differentiated; mapped over axis 0 by ``vmap``). Values against JAX in float64, central differences and
stacking over slices."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax.test_util import check_grads

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(14)
A, B, C = (RNG.normal(size=3) for _ in range(3))
BACKENDS = ["python", "cpu"]


def total(*xs):
    s = 0.0
    for x in xs:
        s = s + np.sum(np.sin(x) * x)
    return s


def total_jax(*xs):
    s = 0.0
    for x in xs:
        s = s + jnp.sum(jnp.sin(x) * x)
    return s


def weighted(a, *rest):
    s = np.sum(a * a)
    for i in range(len(rest)):
        s = s + (i + 1.0) * np.sum(np.tanh(a * rest[i]))
    return s * len(rest)


def weighted_jax(a, *rest):
    s = jnp.sum(a * a)
    for i in range(len(rest)):
        s = s + (i + 1.0) * jnp.sum(jnp.tanh(a * rest[i]))
    return s * len(rest)


def scaled(a, *rest, scale=1.0, **extra):
    out = np.sin(a) * scale
    for r in rest:
        out = out * r
    return np.sum(out) + extra["bias"] * np.sum(a)


def scaled_jax(a, *rest, scale=1.0, **extra):
    out = jnp.sin(a) * scale
    for r in rest:
        out = out * r
    return jnp.sum(out) + extra["bias"] * jnp.sum(a)


def mapped(a, *rest):
    return np.sin(a) * rest[0] + rest[1]


def mapped_jax(a, *rest):
    return jnp.sin(a) * rest[0] + rest[1]


def trees(a, *rest):
    params, (u, v) = rest[0], rest[1]
    return np.sum(np.tanh(params["w"] * a + params["b"]) * u) + np.sum(v * v * a)


def trees_jax(a, *rest):
    params, (u, v) = rest[0], rest[1]
    return jnp.sum(jnp.tanh(params["w"] * a + params["b"]) * u) + jnp.sum(v * v * a)


def vector(*xs):
    out = np.sin(xs[0])
    for x in xs[1:]:
        out = out * np.cos(x)
    return out


def vector_jax(*xs):
    out = jnp.sin(xs[0])
    for x in xs[1:]:
        out = out * jnp.cos(x)
    return out


def powered(a, *rest):
    return np.sum(np.abs(a) ** rest[0]) * rest[1]


def powered_jax(a, *rest):
    return jnp.sum(jnp.abs(a) ** rest[0]) * rest[1]


def close(got, want, rtol=1e-12):
    """``got`` and ``want`` (pytrees) agree leaf by leaf, structure included."""
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree
    for g, w in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-13)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_indexes_the_positional_arguments_as_passed(backend):
    close(numbax.grad(total, backend=backend)(A, B), jax.grad(total_jax)(A, B))
    close(numbax.grad(total, argnums=(0, 2), backend=backend)(A, B, C), jax.grad(total_jax, argnums=(0, 2))(A, B, C))
    close(numbax.grad(total, argnums=-1, backend=backend)(A, B, C), jax.grad(total_jax, argnums=-1)(A, B, C))
    close(numbax.value_and_grad(weighted, argnums=(1, 2), backend=backend)(A, B, C),
          jax.value_and_grad(weighted_jax, argnums=(1, 2))(A, B, C))
    close(numbax.grad(weighted, backend=backend)(A), jax.grad(weighted_jax)(A))  # no extra arguments at all


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_count_of_arguments_is_its_own_specialization(backend):
    grad = numbax.grad(weighted, argnums=1, backend=backend)
    for args in [(A, B), (A, B, C), (A, B, C, A + 1.0)]:
        close(grad(*args), jax.grad(weighted_jax, argnums=1)(*args))
    close(grad(A, B), jax.grad(weighted_jax, argnums=1)(A, B))


def test_gradients_agree_with_central_differences():
    check_grads(weighted, (A, B, C), order=2)
    check_grads(vector, (A, B), order=2)
    for argnums in [0, 1, 2]:
        grad = numbax.grad(weighted, argnums=argnums)(A, B, C)
        h = 1e-6
        for k in range(3):
            step = [np.zeros(3) for _ in range(3)]
            step[argnums][k] = h
            up = weighted(*(x + s for x, s in zip((A, B, C), step)))
            down = weighted(*(x - s for x, s in zip((A, B, C), step)))
            np.testing.assert_allclose(grad[k], (up - down) / (2 * h), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_keyword_arguments_are_passed_through_not_differentiated(backend):
    got = numbax.grad(scaled, argnums=(0, 1), backend=backend)(A, B, C, scale=2.0, bias=0.5)
    close(got, jax.grad(scaled_jax, argnums=(0, 1))(A, B, C, scale=2.0, bias=0.5))
    close(numbax.jacrev(vector, argnums=1, backend=backend)(A, B), jax.jacrev(vector_jax, argnums=1)(A, B))
    close(numbax.jacrev(scaled, argnums=1)(A, B, bias=0.25), jax.jacrev(scaled_jax, argnums=1)(A, B, bias=0.25))


@pytest.mark.parametrize("backend", BACKENDS)
def test_jacobians_and_hessian(backend):
    close(numbax.jacfwd(vector, argnums=(0, 2), backend=backend)(A, B, C),
          jax.jacfwd(vector_jax, argnums=(0, 2))(A, B, C))
    close(numbax.jacrev(vector, backend=backend)(A, B, C), jax.jacrev(vector_jax)(A, B, C))
    close(numbax.hessian(weighted, argnums=1, backend=backend)(A, B, C), jax.hessian(weighted_jax, argnums=1)(A, B, C))
    close(numbax.hessian(total, argnums=(0, 1))(A, B), jax.hessian(total_jax, argnums=(0, 1))(A, B))


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_vjp_and_linearize(backend):
    tangents = (C, A, B)
    close(numbax.jvp(weighted, (A, B, C), tangents, backend=backend), jax.jvp(weighted_jax, (A, B, C), tangents))
    out, pullback = numbax.vjp(vector, A, B, C, backend=backend)
    want_out, want_pullback = jax.vjp(vector_jax, A, B, C)
    close(out, want_out)
    close(pullback(np.cos(A)), want_pullback(np.cos(A)))
    out, f_jvp = numbax.linearize(total, A, B, backend=backend)
    want_out, want_jvp = jax.linearize(total_jax, A, B)
    close(out, want_out)
    close(f_jvp(C, A), want_jvp(C, A))


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_maps_per_positional_argument_and_keywords_over_axis_0(backend):
    xs, ys = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    got = numbax.vmap(mapped, in_axes=(0, 0, None), backend=backend)(xs, ys, C)
    np.testing.assert_allclose(got, np.stack([mapped(x, y, C) for x, y in zip(xs, ys)]), rtol=1e-15)
    got = numbax.vmap(mapped, in_axes=(None, 1, 0), backend=backend)(A, ys.T, xs)
    np.testing.assert_allclose(got, np.stack([mapped(A, y, x) for x, y in zip(xs, ys)]), rtol=1e-15)
    biases = RNG.normal(size=4)
    got = numbax.vmap(scaled, in_axes=(0, None), backend=backend)(xs, B, bias=biases)
    close(got, jax.vmap(scaled_jax, in_axes=(0, None))(xs, B, bias=biases))
    np.testing.assert_allclose(got, [scaled(x, B, bias=b) for x, b in zip(xs, biases)], rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nesting(backend):
    close(numbax.grad(numbax.grad(total), backend=backend)(0.3, 1.2), jax.grad(jax.grad(total_jax))(0.3, 1.2))
    close(numbax.grad(numbax.grad(total, argnums=1), argnums=0, backend=backend)(0.3, 1.2),
          jax.grad(jax.grad(total_jax, argnums=1), argnums=0)(0.3, 1.2))
    xs, ys = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    got = numbax.vmap(numbax.grad(weighted, argnums=1), in_axes=(0, 0, None), backend=backend)(xs, ys, C)
    close(got, jax.vmap(jax.grad(weighted_jax, argnums=1), in_axes=(0, 0, None))(xs, ys, C))
    close(numbax.jit(numbax.grad(weighted, argnums=(0, 2)), backend=backend)(A, B, C),
          jax.jit(jax.grad(weighted_jax, argnums=(0, 2)))(A, B, C))
    close(numbax.jacfwd(numbax.grad(total, argnums=1), backend=backend)(A, B),
          jax.jacfwd(jax.grad(total_jax, argnums=1))(A, B))


GRAD_TOTAL = numbax.grad(total, argnums=(0, 1))  # read as a global by compiled code: fingerprinted for its cache


def reads_a_global_transformation(x, y):
    return GRAD_TOTAL(x, y, x)[0] + GRAD_TOTAL(x, y)[1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_star_args_functions_called_inside_transformed_functions(backend):
    want = jax.grad(total_jax, argnums=(0, 1))(A, B, A)[0] + jax.grad(total_jax, argnums=(0, 1))(A, B)[1]
    close(numbax.jit(reads_a_global_transformation, backend=backend)(A, B), want)

    def calls(x, y):
        return weighted(x, y, x) + numbax.grad(total, argnums=1)(x, y)[0]

    def calls_jax(x, y):
        return weighted_jax(x, y, x) + jax.grad(total_jax, argnums=1)(x, y)[0]

    close(numbax.grad(calls, argnums=(0, 1), backend=backend)(A, B), jax.grad(calls_jax, argnums=(0, 1))(A, B))
    got = numbax.vmap(lambda x, y: numbax.jvp(vector, (x, y), (y, x))[1], backend=backend)(np.stack([A, B]),
                                                                                           np.stack([B, C]))
    close(got, jax.vmap(lambda x, y: jax.jvp(vector_jax, (x, y), (y, x))[1])(np.stack([A, B]), np.stack([B, C])))


@pytest.mark.parametrize("backend", BACKENDS)
def test_pytrees_among_the_extra_arguments(backend):
    params = {"w": A, "b": 0.3}
    pair = (B, C)
    close(numbax.grad(trees, argnums=(1, 2), backend=backend)(A, params, pair),
          jax.grad(trees_jax, argnums=(1, 2))(A, params, pair))
    close(numbax.jvp(trees, (A, params, pair), (B, {"w": C, "b": 1.0}, (A, B)), backend=backend),
          jax.jvp(trees_jax, (A, params, pair), (B, {"w": C, "b": 1.0}, (A, B))))


def test_custom_rules_and_checkpoint_of_star_args_functions():
    rule = numbax.custom_jvp(total)

    @rule.defjvp
    def rule_jvp(primals, tangents):
        out = total(*primals)
        t = 0.0
        for p, dt in zip(primals, tangents):
            t = t + np.sum((np.cos(p) * p + np.sin(p)) * dt)
        return out, t

    want = jax.grad(total_jax, argnums=(0, 1))(A, B)
    close(numbax.grad(rule, argnums=(0, 1))(A, B), want)
    close(numbax.grad(numbax.checkpoint(total), argnums=(0, 1))(A, B), want)
    remat = numbax.checkpoint(total)

    def checkpointed(x, y):
        return remat(x, y, x)

    close(numbax.grad(checkpointed, argnums=(0, 1))(A, B), jax.grad(lambda x, y: total_jax(x, y, x), (0, 1))(A, B))


@pytest.mark.parametrize("backend", BACKENDS)
def test_static_arguments_index_the_arguments_as_passed(backend):
    want = jax.value_and_grad(lambda a, c: powered_jax(a, 3, c), argnums=(0, 1))(A, 2.0)
    close(numbax.value_and_grad(powered, argnums=(0, 2), static_argnums=1, backend=backend)(A, 3, 2.0), want)
    close(numbax.jit(numbax.grad(powered), static_argnums=1, backend=backend)(A, 3, 2.0), want[1][0])


def test_pmap_and_disable_jit():
    got = numbax.pmap(total)(A[None], B[None])
    np.testing.assert_allclose(got, [total(A, B)], rtol=1e-14)
    with numbax.config.disable_jit():
        close(numbax.grad(total, argnums=1)(A, B), jax.grad(total_jax, argnums=1)(A, B))
        close(numbax.vmap(mapped, in_axes=(0, None, None))(np.stack([A, B]), B, C),
              jax.vmap(mapped_jax, in_axes=(0, None, None))(np.stack([A, B]), B, C))


def test_source_names_the_extra_arguments():
    source = numbax.grad(weighted, argnums=2).lower_source(A, B, C)
    assert "def grad_weighted(a, rest_0, rest_1)" in source
    assert "test_star_args.py" in source


def test_refusals():
    with pytest.raises(ValueError, match="requires at least 3 positional arguments"):
        numbax.grad(total, argnums=2)(A, B)
    with pytest.raises(TypeError, match="missing a required argument: 'a'"):
        numbax.grad(weighted)()
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        numbax.grad(total, argnums=1)(A, np.arange(3))
    with pytest.raises(numbax.NumbaxSpecializationError, match="'bias'") as info:  # a keyword not passed
        numbax.grad(scaled)(A, B)
    assert 'extra["bias"]' in str(info.value)
    with pytest.raises(ValueError, match="vmap in_axes"):
        numbax.vmap(mapped, in_axes=(0, 0))(np.ones((2, 3)), np.ones((2, 3)), C)
    with pytest.raises(numbax.NumbaxSyntaxError, match="'not-a-name', which is not a Python name") as info:
        numbax.grad(scaled)(A, B, **{"bias": 1.0, "not-a-name": 2.0})
    assert "def scaled(a, *rest" in str(info.value)
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions") as info:
        numbax.grad(no_output)(A, B)  # reported at the def of the function, as for named parameters
    assert "test_star_args.py" in str(info.value) and "def no_output(*xs)" in str(info.value)


def no_output(*xs):
    return None


def lifts_a_local_star_args_function(x, y):
    def inner(*zs):
        return total(*zs)

    return numbax.grad(inner)(x, y)


def lifts_a_partial(x, y):
    return numbax.grad(functools.partial(total, x))(y)


@pytest.mark.parametrize("fun", [lifts_a_local_star_args_function, lifts_a_partial])
def test_star_args_functions_made_in_compiled_code_are_refused_at_the_line(fun):
    with pytest.raises(numbax.NumbaxSpecializationError, match=r"\*args") as info:
        numbax.jit(fun)(A, B)
    assert "numbax.grad(" in str(info.value)
