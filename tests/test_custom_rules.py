"""``custom_vjp`` and ``custom_jvp``: the user's rules replace the derivative numbax would derive, as in JAX.

Each against ``jax.custom_vjp``/``jax.custom_jvp`` of the same rules (float64), inside ``grad``, ``vjp``,
``jvp``, ``jacfwd``, a second derivative and compiled code; the function itself under ``jit`` and
``vmap`` and outside compiled code; and the refusals (JAX's errors where JAX raises one).
"""
import numpy as np
import pytest

import numbax

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)

BACKENDS = ["python", "cpu"]
X = np.array([0.1, 0.5, 2.0, -1.5])


# ---- custom_vjp ------------------------------------------------------------------------------------------

@numbax.custom_vjp
def clip_gradient(x):
    return x


def clip_fwd(x):
    return x, None


def clip_bwd(res, g):
    return (np.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(clip_fwd, clip_bwd)


@jax.custom_vjp
def jax_clip_gradient(x):
    return x


jax_clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (jnp.clip(g, -1.0, 1.0),))


def clipped_loss(x):
    return np.sum(clip_gradient(3.0 * x) ** 2) + np.sum(clip_gradient(x) * x)


def jax_clipped_loss(x):
    return jnp.sum(jax_clip_gradient(3.0 * x) ** 2) + jnp.sum(jax_clip_gradient(x) * x)


@numbax.custom_vjp
def scaled_tanh(scale, x, w):
    """A rule with residuals, two differentiated arguments (one a pytree) and a non-differentiated one."""
    return scale * np.tanh(x * w["a"] + w["b"])


def scaled_tanh_fwd(scale, x, w):
    y = np.tanh(x * w["a"] + w["b"])
    return scale * y, (y, x, w["a"])


def scaled_tanh_bwd(scale, res, g):
    y, x, a = res
    slope = scale * (1.0 - y * y) * g
    return slope * a, {"a": np.sum(slope * x), "b": np.sum(slope)}


scaled_tanh = numbax.custom_vjp(scaled_tanh.fun, nondiff_argnums=(0,))
scaled_tanh.defvjp(scaled_tanh_fwd, scaled_tanh_bwd)


def tanh_loss(x, w):
    return np.sum(scaled_tanh(2.0, x, w) ** 2)


def jax_tanh_loss(x, w):
    return jnp.sum((2.0 * jnp.tanh(x * w["a"] + w["b"])) ** 2)


W = {"a": 0.7, "b": np.float64(-0.2)}


