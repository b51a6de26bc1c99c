"""Starred assignment in compiled code: ``head, *rest = xs`` of a compile-time container, and JAX's
``key, *subkeys = random.split(key, n)`` (bit-identical with ``jax.random``); a run-time array whose length
is not known when compiling is refused at the user's line."""
import jax
import numpy as np
import pytest

import numbax
from numbax import random

jax.config.update("jax_enable_x64", True)


def head_and_rest(xs):
    first, *middle, last = xs
    return first * last + sum(middle)


def draws(key):
    key, *subkeys = random.split(key, 3)
    return key, subkeys[1], random.normal(subkeys[0], (2,)) + 2.0 * random.normal(key, (2,))


def jax_draws(key):
    key, *subkeys = jax.random.split(key, 3)
    return key, subkeys[1], jax.random.normal(subkeys[0], (2,)) + 2.0 * jax.random.normal(key, (2,))


def of_an_array(x):
    a, *rest = x
    return a


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_starred_unpacking_of_a_container(backend):
    assert numbax.jit(head_and_rest, backend=backend)((2.0, 1.0, 4.0, 3.0)) == 2.0 * 3.0 + 5.0
    np.testing.assert_allclose(numbax.grad(head_and_rest, backend=backend)((2.0, 1.0, 4.0, 3.0)),
                               (3.0, 1.0, 1.0, 2.0))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_split_into_a_key_and_subkeys_is_jaxs(backend):
    """The keys bit for bit (integer arithmetic, the same on every CPU); the draws to float64 rounding."""
    key, subkey, drawn = numbax.jit(draws, backend=backend)(random.PRNGKey(7))
    want_key, want_subkey, want_drawn = jax_draws(jax.random.PRNGKey(7))
    np.testing.assert_array_equal(key, np.asarray(want_key))
    np.testing.assert_array_equal(subkey, np.asarray(want_subkey))
    np.testing.assert_allclose(drawn, np.asarray(want_drawn), rtol=1e-13)


def test_starred_unpacking_of_a_run_time_array_is_refused():
    with pytest.raises(numbax.NumbaxError, match="starred unpacking of a run-time value") as info:
        numbax.jit(of_an_array, backend="python")(np.ones(3))
    assert info.value.origin.filename == __file__
