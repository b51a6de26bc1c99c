"""``numbax.random`` against ``jax.random``: the same keys and the same samples, bit for bit.

JAX runs in its float64 mode (``jax_enable_x64``), whose defaults numbax follows; float32 samples
are compared too. Every comparison is exact (equal shapes, equal dtypes and equal bits) except where
XLA's result depends on the CPU: ``rsqrt``, and ``gamma`` which calls it, are compared within the
ulp bounds of ``fixtures/float_compare.py``, so that the suite passes on every x86-64 CPU.
"""
import os
import sys

import numba
import numpy as np
import pytest

import jax

from numbax import random
from numbax.runtime.random import elementwise
from numbax.runtime.random.continuous import normal_kernel, uniform_kernel
from numbax.runtime.random.threefry import split_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixtures.float_compare import RSQRT_ULPS, assert_bits_equal, assert_gamma_samples_close, \
    assert_within_ulps  # noqa: E402

jax.config.update("jax_enable_x64", True)
jr = jax.random

SEEDS = [0, 42, -1, -5, 2 ** 31, 2 ** 40 + 3, -(2 ** 63), 2 ** 63 - 1]
SHAPES = [(), (7,), (3, 5)]
FLOATS = [np.float32, np.float64]


@pytest.fixture(params=[7, 2 ** 40 + 3], ids=["seed7", "seed2^40+3"])
def key(request):
    return random.PRNGKey(request.param)


# ---- keys -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS + [np.int32(-7), np.uint32(7), np.uint64(2 ** 63 + 5)])
def test_prng_key_matches_jax(seed):
    assert_bits_equal(random.PRNGKey(seed), jr.PRNGKey(seed))
    assert_bits_equal(random.key(seed), jr.key_data(jr.key(seed)))


def test_key_is_its_own_data():
    k = random.key(3)
    assert_bits_equal(random.key_data(k), k)
    assert_bits_equal(random.key(3), random.PRNGKey(3))


@pytest.mark.parametrize("num", [2, 3, 1, (2, 3), ()])
def test_split_matches_jax(key, num):
    assert_bits_equal(random.split(key, num), jr.split(key, num))


@pytest.mark.parametrize("data", [0, 1, 7, 2 ** 31, 2 ** 32 - 1, np.int64(-3)])
def test_fold_in_matches_jax(key, data):
    assert_bits_equal(random.fold_in(key, data), jr.fold_in(key, data))


def test_split_and_fold_in_chain_matches_jax():
    ours, theirs = random.PRNGKey(11), jr.PRNGKey(11)
    for step in range(5):
        ours, _ = random.split(random.fold_in(ours, step))
        theirs, _ = jr.split(jr.fold_in(theirs, step))
    assert_bits_equal(ours, theirs)


# ---- continuous -----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_matches_jax(key, shape, dtype):
    assert_bits_equal(random.uniform(key, shape, dtype), jr.uniform(key, shape, dtype))
    assert_bits_equal(random.uniform(key, shape, dtype, -2.5, 3.0), jr.uniform(key, shape, dtype, -2.5, 3.0))


@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_broadcasts_bounds_like_jax(key, dtype):
    low, high = np.array([0.0, 1.0, -3.0]), np.array([[1.0], [10.0]])
    assert_bits_equal(random.uniform(key, (2, 3), dtype, low, high), jr.uniform(key, (2, 3), dtype, low, high))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["normal", "exponential", "gumbel"])
