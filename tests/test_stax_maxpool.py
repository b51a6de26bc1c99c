"""``numbax.example_libraries.stax.MaxPool`` against ``jax.example_libraries.stax.MaxPool`` (float64): outputs
(NaN included), gradients and tangents on inputs full of ties, 'VALID' and 'SAME' padding, strides; a
second derivative and central differences where nothing ties; and the refusals.

JAX's gradient gives a tied window's cotangent to its first element in row-major order (XLA's
select-and-scatter), and numbax's both modes choose that element. JAX's own tangent (select-and-gather) picks
another tied element where 'SAME' pads a dim unevenly (``(2, 2)`` windows at stride 1 here), so there the
tangent is checked against JAX without ties and, with ties, as the transpose of the gradient.
"""
import functools
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.example_libraries import stax as jax_stax

import numbax
from numbax.example_libraries import stax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

RNG = np.random.default_rng(3)
TIES = RNG.integers(0, 3, size=(2, 5, 6, 2)).astype(float)  # most windows hold a tie
DISTINCT = RNG.permutation(2 * 5 * 6 * 2).reshape(2, 5, 6, 2) / 7.0  # no two elements equal
POOLS = {
    "valid": dict(window_shape=(2, 2)),
    "valid_strided": dict(window_shape=(3, 2), strides=(2, 1)),
    "same_even_pads": dict(window_shape=(3, 3), strides=(1, 1), padding="SAME"),
    "same_uneven_pads": dict(window_shape=(2, 2), strides=(1, 1), padding="SAME"),
}
JAX_TANGENT_AT_TIES = ("valid", "valid_strided", "same_even_pads")  # where JAX's tangent picks the first too


@functools.lru_cache(maxsize=None)
def _pools(name):
    """numbax's apply (jit, grad of a weighted sum, jvp) and JAX's, compiled once per module."""
    apply, jax_apply = stax.MaxPool(**POOLS[name])[1], jax_stax.MaxPool(**POOLS[name])[1]

    def loss(x, w):
        return np.sum(apply((), x) * w)

    def tangent(x, t):
        return numbax.jvp(lambda v: apply((), v), (x,), (t,))[1]

    def jax_loss(x, w):
        return jnp.sum(jax_apply((), x) * w)

    def jax_tangent(x, t):
        return jax.jvp(lambda v: jax_apply((), v), (x,), (t,))[1]

    ours = numbax.jit(functools.partial(apply, ())), numbax.grad(loss), numbax.jit(tangent)
    theirs = jax.jit(functools.partial(jax_apply, ())), jax.jit(jax.grad(jax_loss)), jax.jit(jax_tangent)
    return apply, ours, theirs


@pytest.mark.parametrize("name", list(POOLS))
def test_outputs_and_both_modes_match_jax_at_ties(name):
    apply, (value, grad, jvp), (jax_value, jax_grad, jax_jvp) = _pools(name)
    with_nan = TIES.copy()
    with_nan[0, 1, 1, 0] = np.nan
    for x in (TIES, with_nan):
        np.testing.assert_array_equal(value(x), np.asarray(jax_value(x)))
        np.testing.assert_array_equal(apply((), x), np.asarray(jax_value(x)))  # outside compiled code
    w = RNG.normal(size=np.shape(jax_value(TIES)))
    np.testing.assert_allclose(grad(TIES, w), np.asarray(jax_grad(TIES, w)), rtol=1e-14, atol=0)
    t = RNG.normal(size=TIES.shape)
    tangent = jvp(TIES, t)
    np.testing.assert_array_equal(jvp(DISTINCT, t), np.asarray(jax_jvp(DISTINCT, t)))
    if name in JAX_TANGENT_AT_TIES:
        np.testing.assert_array_equal(tangent, np.asarray(jax_jvp(TIES, t)))
    else:
        assert not np.array_equal(tangent, np.asarray(jax_jvp(TIES, t)))  # JAX's tangent takes another tie
    np.testing.assert_allclose(np.sum(tangent * w), np.sum(t * grad(TIES, w)), rtol=1e-13)  # transposes


def test_gradient_matches_central_differences_and_second_order_matches_jax():
    _, (value, grad, _), _ = _pools("valid_strided")
    w = RNG.normal(size=value(DISTINCT).shape)
    step, numeric = 1e-3, np.zeros(DISTINCT.size)  # piecewise linear: exact while no step changes a maximum
    for k in range(DISTINCT.size):
        e = np.zeros(DISTINCT.size)
        e[k] = step
        e = e.reshape(DISTINCT.shape)
        numeric[k] = (np.sum(value(DISTINCT + e) * w) - np.sum(value(DISTINCT - e) * w)) / (2 * step)
    np.testing.assert_allclose(grad(DISTINCT, w).ravel(), numeric, rtol=1e-9, atol=1e-11)
    apply, jax_apply = stax.MaxPool((2, 2), (1, 2), "SAME")[1], jax_stax.MaxPool((2, 2), (1, 2), "SAME")[1]
    x, u = DISTINCT[:1, :3, :4, :1], RNG.normal(size=(1, 3, 4, 1))
    grad = numbax.grad(lambda v: np.sum(apply((), v) ** 2))
    jax_grad = jax.grad(lambda v: jnp.sum(jax_apply((), v) ** 2))
    second = numbax.grad(lambda v, u: np.sum(grad(v) * u))(x, u)  # 2 u at each window's maximum, per window
    np.testing.assert_allclose(second, np.asarray(jax.grad(lambda v, u: jnp.sum(jax_grad(v) * u))(x, u)),
                               rtol=1e-14, atol=0)
    assert 0 < np.count_nonzero(second) < x.size  # 2 u at the maxima, 0 elsewhere


def test_what_is_not_built_is_refused():
    for kwargs in (dict(padding=((0, 1), (0, 1))), dict(padding="same"), dict(window_shape=(2, 2, 2)),
                   dict(spec="NCHW")):
        with pytest.raises(numbax.NumbaxStaticArgumentError, match="stax.MaxPool"):
            stax.MaxPool(**{"window_shape": (2, 2), **kwargs})
    apply = stax.MaxPool((2, 2))[1]
    with pytest.raises(numbax.NumbaxDtypeError, match="stax.MaxPool of int64 inputs"):
        apply((), np.ones((1, 2, 2, 1), dtype=np.int64))
    with pytest.raises(numbax.NumbaxError, match=r"stax.MaxPool of int64 inputs[\s\S]*float64 or float32"):
        numbax.jit(lambda x: apply((), x))(np.ones((1, 2, 2, 1), dtype=np.int64))
    with pytest.raises(numbax.NumbaxError, match="stax.MaxPool of inputs that are not 4-D"):
        numbax.grad(lambda x: np.sum(apply((), x)))(np.ones((2, 2, 1)))
