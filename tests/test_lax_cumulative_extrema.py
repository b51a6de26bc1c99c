"""``numbax.lax.cummax``/``cummin`` against ``jax.lax``'s (float64): values, and derivatives in both modes
and to second order with JAX's weights at ties (its associative scan's), along every axis, reversed or
not, outside compiled code and inside; and the refusals, at the user's line."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

TIES = np.array([[1.0, 3.0, 3.0, 0.5, 3.0, 3.0, -2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0],
                 [0.0, -1.0, 4.0, 4.0, -1.0, 4.0, 5.0]])  # tied running extrema, rows of odd and even length
CASES = [(name, axis, reverse) for name in ("cummax", "cummin") for axis in (0, 1) for reverse in (False, True)]
W = np.cos(np.arange(TIES.size, dtype=float)).reshape(TIES.shape)


def _both(name, axis, reverse):
    def ours(x):
        return getattr(lax, name)(x, axis=axis, reverse=reverse)

    def theirs(x):
        return getattr(jax.lax, name)(x, axis=axis, reverse=reverse)

    return ours, theirs


@pytest.mark.parametrize("name, axis, reverse", CASES)
def test_values_are_jaxs_outside_and_inside_compiled_code(name, axis, reverse):
    ours, theirs = _both(name, axis, reverse)
    want = theirs(TIES)
    np.testing.assert_array_equal(ours(TIES), want)
    np.testing.assert_array_equal(numbax.jit(ours)(TIES), want)
    np.testing.assert_array_equal(numbax.jit(ours)(TIES[:, :6]), theirs(TIES[:, :6]))  # an even length too


@pytest.mark.parametrize("name, axis, reverse", CASES)
def test_derivatives_at_ties_are_jaxs_in_both_modes(name, axis, reverse):
    ours, theirs = _both(name, axis, reverse)

    def loss(x):
        return np.sum(np.sin(ours(x)) * W)

    def jax_loss(x):
        return jnp.sum(jnp.sin(theirs(x)) * W)

    np.testing.assert_allclose(numbax.grad(loss)(TIES), jax.grad(jax_loss)(TIES), rtol=1e-12, atol=1e-15)
    tangent = W[::-1]
    np.testing.assert_allclose(numbax.jvp(ours, (TIES,), (tangent,))[1], jax.jvp(theirs, (TIES,), (tangent,))[1],
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(numbax.jacrev(ours)(TIES), jax.jacrev(theirs)(TIES), rtol=1e-12, atol=1e-15)


def test_away_from_ties_the_derivative_is_central_differences():
    x = np.array([[0.3, 1.2, -0.5, 2.0], [1.0, 0.1, 0.7, 0.2]])

    def f(x):
        return np.sum(lax.cummax(x, axis=1) ** 2 * W[:2, :4]) + np.sum(np.exp(lax.cummin(x, 0, True)))

    h, grad = 1e-6, numbax.grad(f)(x)
    for index in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[index] = h
        np.testing.assert_allclose(grad[index], (f(x + e) - f(x - e)) / (2 * h), rtol=1e-6, atol=1e-9)


def test_second_derivatives_are_jaxs():
    def f(x):
        return np.sum(np.sin(lax.cummax(x, axis=1)) * lax.cummin(x, axis=0, reverse=True))

    def jax_f(x):
        return jnp.sum(jnp.sin(jax.lax.cummax(x, axis=1)) * jax.lax.cummin(x, axis=0, reverse=True))

    want = jax.hessian(jax_f)(TIES)
    np.testing.assert_allclose(numbax.hessian(f)(TIES), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(numbax.jacfwd(numbax.grad(f))(TIES), want, rtol=1e-12, atol=1e-14)


def running_max_rows(x):
    return lax.cummax(x, 1)


def test_dtypes_stay_numpys():
    assert numbax.jit(running_max_rows)(TIES.astype(np.float32)).dtype == np.float32
    ints = np.array([[1, 3, 2, 5]])
    np.testing.assert_array_equal(numbax.jit(running_max_rows)(ints), [[1, 3, 3, 5]])
    assert numbax.jit(running_max_rows)(ints).dtype == ints.dtype


def out_of_bounds(x):
    return lax.cummax(x, axis=2)


def of_a_number(x):
    return lax.cummin(np.sum(x))


def negative_axis(x):
    return lax.cummax(x, axis=-1)


def run_time_axis(x):
    return lax.cummax(x, axis=x.shape[0] - 3)


@pytest.mark.parametrize("fun, message", [(out_of_bounds, "axis 2 is out of bounds"),
                                          (of_a_number, "axis 0 is out of bounds for an operand of 0"),
                                          (negative_axis, "axis -1 is out of bounds"),
                                          (run_time_axis, "must be known when compiling")])
def test_refusals_name_the_line(fun, message):
    with pytest.raises(numbax.NumbaxSpecializationError, match=message) as info:
        numbax.jit(fun)(TIES)
    assert info.value.origin.filename == __file__
    if fun is not run_time_axis:  # as JAX (and numbax outside compiled code) refuse it
        with pytest.raises(ValueError, match="out of bounds"):
            fun(TIES)