def test_standard_samplers_match_jax(key, shape, dtype, name):
    assert_bits_equal(getattr(random, name)(key, shape, dtype), getattr(jr, name)(key, shape, dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["uniform", "normal", "exponential"])
def test_large_samples_match_jax(dtype, name):
    """10**5 draws reach far into the tails (erf_inv's outer branches, log1p near -1)."""
    key = random.PRNGKey(2024)
    assert_bits_equal(getattr(random, name)(key, (100_003,), dtype), getattr(jr, name)(key, (100_003,), dtype))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_truncated_normal_matches_jax(key, shape, dtype):
    assert_bits_equal(random.truncated_normal(key, -1.5, 0.7, shape, dtype),
                      jr.truncated_normal(key, -1.5, 0.7, shape, dtype))


def test_truncated_normal_takes_its_shape_from_the_bounds(key):
    lower, upper = np.array([-1.0, 0.0, 2.0]), np.array([[1.0], [3.0]])
    assert_bits_equal(random.truncated_normal(key, lower, upper), jr.truncated_normal(key, lower, upper))


@pytest.mark.parametrize("shape", [(), (3, 5)])  # each shape costs JAX seconds of compiling its while loops
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("a", [0.3, 2.5])
def test_gamma_matches_jax(key, shape, dtype, a):
    """Within ``GAMMA_ULPS`` of JAX's samples, but for at most one accept/reject flip (``float_compare``): the
    sampler's ``c = rsqrt(d) / 3`` is the CPU's; on the CPU that JAX runs on, the bits are equal."""
    ours, theirs = random.gamma(key, a, shape, dtype), jr.gamma(key, a, shape, dtype)
    assert ours.shape == theirs.shape == shape and ours.dtype == theirs.dtype == dtype
    assert_gamma_samples_close(ours, theirs)


def test_gamma_with_an_array_of_shapes_matches_jax(key):
    """As ``test_gamma_matches_jax``, one shape parameter per element (0.1 is where rounding is amplified most)."""
    a = np.array([0.1, 1.0, 4.0, 50.0])
    assert_gamma_samples_close(random.gamma(key, a), jr.gamma(key, a))


def test_gamma_has_the_right_moments():
    samples = random.gamma(random.PRNGKey(5), 3.0, (200_000,))
    assert abs(samples.mean() - 3.0) < 0.03 and abs(samples.var() - 3.0) < 0.08


def test_default_dtype_is_float64(key):
    for name in ["uniform", "normal", "exponential", "gumbel"]:
        assert getattr(random, name)(key, (2,)).dtype == np.float64
    assert random.gamma(key, 1.0).dtype == np.float64


# ---- discrete -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [None, np.uint8, np.uint16, np.uint32, np.uint64])
def test_bits_match_jax(key, shape, dtype):
    assert_bits_equal(random.bits(key, shape, dtype), jr.bits(key, shape, dtype))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [None, np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64])
def test_randint_matches_jax(key, shape, dtype):
    assert_bits_equal(random.randint(key, shape, -3, 100, dtype), jr.randint(key, shape, -3, 100, dtype))


@pytest.mark.parametrize("low, high, dtype", [(-2 ** 62, 2 ** 62, None), (0, 256, np.uint8), (5, 5, None),
                                              (10, 3, np.int32), (-2 ** 31, 2 ** 31, np.int32),
                                              (np.array([0, 10, 100]), np.array([[5], [1000]]), None)])
def test_randint_edge_ranges_match_jax(key, low, high, dtype):
    assert_bits_equal(random.randint(key, (2, 3), low, high, dtype), jr.randint(key, (2, 3), low, high, dtype))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_bernoulli_matches_jax(key, shape, dtype):
    p = dtype(0.3)
    assert_bits_equal(random.bernoulli(key, p, shape), jr.bernoulli(key, p, shape))


def test_bernoulli_takes_its_shape_from_p(key):
    p = np.array([0.0, 0.25, 0.5, 1.0])
    assert_bits_equal(random.bernoulli(key, p), jr.bernoulli(key, p))
    assert_bits_equal(random.bernoulli(key), jr.bernoulli(key))


@pytest.mark.parametrize("n", [1, 10, 2000])
def test_permutation_of_a_range_matches_jax(key, n):
    """2000 elements take two sorting rounds in JAX's shuffle."""
    assert_bits_equal(random.permutation(key, n), jr.permutation(key, n))


@pytest.mark.parametrize("axis, independent", [(0, False), (1, False), (1, True), (-1, True)])
def test_permutation_of_an_array_matches_jax(key, axis, independent):
    x = np.arange(15.0).reshape(3, 5)
    assert_bits_equal(random.permutation(key, x, axis, independent), jr.permutation(key, x, axis, independent))


@pytest.mark.parametrize("replace", [True, False])
@pytest.mark.parametrize("p", [None, np.array([0.1, 0.2, 0.3, 0.15, 0.25]), np.array([1, 0, 2, 3, 4], np.float32)])
def test_choice_from_a_range_matches_jax(key, replace, p):
    assert_bits_equal(random.choice(key, 5, (3,), replace, p), jr.choice(key, 5, (3,), replace, p))


