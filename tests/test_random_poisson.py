"""``numbax.random.poisson`` against ``jax.random.poisson``: the same counts, bit for bit, for rates below 10
(Knuth's algorithm; 0, negative and NaN rates as JAX gives them), outside and inside compiled code; JAX's
counts for rates of 10 or more (transformed rejection) but for draws whose float32 decision falls within
rounding of its threshold (which may differ across CPUs: 99% asked for), with the mean and variance of the
rate, also mixed with lower rates in one array; no derivative flows to the rate (JAX's is zero, in both
modes)."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax import random

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

RATES = np.array([0.0, 0.3, 1.0, 2.5, 5.0, 7.7, 9.99, np.nan, -1.0])
LAM = np.array([[0.5, 2.0, 8.0], [1.0, 3.0, 0.0]])


@pytest.mark.parametrize("seed", [0, 7, 123456])
def test_counts_are_jaxs_bit_for_bit(seed):
    ours = random.poisson(random.PRNGKey(seed), RATES, (40, RATES.size))
    theirs = jax.random.poisson(jax.random.PRNGKey(seed), RATES, (40, RATES.size))
    np.testing.assert_array_equal(ours, theirs)
    assert ours.dtype == np.int64


def test_a_number_an_int32_dtype_and_lams_own_shape():
    key, jax_key = random.PRNGKey(3), jax.random.PRNGKey(3)
    np.testing.assert_array_equal(random.poisson(key, 4.0, (7,), np.int32),
                                  jax.random.poisson(jax_key, 4.0, (7,), jnp.int32))
    assert random.poisson(key, 4.0, (7,), np.int32).dtype == np.int32
    np.testing.assert_array_equal(random.poisson(key, LAM), jax.random.poisson(jax_key, LAM))


def draw(key, lam):
    return random.poisson(key, lam, dtype=np.int32)


def draw_like(key, lam, x):
    return random.poisson(key, lam[0, 1], x.shape)


def test_inside_jit_with_run_time_rates_and_shapes():
    key, jax_key = random.PRNGKey(11), jax.random.PRNGKey(11)
    ours = numbax.jit(draw)(key, LAM)
    np.testing.assert_array_equal(ours, jax.random.poisson(jax_key, LAM, dtype=jnp.int32))
    assert ours.dtype == np.int32
    np.testing.assert_array_equal(numbax.jit(draw_like)(key, LAM, np.ones((3, 5))),
                                  jax.random.poisson(jax_key, 2.0, (3, 5)))


def weighted(lam, key):
    return np.sum(random.poisson(key, lam) * lam)


def jax_weighted(lam, key):
    return jnp.sum(jax.random.poisson(key, lam) * lam)


def test_no_derivative_flows_to_the_rate_as_in_jax():
    key, jax_key = random.PRNGKey(5), jax.random.PRNGKey(5)
    want = jax.grad(jax_weighted)(LAM, jax_key)  # the counts themselves: d(counts)/d(lam) is zero
    np.testing.assert_array_equal(numbax.grad(weighted)(LAM, key), want)
    np.testing.assert_array_equal(numbax.jacfwd(weighted)(LAM, key), jax.jacfwd(jax_weighted)(LAM, jax_key))


@pytest.mark.parametrize("rate", [10.0, 37.5, 1000.0])
def test_rates_of_ten_or_more_are_jaxs_transformed_rejection(rate):
    n = 10_000
    ours = random.poisson(random.PRNGKey(2), rate, (n,))
    assert np.mean(ours == jax.random.poisson(jax.random.PRNGKey(2), rate, (n,))) >= 0.99
    assert abs(ours.mean() - rate) < 4.0 * np.sqrt(rate / n)  # four standard errors
    assert abs(ours.var() / rate - 1.0) < 0.06  # four standard errors of a variance's estimate


def test_mixed_rates_in_one_array_and_inside_jit():
    rates = np.array([0.0, 3.0, 9.99, np.nan, 10.0, 25.0, 400.0])
    ours = random.poisson(random.PRNGKey(4), rates, (500, rates.size))
    theirs = np.asarray(jax.random.poisson(jax.random.PRNGKey(4), rates, (500, rates.size)))
    np.testing.assert_array_equal(ours[:, :4], theirs[:, :4])  # Knuth's, whatever the other rates draw
    assert np.mean(ours[:, 4:] == theirs[:, 4:]) >= 0.99
    lam = np.tile(LAM * 20.0, (100, 1))  # 0 to 160, a run-time value
    inside = numbax.jit(draw)(random.PRNGKey(11), lam)
    assert inside.dtype == np.int32
    assert np.mean(inside == jax.random.poisson(jax.random.PRNGKey(11), lam, dtype=jnp.int32)) >= 0.99
