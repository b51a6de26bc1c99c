"""Fusion of elementwise code over dims that broadcast (``symbolic.joining``), and Jacobian sweeps over blocks.

``-y * (a @ x)`` combines a ``y`` and an ``a @ x`` whose lengths nothing proves equal: NumPy broadcasts a
length 1. Fusion writes such a statement as one loop over the broadcast length, each operand read at the
loop's index clamped to its own length. These tests run the logistic loss of the Jacobian benchmark and a
2-D product through forward mode, reverse mode and ``hessian`` with each operand of length 1 in turn, against
JAX (float64) and central differences, and check that shapes NumPy refuses are refused, not read past.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

jax.config.update("jax_enable_x64", True)
RTOL = 1e-12


def loss(x, a, y):
    z = a @ x
    return np.mean(np.log1p(np.exp(-y * z))) + 0.05 * np.sum(x * x)


def product(u, v):
    return np.sum(np.tanh(u * v) * v)


def product_jvp(u, v, du, dv):
    return numbax.jvp(product, (u, v), (du, dv))


def _jax_loss(x, a, y):
    return jnp.mean(jnp.log1p(jnp.exp(-y * (a @ x)))) + 0.05 * jnp.sum(x * x)


def _jax_product(u, v):
    return jnp.sum(jnp.tanh(u * v) * v)


HESSIAN = numbax.hessian(loss)
GRAD = numbax.grad(loss)
PRODUCT_GRAD = numbax.grad(product, argnums=(0, 1))
PRODUCT_JVP = numbax.jit(product_jvp)
RNG = np.random.default_rng(3)
X = RNG.normal(size=5) * 0.3
# (a, y): lengths equal, a label of length 1 for every row, one row for every label
LOSS_CASES = {"equal": (RNG.normal(size=(7, 5)), np.sign(RNG.normal(size=7))),
              "one label": (RNG.normal(size=(7, 5)), np.array([-1.0])),
              "one row": (RNG.normal(size=(1, 5)), np.sign(RNG.normal(size=7)))}
PRODUCT_CASES = {"equal": ((3, 4), (3, 4)), "row": ((3, 4), (1, 4)), "column": ((3, 4), (3, 1)),
                 "both": ((1, 4), (3, 1))}


@pytest.mark.parametrize("case", LOSS_CASES)
def test_hessian_gradient_and_jvp_broadcast_as_jax(case):
    a, y = LOSS_CASES[case]
    np.testing.assert_allclose(HESSIAN(X, a, y), jax.hessian(_jax_loss)(X, a, y), rtol=RTOL, atol=1e-14)
    assert "min(" in numbax.source(HESSIAN, X, a, y)  # fused, each operand read as NumPy broadcasts it
    np.testing.assert_allclose(GRAD(X, a, y), jax.grad(_jax_loss)(X, a, y), rtol=RTOL, atol=1e-15)
    v = np.linspace(-1.0, 1.0, 5)
    value, tangent = numbax.jvp(loss, (X, a, y), (v, np.zeros_like(a), np.zeros_like(y)))
    want_value, want_tangent = jax.jvp(_jax_loss, (X, a, y), (v, np.zeros_like(a), np.zeros_like(y)))
    np.testing.assert_allclose([value, tangent], [want_value, want_tangent], rtol=RTOL)


def test_hessian_against_central_differences_of_the_gradient():
    a, y = LOSS_CASES["one label"]
    h = 1e-5
    columns = [(GRAD(X + h * e, a, y) - GRAD(X - h * e, a, y)) / (2 * h) for e in np.eye(5)]
    np.testing.assert_allclose(HESSIAN(X, a, y), np.stack(columns, axis=1), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("case", PRODUCT_CASES)
def test_two_dimensional_broadcasts_in_both_modes(case):
    u_shape, v_shape = PRODUCT_CASES[case]
    u, v = RNG.normal(size=u_shape), RNG.normal(size=v_shape)
    for got, want in zip(PRODUCT_GRAD(u, v), jax.grad(_jax_product, argnums=(0, 1))(u, v)):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-15)
    du, dv = RNG.normal(size=u_shape), RNG.normal(size=v_shape)
    np.testing.assert_allclose(PRODUCT_JVP(u, v, du, dv), jax.jvp(_jax_product, (u, v), (du, dv)), rtol=RTOL)
    assert "min(" in numbax.source(PRODUCT_JVP, u, v, du, dv)


def test_shapes_that_do_not_broadcast_are_refused():
    a = RNG.normal(size=(7, 5))
    for call in (lambda: HESSIAN(X, a, np.ones(3)), lambda: GRAD(X, a, np.ones(3)),
                 lambda: numbax.jvp(loss, (X, a, np.ones(3)), (X, np.zeros_like(a), np.zeros(3)))):
        with pytest.raises(ValueError, match="broadcast"):
            call()
    with pytest.raises(ValueError, match="broadcast"):
        PRODUCT_GRAD(np.ones((3, 4)), np.ones((2, 4)))


def test_contraction_checks_move_to_the_entry():
    import doctest

    from numbax.ast_passes import entry_checks

    assert doctest.testmod(entry_checks).failed == 0
