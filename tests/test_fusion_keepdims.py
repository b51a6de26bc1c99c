"""Fusion of reductions along an axis (``keepdims`` or not): the softmax cross-entropy of issue 14 and
max/min with ties along rows and columns, against JAX in float64, in both modes; the generated code fuses
(no ``rt.chooser_weights`` array, row sums in scalars), and a call whose shapes break the fused code's
assumption (a one-hot of one column, broadcast) runs the general code and still agrees."""
import os
import sys

import jax
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402  (turns on jax_enable_x64)


def softmax_xent(logits, onehot):
    z = logits - np.max(logits, axis=1, keepdims=True)
    log_norm = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(onehot * (z - log_norm), axis=1))


def extremes(x, c):
    """Ties along both axes: a column's maximum (axis dropped) and a row's minimum (axis kept)."""
    return np.sum(np.max(x, axis=0) * c) + np.sum(np.min(x, axis=1, keepdims=True) ** 2 * x)


def moments(x, w):
    """Three dims: a mean kept along axis 0, a sum kept along axis 1, a sum dropping the last axis, a maximum
    kept along axis 2 (tied), a sum dropping axis 0."""
    c = x - np.mean(x, axis=0, keepdims=True)
    s = np.sum(c * c * w, axis=1, keepdims=True)
    r = np.sum(np.exp(c) / s, axis=-1)
    m = np.max(x, axis=2, keepdims=True)
    return np.sum(r * r) + np.sum(np.tanh(x - m) * w) + np.sum(np.sum(x * w, axis=0) ** 2)


RNG = np.random.default_rng(3)
LOGITS = np.round(3.0 * RNG.normal(size=(5, 4)), 1)
LOGITS[1, 1] = LOGITS[1, 3] = LOGITS[1].max() + 0.5  # a row whose maximum is tied
ONEHOT = np.eye(4)[[0, 3, 1, 2, 3]]
X = np.array([[1.0, 4.0, 4.0], [4.0, -2.0, 0.5], [-2.0, 3.0, -2.0], [0.0, 4.0, 1.0]])  # ties in rows, columns
C = np.array([0.5, -1.5, 2.0])
CUBE = np.round(RNG.normal(size=(3, 4, 5)), 1)
CUBE[1, 2, 0] = CUBE[1, 2, 3] = 3.0
W = RNG.normal(size=(4, 5))

GRAD_SOFTMAX = numbax.grad(softmax_xent)
GRAD_EXTREMES = numbax.grad(extremes)


def _jvp_each(fn, args, argnum):
    """The directional derivatives along each unit vector of argument ``argnum``, by numbax.jvp."""
    out = np.empty(args[argnum].shape)
    for index in np.ndindex(*args[argnum].shape):
        tangents = [np.zeros_like(a) for a in args]
        tangents[argnum][index] = 1.0
        out[index] = numbax.jvp(fn, tuple(args), tuple(tangents))[1]
    return out


@pytest.mark.parametrize("fn, grad, args, forward", [(softmax_xent, GRAD_SOFTMAX, (LOGITS, ONEHOT), True),
                                                     (extremes, GRAD_EXTREMES, (X, C), True),
                                                     (moments, numbax.grad(moments), (CUBE, W), False)],
                         ids=["softmax_xent", "extremes", "moments"])
def test_derivatives_are_jaxs(fn, grad, args, forward):
    """Reverse mode, and forward mode where ``forward`` (``moments``' fused loops are reverse mode's)."""
    expected = np.asarray(jax.grad(to_jax(fn))(*args))
    atol = 1e-14 * np.abs(expected).max()
    np.testing.assert_allclose(grad(*args), expected, rtol=1e-12, atol=atol)
    if forward:
        np.testing.assert_allclose(_jvp_each(fn, args, 0), expected, rtol=1e-12, atol=atol)


def test_generated_code_is_fused():
    source = GRAD_SOFTMAX.lower_source(LOGITS, ONEHOT)
    assert "rt.chooser_weights" not in source and "rt.tie_shares(logits, _t1, 1, True)" in source
    assert "t3_row = rt.add_unordered(t3_row, " in source and "_t3[j0, 0] += t3_row" in source


def test_shapes_the_fused_code_does_not_assume():
    onehot = ONEHOT[:, :1]  # broadcast along the rows: the guard at the entry fails, the general code runs
    expected = np.asarray(jax.grad(to_jax(softmax_xent))(LOGITS, onehot))
    np.testing.assert_allclose(GRAD_SOFTMAX(LOGITS, onehot), expected, rtol=1e-12, atol=1e-14)


def test_a_nan_maximum_gives_nan_weights():
    """No element equals a NaN maximum: the tie's share is NaN for its whole column, as unfused and JAX."""
    x = X.copy()
    x[2, 1] = np.nan
    expected = np.asarray(jax.grad(to_jax(extremes))(x, C))
    np.testing.assert_allclose(GRAD_EXTREMES(x, C), expected, rtol=1e-12, atol=1e-14, equal_nan=True)
    assert np.isnan(expected[:, 1]).all()


def test_second_derivatives_are_jaxs():
    logits, onehot = LOGITS[:3], ONEHOT[:3]
    expected = np.asarray(jax.hessian(to_jax(softmax_xent))(logits, onehot))
    np.testing.assert_allclose(numbax.hessian(softmax_xent)(logits, onehot), expected, rtol=1e-12, atol=1e-14)
