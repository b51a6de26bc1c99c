"""Reverse mode of ``custom_jvp`` functions: the rule's tangent output transposed, as JAX does.

The functions are written as JAX's documentation writes them; each is checked against ``jax.custom_jvp`` of
the same rule (float64) in ``grad``, ``value_and_grad``, ``vjp``, ``jacrev``, inside ``jit`` and ``vmap``,
against central differences where the rule is the true derivative, and the refusals at the user's line (a
rule not linear in the tangents, which JAX refuses to transpose too); and second derivatives in each order of
the modes, where JAX differentiates the rule's own code.
"""
import functools

import numpy as np
import pytest

import numbax
from grad_corpus.oracles import to_jax  # noqa: F401  (turns on jax_enable_x64)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

X = np.array([0.1, 0.5, 2.0, -1.5])


def central(f, x, h=1e-6):
    """Central differences of a scalar ``f`` at ``x``."""
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        out.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


# ---- the functions, in numbax and in JAX ----------------------------------------------------------------

@numbax.custom_jvp
def log1pexp(x):
    return np.log1p(np.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    ans = log1pexp(x)
    return ans, x_dot * (1.0 - 1.0 / (1.0 + np.exp(x)))


@jax.custom_jvp
def jax_log1pexp(x):
    return jnp.log1p(jnp.exp(x))


@jax_log1pexp.defjvp
def _jax_log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    ans = jax_log1pexp(x)
    return ans, x_dot * (1.0 - 1.0 / (1.0 + jnp.exp(x)))


@numbax.custom_jvp
def safe_norm(x):
    return np.sqrt(np.sum(x * x))


@safe_norm.defjvp
def safe_norm_jvp(primals, tangents):
    x, = primals
    t, = tangents
    y = safe_norm(x)
    return y, np.where(y == 0.0, 0.0, np.sum(x * t) / np.where(y == 0.0, 1.0, y))


@jax.custom_jvp
def jax_safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x))


@jax_safe_norm.defjvp
def _jax_safe_norm_jvp(primals, tangents):
    x, = primals
    t, = tangents
    y = jax_safe_norm(x)
    return y, jnp.where(y == 0.0, 0.0, jnp.sum(x * t) / jnp.where(y == 0.0, 1.0, y))


def slope(x, y):
    """A helper the rule calls."""
    return np.cos(x) * y, -np.sin(x) * y


@numbax.custom_jvp
def wave(x, y):
    return np.sin(x) * y


@wave.defjvp
def wave_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    dx, _ = slope(x, y)
    return wave(x, y), dx * tx + np.sin(x) * ty


@jax.custom_jvp
def jax_wave(x, y):
    return jnp.sin(x) * y


@jax_wave.defjvp
def _jax_wave_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return jax_wave(x, y), jnp.cos(x) * y * tx + jnp.sin(x) * ty


@functools.partial(numbax.custom_jvp, nondiff_argnums=(0, 1))
def scale_gradient(k, f, x):
    """The identity on the way forward; the tangent scaled by ``k`` and passed through ``f``'s slope."""
    return f(x)


@scale_gradient.defjvp
def scale_gradient_jvp(k, f, primals, tangents):
    x, = primals
    t, = tangents
    return f(x), k * t


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 1))
def jax_scale_gradient(k, f, x):
    return f(x)


@jax_scale_gradient.defjvp
def _jax_scale_gradient_jvp(k, f, primals, tangents):
    x, = primals
    t, = tangents
    return f(x), k * t


def log1pexp_loss(x):
    return np.sum(log1pexp(x) ** 2)


def jax_log1pexp_loss(x):
    return jnp.sum(jax_log1pexp(x) ** 2)


def norm_loss(x):
    return safe_norm(x) * np.sum(x)


def jax_norm_loss(x):
    return jax_safe_norm(x) * jnp.sum(x)


def wave_loss(x, y):
    return np.sum(wave(x, y) * x)


def jax_wave_loss(x, y):
    return jnp.sum(jax_wave(x, y) * x)


def scaled_loss(x):
    return np.sum(scale_gradient(0.5, np.tanh, x) ** 2)


def jax_scaled_loss(x):
    return jnp.sum(jax_scale_gradient(0.5, jnp.tanh, x) ** 2)


CASES = [(log1pexp_loss, jax_log1pexp_loss, True), (norm_loss, jax_norm_loss, True),
         (scaled_loss, jax_scaled_loss, False)]


