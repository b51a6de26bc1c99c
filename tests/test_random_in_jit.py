"""numbax.random inside jit and grad: the same bits as outside, keys without derivatives, clear limits."""
from __future__ import annotations

import numpy as np
import pytest

import numbax
from numbax import random

BACKENDS = ("python", "cpu")
KEY = random.PRNGKey(7)


def noisy_loss(w, key):
    k1, k2, k3 = random.split(key, 3)
    eps = random.normal(k1, (3,))
    u = random.uniform(k2, (3,), minval=-1.0, maxval=1.0)
    g = random.gumbel(random.fold_in(k3, 5), (3,), np.float32)
    return np.sum((w + 0.1 * eps) ** 2 * u) + np.sum(random.exponential(k3, (2, 2))) + np.sum(g)


def draws(key, n):
    out = np.zeros(n)
    for i in range(n):
        out[i] = random.normal(random.fold_in(key, i))
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_samples_inside_jit_are_the_same_bits(backend):
    w = np.array([1.0, -2.0, 0.5])
    assert numbax.jit(noisy_loss, backend=backend)(w, KEY) == noisy_loss(w, KEY)
    assert np.array_equal(numbax.jit(draws, backend=backend)(KEY, 4), draws(KEY, 4))


def discrete_draws(key):
    return random.bits(key, (3,), np.uint32), random.randint(key, (4,), -5, 10), random.bernoulli(key, 0.3, (5,))


@pytest.mark.parametrize("backend", BACKENDS)
def test_discrete_samples_inside_jit_are_the_same_bits(backend):
    for got, want in zip(numbax.jit(discrete_draws, backend=backend)(KEY), discrete_draws(KEY)):
        assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_through_a_function_that_samples(backend):
    w = np.array([1.0, -2.0, 0.5])
    k1, k2, _ = random.split(KEY, 3)
    eps, u = random.normal(k1, (3,)), random.uniform(k2, (3,), minval=-1.0, maxval=1.0)
    np.testing.assert_allclose(numbax.grad(noisy_loss, backend=backend)(w, KEY), 2 * (w + 0.1 * eps) * u,
                               rtol=1e-12)


def shuffled(key, x):
    return random.permutation(key, x)


def sized_at_run_time(key, n):
    return random.normal(key, (n,))


def test_samplers_not_lowered_yet_say_what_to_do():
    with pytest.raises(numbax.NumbaxSpecializationError, match="permutation inside compiled code"):
        numbax.jit(shuffled)(KEY, np.arange(3.0))


def test_shapes_must_be_static():
    with pytest.raises(numbax.NumbaxSpecializationError, match="shape must be known at compile time"):
        numbax.jit(sized_at_run_time)(KEY, 3)
    assert numbax.jit(sized_at_run_time, static_argnums=(1,))(KEY, 3).shape == (3,)
