"""Gradients keep their primal's dtype: a float32 parameter gets a float32 gradient, as in JAX.

Reverse mode computes cotangents in float64 (``rt.cotangent_dtype``): Numba widens a float32 array
that meets a Python float, and a loop's adjoint must have one type. Each gradient goes back to its
parameter's dtype at the end (``rt.primal_dtype``), and a ``vjp`` cotangent comes in widened
(``rt.widen``). float64 programs are generated without either call. Values are compared with JAX's
float32 gradients on both backends.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

jax.config.update("jax_enable_x64", True)

BACKENDS = ["python", "cpu"]


def straight(x, y):
    return np.sum(np.tanh(x * y) ** 2) * 0.5 + np.sum(np.exp(0.3 * x))


def accumulated(x, y):
    total = 0.0
    h = x
    for i in range(4):
        h = np.sin(h) * y + 0.1 * i
        total = total + np.sum(h * h)
    return total


def newton_sqrt(a, x):
    y = x
    k = 0
    while k < 6:
        y = 0.5 * (y + a / y)
        k = k + 1
    return np.sum(y * y * x)


def _jax(fn):
    namespace = dict(fn.__globals__, np=jnp)
    return type(fn)(fn.__code__, namespace, fn.__name__)


_X = np.linspace(0.2, 1.1, 5)
_Y = np.linspace(1.5, 0.5, 5)
PROGRAMS = {"straight": straight, "accumulated": accumulated, "newton_sqrt": newton_sqrt}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_float32_gradients_are_float32_and_match_jax(name, backend):
    fn = PROGRAMS[name]
    x, y = _X.astype(np.float32), _Y.astype(np.float32)
    got = numbax.grad(fn, argnums=(0, 1), backend=backend)(x, y)
    want = jax.grad(_jax(fn), argnums=(0, 1))(x, y)
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mixed_precision_gradients_take_each_parameters_dtype(backend):
    x, y = _X.astype(np.float32), _Y
    got = numbax.grad(straight, argnums=(0, 1), backend=backend)(x, y)
    want = jax.grad(_jax(straight), argnums=(0, 1))(x, y)
    assert [g.dtype for g in got] == [np.float32, np.float64]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


def scalar_param(s, x):
    return np.sum(np.sin(s * x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_float32_scalar_parameter_gets_a_float32_gradient(backend):
    s, x = np.float32(0.7), _X.astype(np.float32)
    got = numbax.grad(scalar_param, backend=backend)(s, x)
    if backend == "python":
        assert np.asarray(got).dtype == np.float32
    else:  # Numba returns every float scalar as a Python float; its value is a float32's
        assert float(np.float32(got)) == got
    np.testing.assert_allclose(got, jax.grad(_jax(scalar_param))(s, x), rtol=2e-5)


def doubled_sines(x):
    h = x
    for i in range(3):
        h = np.sin(h) * 2.0
    return h


def test_vjp_of_a_float32_loop_takes_a_float32_cotangent():
    x = _X.astype(np.float32)
    out, vjp_fun = numbax.vjp(doubled_sines, x)
    (got,) = vjp_fun(np.linspace(1.0, 2.0, 5).astype(np.float32))
    _, jax_vjp = jax.vjp(_jax(doubled_sines), x)
    (want,) = jax_vjp(jnp.linspace(1.0, 2.0, 5).astype(np.float32))
    assert out.dtype == np.float32 and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=2e-5)


def test_the_casts_appear_only_in_narrow_programs():
    narrow = numbax.grad(accumulated).lower_source(_X.astype(np.float32), _Y.astype(np.float32))
    wide = numbax.grad(accumulated).lower_source(_X, _Y)
    assert "rt.primal_dtype(dx, x)" in narrow
    assert "primal_dtype" not in wide and "widen" not in wide