@pytest.mark.parametrize("f, jax_f, true_derivative", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_grad_and_value_and_grad_against_jax(f, jax_f, true_derivative):
    got = numbax.grad(f)(X)
    np.testing.assert_allclose(got, np.asarray(jax.grad(jax_f)(X)), rtol=1e-12)
    value, again = numbax.value_and_grad(f)(X)
    np.testing.assert_allclose(value, float(jax_f(X)), rtol=1e-12)
    np.testing.assert_allclose(again, got, rtol=1e-12)
    if true_derivative:
        np.testing.assert_allclose(got, central(f, X), rtol=1e-6)
    else:  # the rule's slope is 0.5, not tanh's: d/dx sum(tanh(x)^2) by the rule is 2 tanh(x) 0.5
        np.testing.assert_allclose(got, np.tanh(X), rtol=1e-12)


def test_two_arguments_and_a_helper_in_the_rule():
    got = numbax.grad(wave_loss, (0, 1))(X, X + 1.0)
    want = jax.grad(jax_wave_loss, (0, 1))(X, X + 1.0)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)
    np.testing.assert_allclose(got[1], central(lambda y: wave_loss(X, y), X + 1.0), rtol=1e-6)


def test_vjp_and_jacrev_against_jax():
    ct = np.linspace(-1.0, 2.0, 4)
    out, pullback = numbax.vjp(log1pexp, X)
    want_out, want_pullback = jax.vjp(jax_log1pexp, X)
    np.testing.assert_allclose(out, np.asarray(want_out), rtol=1e-12)
    np.testing.assert_allclose(pullback(ct)[0], np.asarray(want_pullback(ct)[0]), rtol=1e-12)
    np.testing.assert_allclose(numbax.jacrev(log1pexp)(X), np.asarray(jax.jacrev(jax_log1pexp)(X)), rtol=1e-12)
    np.testing.assert_allclose(numbax.jacrev(safe_norm)(X), np.asarray(jax.jacrev(jax_safe_norm)(X)), rtol=1e-12)


def test_the_rule_is_what_reverse_mode_computes():
    """At x = 800, exp(x) overflows: numbax's own derivative is nan, the rule's is 1; and at 0, the norm's
    derivative is nan, the safe rule's 0."""
    with np.errstate(over="ignore", invalid="ignore"):
        np.testing.assert_array_equal(numbax.grad(lambda x: np.sum(log1pexp(x)))(np.array([800.0])), [1.0])
    np.testing.assert_array_equal(numbax.grad(safe_norm)(np.zeros(3)), np.zeros(3))
    np.testing.assert_array_equal(np.asarray(jax.grad(jax_safe_norm)(np.zeros(3))), np.zeros(3))


def step(x):
    return x - 0.1 * numbax.grad(log1pexp_loss)(x)


def test_grad_inside_jit_and_vmap():
    np.testing.assert_allclose(numbax.jit(step)(X), X - 0.1 * np.asarray(jax.grad(jax_log1pexp_loss)(X)),
                               rtol=1e-12)
    rows = np.stack([X, X[::-1], 2.0 * X])
    got = numbax.vmap(numbax.grad(norm_loss))(rows)
    np.testing.assert_allclose(got, np.asarray(jax.vmap(jax.grad(jax_norm_loss))(rows)), rtol=1e-12)


def test_forward_and_reverse_mode_agree():
    t = np.linspace(-1.0, 1.0, 4)
    tangent = numbax.jvp(norm_loss, (X,), (t,))[1]
    np.testing.assert_allclose(tangent, numbax.grad(norm_loss)(X) @ t, rtol=1e-12)


# ---- refusals --------------------------------------------------------------------------------------------

@functools.partial(numbax.custom_jvp, nondiff_argnums=(0, 1))
def clip_gradient(lo, hi, x):
    return x


@clip_gradient.defjvp
def clip_gradient_jvp(lo, hi, primals, tangents):
    x, = primals
    x_dot, = tangents
    return x, np.clip(x_dot, lo, hi)


@numbax.custom_jvp
def branchy(x):
    return 2.0 * x


@branchy.defjvp
def branchy_jvp(primals, tangents):
    x, = primals
    t, = tangents
    if t > 0.0:
        return 2.0 * x, 2.0 * t
    return 2.0 * x, 3.0 * t


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 1))
def jax_clip_gradient(lo, hi, x):
    return x