def test_choice_from_an_array_matches_jax(key):
    x = np.arange(24.0).reshape(2, 3, 4)
    assert_bits_equal(random.choice(key, x, (2, 2), axis=2), jr.choice(key, x, (2, 2), axis=2))
    assert_bits_equal(random.choice(key, x, (2,), False, axis=1), jr.choice(key, x, (2,), False, axis=1))
    assert_bits_equal(random.choice(key, 4, (0,)), jr.choice(key, 4, (0,)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis, shape", [(-1, None), (0, None), (0, (5, 6)), (1, (2, 4))])
def test_categorical_matches_jax(key, dtype, axis, shape):
    logits = np.random.default_rng(0).normal(size=(4, 6)).astype(dtype)
    assert_bits_equal(random.categorical(key, logits, axis, shape), jr.categorical(key, logits, axis, shape))


# ---- the pieces: XLA's elementwise functions, kernels inside Numba --------------------------


def _elementwise_loop(fn):
    @numba.njit
    def loop(values):
        out = np.empty_like(values)
        for i in range(values.size):
            out[i] = fn(values[i])
        return out

    return loop


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name, jax_fn, low, high", [
    ("log", jax.numpy.log, 1e-30, 1e3), ("log1p", jax.numpy.log1p, -1.0, 3.0), ("erf", jax.lax.erf, -5.0, 5.0),
    ("erf_inv", jax.lax.erf_inv, -1.0, 1.0), ("rsqrt", jax.lax.rsqrt, 1e-3, 1e3)])
def test_elementwise_functions_match_xla(dtype, name, jax_fn, low, high):
    """Bit for bit, but ``rsqrt``: XLA starts it from the CPU's estimate instruction, whose bits differ between
    processors, so it is compared within ``RSQRT_ULPS`` (4 ulp in float32, 2 in float64; ``float_compare``)."""
    values = np.random.default_rng(1).uniform(low, high, 100_000)
    values = np.concatenate([values, [low, high, 0.0, -0.0, 0.5, 1e-8, -1e-8, np.inf]]).astype(dtype)
    ours, theirs = _elementwise_loop(getattr(elementwise, name))(values), np.asarray(jax.jit(jax_fn)(values))
    # XLA's NaNs carry other payloads than NumPy's; any NaN counts as the same NaN.
    ours, theirs = np.where(np.isnan(ours), np.nan, ours), np.where(np.isnan(theirs), np.nan, theirs)
    if name == "rsqrt":
        assert_within_ulps(ours, theirs, RSQRT_ULPS[np.dtype(dtype)])
        np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))  # rsqrt(-0.0) is -inf
    else:
        assert_bits_equal(ours, theirs)


@numba.njit
def _draw_inside_numba(key):
    keys = split_kernel(key, (2,))
    return normal_kernel(keys[0], (3, 2), np.float32), uniform_kernel(keys[1], (4,), np.float64, np.zeros(()),
                                                                       np.ones(()))


def test_kernels_run_inside_numba_compiled_code():
    key = random.PRNGKey(9)
    normals, uniforms = _draw_inside_numba(key)
    first, second = random.split(key)
    assert_bits_equal(normals, random.normal(first, (3, 2), np.float32))
    assert_bits_equal(uniforms, random.uniform(second, (4,)))


# ---- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: random.normal(np.array([1, 2, 3], np.uint32)), "expects a key"),
    (lambda: random.normal(np.array([1, 2]), (2,)), "expects a key"),
    (lambda: random.uniform(random.PRNGKey(0), (2,), np.int32), "samples float32 or float64"),
    (lambda: random.uniform(random.PRNGKey(0), (2,), np.float16), "samples float32 or float64"),
    (lambda: random.uniform(random.PRNGKey(0), (2,), minval=np.zeros(3)), "do not broadcast"),
    (lambda: random.normal(random.PRNGKey(0), (-1,)), "non-negative integers"),
    (lambda: random.PRNGKey(2 ** 64), "does not fit in 64 bits"),
    (lambda: random.PRNGKey(1.5), "one integer seed"),
    (lambda: random.PRNGKey(np.arange(2)), "one integer seed"),
    (lambda: random.fold_in(random.PRNGKey(0), -1), "not a 32-bit unsigned integer"),
    (lambda: random.gamma(random.PRNGKey(0), 0.0), "must be positive"),
    (lambda: random.bits(random.PRNGKey(0), (2,), np.int32), "unsigned integers"),
    (lambda: random.randint(random.PRNGKey(0), (2,), 0, 5, np.float64), "draws integers"),
    (lambda: random.bernoulli(random.PRNGKey(0), 1), "p must be a float"),
    (lambda: random.choice(random.PRNGKey(0), 3, (4,), replace=False), "without replacement"),
    (lambda: random.choice(random.PRNGKey(0), 3, (2,), p=np.ones(4)), "p has shape"),
    (lambda: random.choice(random.PRNGKey(0), 3, (2,), p=np.ones(3, np.float16) / 3), "samples float32 or float64"),
    (lambda: random.permutation(random.PRNGKey(0), 2.5), "must be an integer"),
])
def test_bad_arguments_raise_numbax_errors_at_the_callers_line(call, message):
    with pytest.raises(random.NumbaxRandomArgumentError, match=message) as info:
        call()
    assert f"{__file__}:" in str(info.value)
