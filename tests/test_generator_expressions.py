"""Generator expressions in compiled code: ``sum(f(x) for x in xs)`` over compile-time containers, unrolled
as a list comprehension is (over run-time arrays, a loop), and differentiated like any other code (against
JAX in float64)."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

WS = (np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5]))
X = np.array([0.3, -0.7, 1.1])


def penalty(x, ws):
    return sum(np.sum(np.tanh(w * x)) for w in ws) + max(np.sum(w) for i, w in enumerate(ws) if i > 0)


def jax_penalty(x, ws):
    return sum(jnp.sum(jnp.tanh(w * x)) for w in ws) + max(jnp.sum(w) for i, w in enumerate(ws) if i > 0)


def pairs(x):
    return tuple(x[i] * x[j] for i in range(3) for j in range(i))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_sum_of_a_generator_expression_and_its_gradient(backend):
    np.testing.assert_allclose(numbax.jit(penalty, backend=backend)(X, WS), jax_penalty(X, WS), rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(penalty, backend=backend)(X, WS), jax.grad(jax_penalty)(X, WS),
                               rtol=1e-12)


def test_nested_generators_make_a_tuple():
    np.testing.assert_allclose(numbax.jit(pairs, backend="python")(X), [X[1] * X[0], X[2] * X[0], X[2] * X[1]])


def over_an_array(x):
    return sum(v * v for v in x)


def test_a_generator_over_a_run_time_array_is_summed_in_a_loop():
    """Over a run-time array, the generator's items are the array's rows (tests/test_run_time_lists.py)."""
    assert numbax.jit(over_an_array)(X) == over_an_array(X)
    np.testing.assert_allclose(numbax.grad(over_an_array)(X), 2 * X, rtol=1e-15)