@jax_clip_gradient.defjvp
def _jax_clip_gradient_jvp(lo, hi, primals, tangents):
    x, = primals
    x_dot, = tangents
    return x, jnp.clip(x_dot, lo, hi)


def clipped(x):
    return np.sum(clip_gradient(-1.0, 1.0, 5.0 * x))


def jax_clipped(x):
    return jnp.sum(jax_clip_gradient(-1.0, 1.0, 5.0 * x))


def test_a_rule_not_linear_in_the_tangents_is_refused_at_its_line():
    """JAX: "Transpose rule ... for 'min' not implemented"; numbax refuses at the rule's line. Forward mode
    runs the rule as it is, in both."""
    with pytest.raises(numbax.NumbaxDifferentiationError, match="not linear in the tangents") as info:
        numbax.grad(clipped)(X)
    assert "return np.sum(clip_gradient(-1.0, 1.0, 5.0 * x))" in str(info.value)  # the call's line
    assert f"test_custom_jvp_reverse.py:{clip_gradient_jvp.__code__.co_firstlineno + 4}" in str(info.value)
    assert "test_custom_jvp_reverse.py" in str(info.value)
    with pytest.raises(NotImplementedError, match="Transpose rule"):
        jax.grad(jax_clipped)(X)
    np.testing.assert_allclose(numbax.jvp(clipped, (X,), (np.ones(4),))[1], 4.0)
    np.testing.assert_allclose(float(jax.jvp(jax_clipped, (X,), (np.ones(4),))[1]), 4.0)


def test_control_flow_on_the_tangents_is_refused_at_its_line():
    with pytest.raises(numbax.NumbaxDifferentiationError, match="control flow depends on the tangents") as info:
        numbax.grad(lambda x: 2.0 * branchy(x))(1.5)
    assert f"test_custom_jvp_reverse.py:{branchy_jvp.__code__.co_firstlineno + 4}" in str(info.value)


# ---- second derivatives: the rule's own code differentiated, as JAX does ------------------------------------

def hvp(x):
    return numbax.grad(log1pexp_loss)(x) @ X


def jax_hvp(x):
    return jax.grad(jax_log1pexp_loss)(x) @ X


def test_grad_of_grad_against_jax():
    np.testing.assert_allclose(numbax.grad(hvp)(X), np.asarray(jax.grad(jax_hvp)(X)), rtol=1e-12)


@pytest.mark.parametrize("f, jax_f, true_derivative", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_hessian_forward_over_reverse_against_jax(f, jax_f, true_derivative):
    """For scale_gradient the rule's primal output, tanh(x), is differentiated as code at second order: JAX's
    hessian is 1 - tanh(x)^2 on the diagonal, not the rule's 0.5."""
    want = np.asarray(jax.hessian(jax_f)(X))
    np.testing.assert_allclose(numbax.hessian(f)(X), want, rtol=1e-12, atol=1e-15)
    if true_derivative:
        np.testing.assert_allclose(want, np.stack([central(lambda x: float(numbax.grad(f)(x)[i]), X)
                                                    for i in range(4)]), rtol=1e-6, atol=1e-8)


def test_reverse_over_forward_and_two_arguments():
    want = np.asarray(jax.hessian(jax_norm_loss)(X))
    np.testing.assert_allclose(numbax.jacrev(numbax.jacfwd(norm_loss))(X), want, rtol=1e-12, atol=1e-15)
    # three of the four on the python backend (the same generated code, without a minute of Numba)
    np.testing.assert_allclose(numbax.jacrev(numbax.jacrev(norm_loss), backend="python")(X), want, rtol=1e-12,
                               atol=1e-15)
    np.testing.assert_allclose(numbax.jacfwd(numbax.jacfwd(log1pexp_loss), backend="python")(X),
                               np.asarray(jax.hessian(jax_log1pexp_loss)(X)), rtol=1e-12, atol=1e-15)
    got = numbax.hessian(wave_loss, (0, 1), backend="python")(X, X + 1.0)  # compiled: test_hessian_forward_...
    want = jax.hessian(jax_wave_loss, (0, 1))(X, X + 1.0)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(got[i][j], np.asarray(want[i][j]), rtol=1e-12, atol=1e-15)
