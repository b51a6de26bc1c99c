"""The derivatives of ``np.cumprod`` are exact where its operand has zeros, to second order.

``rt.cumprod_grad`` (first order), and ``rt.cumprod_jvp`` and ``rt.cumprod_grad_vjp`` (its adjoints in the
cotangent and in the operand, second order) multiply exclusive products instead of dividing the
cumulative products by the operand, which was nan at a zero. Checked against JAX in float64 and central
differences, along every axis form of 1-D to 3-D operands, as a function and as a method; the
functions are defined once, and their gradients made once per backend, so that the cpu cases share
compilations. A third derivative would need ``rt.cumprod_grad_vjp``'s own rule, and is refused.
"""
import functools
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import fd_grad, to_jax  # noqa: E402  (also turns on JAX's float64 mode)

TOL = dict(rtol=1e-9, atol=1e-10)
FD_TOL = dict(rtol=1e-5, atol=1e-6)

VECTORS = {
    "one_zero": np.array([0.5, 0.0, 2.0, 3.0, -1.5]),
    "two_zeros": np.array([0.0, 1.5, -2.0, 0.0, 0.7]),
    "no_zero": np.array([0.5, -1.2, 2.0, 0.8, 1.1]),
    "negative": np.array([-0.5, -1.2, -2.0, -0.8, -1.1]),
}
MATRICES = {
    "zeros": np.array([[0.5, 0.0, 2.0, -1.0], [0.0, 1.5, 0.0, 0.7], [1.2, -0.4, 0.9, 1.3]]),
    "no_zero": np.array([[0.5, -1.1, 2.0, -1.0], [0.3, 1.5, -0.6, 0.7], [1.2, -0.4, 0.9, 1.3]]),
}
BLOCK = np.random.default_rng(3).uniform(-1.5, 1.5, size=(2, 3, 4))
BLOCK[0, 1, 2] = BLOCK[1, 0, 0] = BLOCK[1, 0, 3] = BLOCK[1, 2, 1] = 0.0
INPUTS = {**{f"1d_{k}": v for k, v in VECTORS.items()}, **{f"2d_{k}": v for k, v in MATRICES.items()},
          "3d_zeros": BLOCK}


def cumprod_flat(x, w):
    return np.sum(np.sin(np.cumprod(x)) * w)


def cumprod_first(x, w):
    return np.sum(np.sin(np.cumprod(x, axis=0)) * w)


def cumprod_second(x, w):
    return np.sum(np.sin(np.cumprod(x, 1)) * w)


def cumprod_last(x, w):
    return np.sum(np.sin(np.cumprod(x, axis=-1)) * w)


def method_flat(x, w):
    return np.sum(x.cumprod() * w)


def method_second(x, w):
    return np.sum(x.cumprod(axis=1) * w)


FUNCTIONS = (cumprod_flat, cumprod_first, cumprod_second, cumprod_last, method_flat, method_second)
TAKES_2D = (cumprod_second, method_second)
CASES = [(fn, name) for fn in FUNCTIONS for name, x in INPUTS.items() if x.ndim > 1 or fn not in TAKES_2D]
IDS = [f"{fn.__name__}-{name}" for fn, name in CASES]
# on cpu, second order compiles first order too: the first-order cases are the other forms
CPU_FIRST = [(method_flat, "1d_two_zeros"), (cumprod_last, "1d_one_zero")]
CPU_SECOND = [(cumprod_flat, "2d_zeros"), (cumprod_second, "3d_zeros")]


def _weights(fn, x):
    """A fixed cotangent of ``fn``'s cumulative products: flat without an axis."""
    shape = (x.size,) if fn in (cumprod_flat, method_flat) else x.shape
    return np.random.default_rng(x.size).normal(size=shape)


def _direction(x):
    return np.random.default_rng(x.size + 1).normal(size=x.shape)


def _hvp_of(fn):
    """``<numbax.grad(fn)(x, w), v>``: differentiated again, a Hessian-vector product."""
    def hvp(x, w, v):
        return np.sum(numbax.grad(fn)(x, w) * v)
    return hvp


HVPS = {fn: _hvp_of(fn) for fn in FUNCTIONS}


@functools.lru_cache(maxsize=None)
def _grad(fn, backend):
    return numbax.grad(fn, backend=backend)


def _check_first(fn, name, backend):
    x = INPUTS[name]
    w = _weights(fn, x)
    got = _grad(fn, backend)(x, w)
    assert got.shape == x.shape
    np.testing.assert_allclose(got, jax.grad(to_jax(fn))(x, w), **TOL)
    np.testing.assert_allclose(got, fd_grad(fn, (x, w)), **FD_TOL)