@pytest.mark.parametrize("backend", BACKENDS)
def test_custom_vjp_replaces_the_gradient(backend):
    got = numbax.grad(clipped_loss, backend=backend)(X)
    np.testing.assert_allclose(got, np.asarray(jax.grad(jax_clipped_loss)(X)), rtol=1e-12)
    assert not np.allclose(got, np.asarray(jax.grad(lambda x: jnp.sum((3.0 * x) ** 2) + jnp.sum(x * x))(X)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_residuals_pytrees_and_nondiff_argnums(backend):
    got = numbax.grad(tanh_loss, (0, 1), backend=backend)(X, W)
    want = jax.grad(jax_tanh_loss, (0, 1))(X, W)
    np.testing.assert_allclose(got[0], np.asarray(want[0]), rtol=1e-12)
    for key in ("a", "b"):
        np.testing.assert_allclose(got[1][key], float(want[1][key]), rtol=1e-12)


def test_custom_vjp_inside_compiled_code_vjp_and_jacrev():
    @numbax.jit
    def step(x):
        return x - 0.1 * numbax.grad(clipped_loss)(x)

    np.testing.assert_allclose(step(X), X - 0.1 * np.asarray(jax.grad(jax_clipped_loss)(X)), rtol=1e-12)
    out, pullback = numbax.vjp(lambda x: clip_gradient(x) * 3.0, X)
    np.testing.assert_allclose(pullback(np.ones(4))[0], np.full(4, 1.0))
    np.testing.assert_allclose(numbax.jacrev(lambda x: clip_gradient(x) * 3.0)(X), np.eye(4))


@numbax.custom_vjp
def cube(x):
    return x ** 3


def cube_fwd(x):
    return x ** 3, x


def cube_bwd(x, g):
    return (3.0 * x * x * g,)


cube.defvjp(cube_fwd, cube_bwd)
grad_of_cube_sum = numbax.grad(lambda y: np.sum(cube(y)))


def hvp_of_cube_sum(x):
    return grad_of_cube_sum(x) @ X


def test_a_second_derivative_through_a_rule_is_refused_at_the_inner_call():
    """The rule's residuals are computed by code the first reverse mode does not differentiate; a second
    one would have to (JAX's is ``6 x * X``). Refused, not zero."""
    np.testing.assert_allclose(grad_of_cube_sum(X), 3.0 * X * X)
    with pytest.raises(numbax.NumbaxDifferentiationError, match="rt.custom_input_seen") as info:
        numbax.grad(hvp_of_cube_sum)(X)
    assert "grad_of_cube_sum(x) @ X" in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_function_itself_under_jit_vmap_and_python(backend):
    np.testing.assert_allclose(numbax.jit(clipped_loss, backend=backend)(X), clipped_loss(X))
    np.testing.assert_allclose(numbax.vmap(lambda x: clip_gradient(x) * 2.0, backend=backend)(X), 2.0 * X)
    assert clip_gradient(1.5) == 1.5


def test_a_bwd_rule_returning_none_is_a_zero_cotangent():
    @numbax.custom_vjp
    def first(x, y):
        return x * y

    first.defvjp(lambda x, y: (x * y, y), lambda y, g: (g * y, None))
    gx, gy = numbax.grad(lambda x, y: np.sum(first(x, y)), (0, 1))(X, X + 1.0)
    np.testing.assert_allclose(gx, X + 1.0)
    np.testing.assert_allclose(gy, np.zeros(4))


# ---- custom_jvp ------------------------------------------------------------------------------------------

@numbax.custom_jvp
def log1pexp(x):
    return np.log1p(np.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t / (1.0 + np.exp(-x))


@jax.custom_jvp
def jax_log1pexp(x):
    return jnp.log1p(jnp.exp(x))


@jax_log1pexp.defjvp
def _jax_log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jax_log1pexp(x), t / (1.0 + jnp.exp(-x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_custom_jvp_replaces_the_tangent(backend):
    t = np.linspace(-1.0, 1.0, 4)
    out, tangent = numbax.jvp(lambda x: np.sum(log1pexp(x) * x), (X,), (t,), backend=backend)
    want = jax.jvp(lambda x: jnp.sum(jax_log1pexp(x) * x), (X,), (t,))
    np.testing.assert_allclose(out, float(want[0]), rtol=1e-12)
    np.testing.assert_allclose(tangent, float(want[1]), rtol=1e-12)
    np.testing.assert_allclose(numbax.jacfwd(log1pexp, backend=backend)(X), np.asarray(jax.jacfwd(jax_log1pexp)(X)),
                               rtol=1e-12)


def test_the_rule_is_what_forward_mode_computes():
    """At x = 800, exp(x) overflows: the derived tangent is nan (inf / inf), the rule's is 1."""
    with np.errstate(over="ignore", invalid="ignore"):
        tangent = numbax.jvp(log1pexp, (np.array([800.0]),), (np.ones(1),))[1]
    np.testing.assert_array_equal(tangent, [1.0])


def test_two_arguments_sum_their_parts():
    @numbax.custom_jvp
    def product(x, y):
        return x * y

    @product.defjvp
    def product_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return x * y, tx * y + x * ty

    t = (np.ones(4), np.linspace(0.0, 1.0, 4))
    got = numbax.jvp(lambda x, y: product(x, y), (X, X + 2.0), t)[1]
    np.testing.assert_allclose(got, t[0] * (X + 2.0) + X * t[1], rtol=1e-12)


# ---- refusals --------------------------------------------------------------------------------------------

def softplus_total(x):
    return np.sum(log1pexp(x))


def test_reverse_mode_of_a_custom_jvp_function_transposes_its_rule():
    """More in test_custom_jvp_reverse.py."""
    np.testing.assert_allclose(numbax.grad(softplus_total)(X), np.asarray(jax.grad(
        lambda x: jnp.sum(jax_log1pexp(x)))(X)), rtol=1e-12)


def test_forward_mode_of_a_custom_vjp_function_is_refused():
    with pytest.raises(numbax.NumbaxDifferentiationError, match="custom_vjp function `clip_gradient`"):
        numbax.jvp(lambda x: clip_gradient(x) * 2.0, (X,), (X,))


def test_a_rule_must_be_defined():
    @numbax.custom_vjp
    def bare(x):
        return x

    with pytest.raises(AttributeError, match="No VJP defined for custom_vjp function bare"):
        bare(1.0)
    with pytest.raises(numbax.NumbaxError, match="No VJP defined"):
        numbax.grad(lambda x: np.sum(bare(x)))(X)


def test_malformed_rules_raise_jaxs_errors():
    @numbax.custom_vjp
    def f(x):
        return x * 2.0

    f.defvjp(lambda x: x * 2.0, lambda res, g: (g,))
    with pytest.raises(numbax.NumbaxError, match="must produce a pair"):
        numbax.grad(lambda x: np.sum(f(x)))(X)
    f.defvjp(lambda x: (x * 2.0, None), lambda res, g: (g, g))
    with pytest.raises(numbax.NumbaxError, match="tuple of length equal to the number of primal inputs"):
        numbax.grad(lambda x: np.sum(f(x)))(X)


def test_several_outputs_are_refused():
    @numbax.custom_vjp
    def pair(x):
        return x, 2.0 * x

    pair.defvjp(lambda x: ((x, 2.0 * x), None), lambda res, g: (g[0] + 2.0 * g[1],))
    with pytest.raises(numbax.NumbaxError, match="one output array or number"):
        numbax.grad(lambda x: np.sum(pair(x)[0]))(X)


def test_symbolic_zeros_and_defjvps_are_not_implemented():
    with pytest.raises(NotImplementedError):
        clip_gradient.defvjp(clip_fwd, clip_bwd, symbolic_zeros=True)
    with pytest.raises(NotImplementedError):
        log1pexp.defjvps(lambda t, ans, x: t)


def test_transformations_of_the_custom_function_itself():
    np.testing.assert_allclose(numbax.grad(lambda x: np.sum(clip_gradient(x) * 5.0))(X), np.ones(4))
    np.testing.assert_allclose(numbax.jacrev(clip_gradient)(X), np.eye(4))
    np.testing.assert_allclose(numbax.jit(log1pexp)(X), np.log1p(np.exp(X)))
    np.testing.assert_allclose(numbax.jacfwd(log1pexp)(X), np.diag(1.0 / (1.0 + np.exp(-X))), rtol=1e-12)


# ---- checkpoint ------------------------------------------------------------------------------------------

def body(x, p):
    h = np.tanh(x * p)
    s = np.sin(x)
    return x + 0.01 * (h * h - s * s * p)


checkpointed_body = numbax.checkpoint(body)


def plain_loop(x, p):
    for _ in range(30):
        x = body(x, p)
    return np.sum(x * x)


def checkpointed_loop(x, p):
    for _ in range(30):
        x = checkpointed_body(x, p)
    return np.sum(x * x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_checkpoint_gives_the_same_gradient_and_saves_only_the_inputs(backend):
    got = numbax.grad(checkpointed_loop, (0, 1), backend=backend)(X, 1.3)
    want = numbax.grad(plain_loop, (0, 1), backend=backend)(X, 1.3)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    jax_body = lambda x, p: x + 0.01 * (jnp.tanh(x * p) ** 2 - jnp.sin(x) ** 2 * p)  # noqa: E731

    def jax_loop(x, p):
        for _ in range(30):
            x = jax.checkpoint(jax_body)(x, p)
        return jnp.sum(x * x)

    np.testing.assert_allclose(got[0], np.asarray(jax.grad(jax_loop)(X, 1.3)), rtol=1e-10)
    saved = numbax.source(numbax.grad(checkpointed_loop), X, 1.3).count("rt.save_row(")
    assert saved == 1 < numbax.source(numbax.grad(plain_loop), X, 1.3).count("rt.save_row(")


def test_remat_is_checkpoint_and_its_options_are_refused():
    assert numbax.remat is numbax.checkpoint
    with pytest.raises(NotImplementedError):
        numbax.checkpoint(body, policy=lambda *a: True)
    with pytest.raises(NotImplementedError):
        numbax.checkpoint(body, static_argnums=(1,))
    with pytest.raises(TypeError):
        numbax.checkpoint(lambda x, p=1.0: x * p)


def test_nondiff_argnums_outside_the_arguments_are_refused():
    bad = numbax.custom_vjp(lambda x: x * 2.0, nondiff_argnums=(3,))
    bad.defvjp(clip_fwd, clip_bwd)
    with pytest.raises(numbax.NumbaxError, match="nondiff_argnums \\[3\\] name no argument"):
        numbax.grad(lambda x: np.sum(bad(x)))(X)
