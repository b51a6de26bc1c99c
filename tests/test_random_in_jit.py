"""numbax.random inside jit and grad: the same bits as outside, keys without derivatives, clear limits."""
from __future__ import annotations

import functools
import os
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax import random

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixtures.float_compare import GAMMA_ULPS, assert_bits_equal, assert_gamma_samples_close  # noqa: E402

jax.config.update("jax_enable_x64", True)

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


def sized_at_run_time(key, n):
    return random.normal(key, (n,))


def like(key, x):
    k1, k2, k3 = random.split(key, 3)
    return (x + random.normal(k1, x.shape), random.uniform(k2, x.shape, minval=-2.0, maxval=3.0),
            random.exponential(k3, (x.shape[0], 2)), random.gumbel(key, x.shape[-1], np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_shapes_known_at_run_time(backend):
    """``normal(key, x.shape)`` and other shapes whose dims are run-time ints (JAX's shapes inside ``jit`` come
    from the arrays): the same bits as the draws outside, for arrays of each shape one compilation serves."""
    jitted = numbax.jit(like, backend=backend)
    for x in (np.zeros((2, 3)), np.ones((4, 1)), np.zeros((0, 5))):
        for got, want in zip(jitted(KEY, x), like(KEY, x)):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert_bits_equal(got, want)
    assert len(jitted._cache) == 1
    np.testing.assert_array_equal(numbax.jit(sized_at_run_time, backend=backend)(KEY, 3), sized_at_run_time(KEY, 3))
    np.testing.assert_allclose(numbax.jit(sized_at_run_time, backend=backend)(KEY, 3),
                               jax.random.normal(jax.random.PRNGKey(7), (3,)), rtol=1e-13)
    per_row = numbax.vmap(lambda k, row: row + random.normal(k, row.shape), backend=backend)
    keys = random.split(KEY, 3)
    np.testing.assert_array_equal(per_row(keys, np.zeros((3, 2))), np.stack([random.normal(k, (2,)) for k in keys]))
    np.testing.assert_allclose(numbax.grad(lambda x, k: np.sum(like(k, x)[0] ** 2), backend=backend)(X, KEY),
                               2 * like(KEY, X)[0], rtol=1e-13)


def resampled(key, x, n):
    return (random.choice(key, x, (x.shape[0],)), random.choice(key, x, (n, 2), False), random.choice(key, n, x.shape),
            random.choice(key, x.shape[0], (n,), True, x / np.sum(x)))


def resampled_rows(key, x):
    return random.choice(key, x, (x.shape[0],))


def resampled_loss(x, key):
    return np.sum(random.choice(key, x, (x.shape[0],)) ** 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_choice_of_a_shape_known_at_run_time(backend):
    """``choice(key, x, (x.shape[0],))``, the bootstrap's resample, as JAX's shapes inside ``jit`` come from the
    arrays: the same bits as the draws outside and as JAX's, one compilation for every length, the counts
    checked when the draw runs, and the derivative of the gather; ``a`` of more than one axis is refused."""
    jitted = numbax.jit(resampled, backend=backend)
    for x, n in ((np.arange(1.0, 7.0), 3), (np.arange(1.0, 3.0), 1)):
        got, eager, oracle = jitted(KEY, x, n), resampled(KEY, x, n), with_jax(resampled)(KEY, x, n)
        for ours, theirs, jaxs in zip(got, eager, oracle):
            assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
            assert_bits_equal(ours, theirs)
            assert_bits_equal(ours, np.asarray(jaxs))
    assert len(jitted._cache) == 1
    with pytest.raises(ValueError, match="more samples than there are entries"):
        jitted(KEY, np.arange(1.0, 3.0), 2)
    np.testing.assert_allclose(numbax.grad(resampled_loss, backend=backend)(NORMALS[0, 0], KEY),
                               np.asarray(jax.grad(with_jax(resampled_loss))(NORMALS[0, 0], KEY)), rtol=1e-13)
    with pytest.raises(numbax.NumbaxSpecializationError, match="where a has more than one axis"):
        numbax.jit(resampled_rows, backend=backend)(KEY, X)


LOW, HIGH = np.zeros(3), np.ones(3)


def bounded_by_arrays(key, x):
    return random.uniform(key, x.shape, minval=LOW, maxval=HIGH)


def sized_by_an_array(key, s):
    return random.normal(key, s)


def test_run_time_shapes_refused_where_numbax_cannot_tell_the_rank_or_broadcast():
    with pytest.raises(numbax.NumbaxSpecializationError, match="bounds must be numbers"):
        numbax.jit(bounded_by_arrays)(KEY, np.zeros(3))
    with pytest.raises(numbax.NumbaxSpecializationError, match="shape must be a tuple of integers"):
        numbax.jit(sized_by_an_array)(KEY, np.array([2, 3]))
    with pytest.raises(numbax.NumbaxSpecializationError, match="shape must be known at compile time"):
        numbax.jit(lambda key, n: random.randint(key, (n,), 0, 3))(KEY, 3)


# ---- permutation, choice, categorical, truncated_normal, gamma: the same bits as eager and JAX's (gamma's:
# within GAMMA_ULPS of JAX's, whose rsqrt is the CPU's) ------------------------------------------------------
#
# Each function below draws in many argument forms; numbax compiles it once per backend, and the draws are
# compared with the same function run eagerly and run with ``jax.random`` (and ``jax.numpy``) in place of
# ``numbax.random`` (and ``numpy``). Keys are run-time arguments, so other seeds need no new compilation.

SEEDS = [7, 2 ** 40 + 3, 0]
X = np.arange(20.0).reshape(5, 4)
BIG = np.arange(2000.0).reshape(40, 50)  # 2000 elements: two sorting rounds in JAX's shuffle
P = np.array([0.1, 0.0, 0.3, 0.15, 0.45])
LOGITS = np.random.default_rng(0).normal(size=(4, 6))
LOWER, UPPER = np.array([-1.0, 0.0, 0.5]), np.array([[1.0], [2.0]])
ALPHA = np.array([0.1, 1.0, 4.0, 50.0])


def permutations(key, x, big, n, x32, ints):
    return (random.permutation(key, 7), random.permutation(key, n), random.permutation(key, x),
            random.permutation(key, x, 1), random.permutation(key, x, 1, True), random.permutation(key, x, -2, True),
            random.permutation(key, big, 1, True), random.permutation(key, x32, 1),
            random.permutation(key, ints, 0, True))


def choices(key, x, n, p, p32):
    return (random.choice(key, 5, (3,)), random.choice(key, n, (2, 2), False), random.choice(key, x, (2,), axis=1),
            random.choice(key, x, (2, 2), False, axis=1), random.choice(key, 5, (3,), True, p),
            random.choice(key, 5, (4,), False, p), random.choice(key, x, (2, 3), True, p32),
            random.choice(key, x, (3,), False, p32, axis=0), random.choice(key, x, (0,)),
            random.choice(key, 4, (2,), True, np.array([1, 0, 2, 3])))


def categoricals(key, logits, logits32):
    return (random.categorical(key, logits), random.categorical(key, logits, 0),
            random.categorical(key, logits, 0, (5, 6)), random.categorical(key, logits, 1, (2, 4)),
            random.categorical(key, logits32), random.categorical(key, logits32, -1, (3, 4)))


def truncated_normals(key, lower, upper):
    return (random.truncated_normal(key, lower, upper), random.truncated_normal(key, lower, upper, None, np.float32),
            random.truncated_normal(key, -1.5, 0.7, (3, 5), np.float32), random.truncated_normal(key, -1.5, 0.7, (7,)),
            random.truncated_normal(key, lower, 2.5, (4, 3)), random.truncated_normal(key, -3.0, upper[0, 0]))


def gammas(key, a):
    return (random.gamma(key, a), random.gamma(key, a, (2, 4), np.float32), random.gamma(key, 2.5, (3,)),
            random.gamma(key, 0.3, (), np.float32))


SAMPLERS = {"permutation": (permutations, (X, BIG, 10, X.astype(np.float32), X.astype(np.int32))),
            "choice": (choices, (X, 6, P, P.astype(np.float32))),
            "categorical": (categoricals, (LOGITS, LOGITS.astype(np.float32))),
            "truncated_normal": (truncated_normals, (LOWER, UPPER)), "gamma": (gammas, (ALPHA,))}


def with_jax(fn):
    """``fn`` reading ``jax.random`` and ``jax.numpy`` where it reads ``numbax.random`` and ``numpy``: the oracle."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "random": jax.random, "np": jnp}, fn.__name__,
                              fn.__defaults__)


@functools.lru_cache(maxsize=None)
def compiled(fn, backend, transform=numbax.jit, **options):
    """One compiled function per backend for the whole module (each Numba compilation costs about 0.5 s)."""
    return transform(fn, backend=backend, **options)


@functools.lru_cache(maxsize=None)
def eager_and_jax(name, seed):
    fn, args = SAMPLERS[name]
    key = random.PRNGKey(seed)
    return fn(key, *args), with_jax(fn)(key, *args)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(SAMPLERS))
def test_samplers_inside_jit_match_eager_and_jax(name, backend, seed):
    """Compiled draws have the eager draws' bits, and JAX's; gamma's are within ``GAMMA_ULPS`` of JAX's but for
    at most one accept/reject flip per array, since its ``rsqrt`` starts from the CPU's estimate
    (``fixtures/float_compare.py``)."""
    fn, args = SAMPLERS[name]
    got = compiled(fn, backend)(random.PRNGKey(seed), *args)
    eager, oracle = eager_and_jax(name, seed)
    assert len(got) == len(eager) == len(oracle)
    for ours, theirs, jax_draw in zip(got, eager, oracle):
        assert_bits_equal(ours, theirs)
        if name == "gamma":
            assert_gamma_samples_close(ours, jax_draw)
        else:
            assert_bits_equal(ours, jax_draw)


@pytest.mark.parametrize("backend", BACKENDS)
def test_permutation_of_a_run_time_int(backend):
    """``permutation(key, n)`` of a run-time ``n``: other sizes (one and two sorting rounds), the same code."""
    fn, (x, big, _, x32, ints) = SAMPLERS["permutation"]
    for n in (1, 2000):
        got = compiled(fn, backend)(KEY, x, big, n, x32, ints)[1]
        assert_bits_equal(got, random.permutation(KEY, n))
        assert_bits_equal(got, jax.random.permutation(KEY, n))


# ---- inside grad: keys carry no derivative, parameters and gathered arrays do, as in JAX -------------------

W = np.arange(1.0, 7.0).reshape(2, 3)


def truncated_normal_loss(lower, upper, key):
    k1, k2 = random.split(key)
    return (np.sum(W * random.truncated_normal(k1, lower, upper, (2, 3))) +
            np.sum(random.truncated_normal(k2, lower, upper, None, np.float32) ** 2))


def gamma_loss(a, key):
    k1, k2, k3 = random.split(key, 3)
    return (np.sum(W[:, :2] * random.gamma(k1, a, (2, 2))) + np.sum(np.log(random.gamma(k2, a))) +
            np.sum(random.gamma(k3, a, (3, 2), np.float32)))


def permutation_loss(x, key):
    return (np.sum(W * random.permutation(key, x, 1)) + np.sum(W * random.permutation(key, x, 0, True) ** 2) +
            np.sum(random.permutation(key, x[0]) * W[1]))


def choice_loss(x, p, key):
    return (np.sum(random.choice(key, x, (2, 2), axis=1) ** 2) + np.sum(random.choice(key, x, (2,), False, p, axis=1))
            + np.sum(W * random.choice(key, x[1], (2, 3), True, p)))


def categorical_loss(logits, key):
    return np.sum(logits ** 2) + np.sum(random.categorical(key, logits) * 1.0)


NORMALS = np.random.default_rng(1).normal(size=(3, 2, 3))
GRAD_CASES = {"truncated_normal": (truncated_normal_loss, (LOWER, UPPER), (0, 1)),
              "gamma": (gamma_loss, (np.array([0.3, 4.0]),), 0),
              "permutation": (permutation_loss, (NORMALS[0],), 0),
              "choice": (choice_loss, (NORMALS[1], np.array([0.2, 0.5, 0.3])), (0, 1)),
              "categorical": (categorical_loss, (NORMALS[2],), 0)}


# gamma's loss sums float32 samples, each within GAMMA_ULPS of JAX's (its rsqrt is the CPU's), and so their
# derivatives: 1024 ulp of float32 is 1.2e-4 relative at most. A flipped accept/reject decision (about one in
# 20,000 samples where the CPU's rsqrt differs by 4 ulp, never where it agrees) would fail this test.
GRAD_RTOL = {"gamma": 2.0 * GAMMA_ULPS * np.finfo(np.float32).eps}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_grad_through_samplers_matches_jax(name, backend):
    loss, args, argnums = GRAD_CASES[name]
    for seed in SEEDS[:2]:
        key = random.PRNGKey(seed)
        got = compiled(loss, backend, numbax.grad, argnums=argnums)(*args, key)
        want = jax.grad(with_jax(loss), argnums=argnums)(*args, key)
        for ours, theirs in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(ours, np.asarray(theirs), rtol=GRAD_RTOL.get(name, 1e-6), atol=1e-12)


# ---- what must be known at compile time, and errors at the user's line -------------------------------------


def permuted_along(key, x, axis):
    return random.permutation(key, x, axis)


def chosen(key, x, replace):
    return random.choice(key, x, (2,), replace)


def drawn_from_a_squeezed_array(key, x):
    return random.permutation(key, np.squeeze(x))  # its rank depends on the run-time shape


def gamma_of_a_negative_shape(key):
    return random.gamma(key, -1.0, (2,))


def too_many_without_replacement(key, n):
    return random.choice(key, n, (4,), False)


def test_axes_and_replace_must_be_static():
    with pytest.raises(numbax.NumbaxSpecializationError, match="axis must be known at compile time"):
        numbax.jit(permuted_along)(KEY, X, 1)
    assert_bits_equal(numbax.jit(permuted_along, static_argnums=(2,))(KEY, X, 1), random.permutation(KEY, X, 1))
    with pytest.raises(numbax.NumbaxSpecializationError, match="replace must be known at compile time"):
        numbax.jit(chosen, backend="python")(KEY, X, False)


def test_an_array_of_unknown_ndim_is_a_clear_error():
    with pytest.raises(numbax.NumbaxSpecializationError, match="needs the number of dimensions of its x"):
        numbax.jit(drawn_from_a_squeezed_array, backend="python")(KEY, X[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_argument_errors_inside_jit_point_at_the_users_line(backend):
    with pytest.raises(random.NumbaxRandomArgumentError, match="must be positive") as info:
        numbax.jit(gamma_of_a_negative_shape, backend=backend)(KEY)
    assert f"{__file__}:" in str(info.value)
    with pytest.raises(ValueError, match="more samples than there are entries"):
        numbax.jit(too_many_without_replacement, backend=backend)(KEY, 3)


def normal_of_each(keys):
    return numbax.vmap(lambda k: random.normal(k))(keys)


def split_and_fold(key):
    return random.fold_in(random.split(key)[1], 7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_key_of_other_than_two_words_is_refused_at_run_time(backend):
    """The kernels read a key's two words unchecked: a key of one or three words must not read past it."""
    for keys in (np.zeros((3, 1), np.uint32), np.zeros((3, 3), np.uint32)):
        with pytest.raises(numbax.NumbaxShapeError, match=r"expects a key.*got shape \((1|3),\)") as info:
            numbax.jit(normal_of_each, backend=backend)(keys)
        assert f"{__file__}:" in str(info.value)
    with pytest.raises(numbax.NumbaxShapeError, match="expects a key"):
        numbax.jit(split_and_fold, backend=backend)(np.zeros(4, np.uint32))
    np.testing.assert_array_equal(numbax.jit(split_and_fold, backend=backend)(KEY), split_and_fold(KEY))
    np.testing.assert_array_equal(numbax.jit(normal_of_each, backend=backend)(random.split(KEY, 3)),
                                  np.stack([random.normal(k) for k in random.split(KEY, 3)]))


def uniform_from(low, key):
    return np.sum(random.uniform(key, (3,), minval=low))


def test_a_parameter_without_a_derivative_rule_must_be_static_rather_than_give_zero():
    with pytest.raises(numbax.NumbaxSpecializationError, match="minval must be known at compile time"):
        numbax.grad(uniform_from, backend="python")(0.5, KEY)


def new_key(seed):
    key = random.PRNGKey(seed)
    typed = random.key(seed)
    return key, random.split(typed)[1], random.PRNGKey(5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_keys_made_inside_compiled_code_are_jaxs(backend):
    """``PRNGKey(seed)`` and ``key(seed)`` of a run-time seed: the key made outside (JAX's, with 64-bit seeds
    as with jax_enable_x64; 32-bit seeds in 32 bits), one compilation for every seed of a dtype."""
    jitted = numbax.jit(new_key, backend=backend)
    for seed in (0, 3, -1, 2 ** 40 + 3, -(2 ** 63), np.int32(-1), np.uint32(2 ** 32 - 1), np.uint64(2 ** 64 - 1)):
        for got, want in zip(jitted(seed), new_key(seed)):
            assert got.dtype == np.uint32
            np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(jitted(2 ** 40 + 3)[0], jax.random.PRNGKey(2 ** 40 + 3))
    np.testing.assert_array_equal(jitted(3)[1], jax.random.split(jax.random.PRNGKey(3))[1])


def test_a_key_of_a_non_integer_seed_is_refused_at_the_users_line():
    with pytest.raises(numbax.NumbaxSpecializationError, match="takes one integer seed") as info:
        numbax.jit(new_key)(1.5)
    assert "test_random_in_jit.py" in str(info.value)
    with pytest.raises(random.NumbaxRandomArgumentError, match="takes one integer seed"):
        numbax.jit(lambda k: random.PRNGKey(2.5) + k)(KEY)


def categorical_of_computed_logits(key, n):
    logits = np.log(np.arange(1.0, n + 1.0))  # its rank is found by calling NumPy on a small probe
    return random.categorical(key, logits, shape=(6,))


@pytest.mark.parametrize("backend", BACKENDS)
def test_arrays_made_inside_the_function_have_known_ranks(backend):
    assert_bits_equal(numbax.jit(categorical_of_computed_logits, backend=backend)(KEY, 4),
                     categorical_of_computed_logits(KEY, 4))