def _check_second(fn, name, backend):
    x = INPUTS[name]
    w, v = _weights(fn, x), _direction(x)
    got = _grad(HVPS[fn], backend)(x, w, v)
    jax_fn = to_jax(fn)
    np.testing.assert_allclose(got, jax.grad(lambda x: jnp.vdot(jax.grad(jax_fn)(x, w), v))(x), **TOL)
    first = _grad(fn, "python")
    np.testing.assert_allclose(got, fd_grad(lambda x: np.sum(first(x, w) * v), (x,)), **FD_TOL)


@pytest.mark.parametrize("fn, name", CASES, ids=IDS)
def test_first_order_is_exact_at_zeros(fn, name):
    _check_first(fn, name, "python")


@pytest.mark.parametrize("fn, name", CPU_FIRST, ids=[f"{fn.__name__}-{name}" for fn, name in CPU_FIRST])
def test_first_order_is_exact_at_zeros_cpu(fn, name):
    _check_first(fn, name, "cpu")


def test_the_issue_example():
    """Was ``[1, nan, 0, 0]``: the reverse sum of ``g * ans`` divided by ``a``."""
    got = numbax.grad(method_flat, backend="python")(np.array([0.5, 0.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(got, [1.0, 16.0, 0.0, 0.0])


@pytest.mark.parametrize("fn, name", CASES, ids=IDS)
def test_hessian_vector_product_is_exact_at_zeros(fn, name):
    _check_second(fn, name, "python")


@pytest.mark.parametrize("fn, name", CPU_SECOND, ids=[f"{fn.__name__}-{name}" for fn, name in CPU_SECOND])
def test_hessian_vector_product_is_exact_at_zeros_cpu(fn, name):
    _check_second(fn, name, "cpu")


def scans_of_columns(x):
    return np.cumprod(x, axis=0)


def pulled_back(x, v):
    """The cotangent of the cumulative products depends on ``x``: both of ``rt.cumprod_grad``'s adjoints."""
    out, pull = numbax.vjp(scans_of_columns, x)
    (g,) = pull(np.sin(out) * v)
    return np.sum(g * g)


def jax_pulled_back(x, v):
    out, pull = jax.vjp(lambda x: jnp.cumprod(x, axis=0), x)
    (g,) = pull(jnp.sin(out) * v)
    return jnp.sum(g * g)


@pytest.mark.parametrize("backend, name", [("python", "1d_two_zeros"), ("python", "2d_zeros"),
                                           ("python", "3d_zeros"), ("python", "2d_no_zero"), ("cpu", "2d_zeros")])
def test_grad_of_vjp_is_exact_at_zeros(backend, name):
    x = INPUTS[name]
    v = _direction(x)
    got = _grad(pulled_back, backend)(x, v)
    np.testing.assert_allclose(got, jax.grad(jax_pulled_back)(x, v), **TOL)
    np.testing.assert_allclose(got, fd_grad(pulled_back, (x, v)), **FD_TOL)


def hvp_of_flat(x, w, v):
    return np.sum(numbax.grad(cumprod_flat)(x, w) * v)


def third_order(x, w, v):
    return numbax.grad(hvp_of_flat)(x, w, v)[1]


def test_third_order_is_refused_at_the_users_line():
    x = VECTORS["one_zero"]
    line = third_order.__code__.co_firstlineno + 1
    with pytest.raises(numbax.NumbaxDifferentiationError, match="rt.cumprod_grad_vjp") as info:
        numbax.grad(third_order, backend="python")(x, _weights(cumprod_flat, x), _direction(x))
    assert f"{os.path.basename(__file__)}:{line}" in str(info.value)


W4 = np.array([1.0, 2.0, 3.0, 4.0])


def squared_modulus_of_scans(z):
    return np.sum(np.abs(np.cumprod(z)) ** 2 * W4)


def real_part_of_complex_scans(x):
    return np.sum(np.real(np.cumprod(x * (1 + 0.5j))) * W4)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_complex_scans_follow_jax_at_zeros(backend):
    z = np.array([.5 + .2j, 0.0, 2.0 - 1j, 3.0])
    expected = jax.grad(lambda z: jnp.sum(jnp.abs(jnp.cumprod(z)) ** 2 * W4))(z)
    np.testing.assert_allclose(numbax.grad(squared_modulus_of_scans, backend=backend)(z), expected, rtol=1e-12)
    x = np.array([.5, 0.0, 2.0, 3.0])
    expected = jax.grad(lambda x: jnp.sum(jnp.real(jnp.cumprod(x * (1 + 0.5j))) * W4))(x)
    np.testing.assert_allclose(numbax.grad(real_part_of_complex_scans, backend=backend)(x), expected, rtol=1e-12)
