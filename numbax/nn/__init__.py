"""``numbax.nn``: JAX's ``jax.nn`` activation and normalization functions, written in the NumPy numbax compiles.

Each is plain NumPy (and ``scipy.special``): called outside compiled code it runs as NumPy; inside
compiled code numbax specializes its source like the user's, so every transformation differentiates,
batches and compiles it from the same registry rules. Derivatives at kinks are JAX's (``relu``'s is 0 at 0,
``relu6``'s 0 at 0 and 6). Results keep their operands' floating dtype, as NumPy computes them.
"""
from __future__ import annotations

import numpy as np
import scipy.special

from numbax.ast_passes.specialize.compile_time import specialized_from_source

__all__ = ["relu", "relu6", "sigmoid", "softplus", "silu", "swish", "gelu", "elu", "selu", "leaky_relu", "log_sigmoid",
           "softmax", "log_softmax", "logsumexp", "one_hot", "standardize", "initializers"]


@specialized_from_source
def relu(x):
    """``max(x, 0)``, with derivative 0 at 0 (as ``jax.nn.relu``)."""
    return np.where(x > 0, x, 0.0)


@specialized_from_source
def relu6(x):
    """``min(max(x, 0), 6)``, with derivative 0 at 0 and at 6 (as ``jax.nn.relu6``)."""
    return np.where(x > 0, np.where(x < 6.0, x, 6.0), 0.0)


@specialized_from_source
def sigmoid(x):
    """``1 / (1 + exp(-x))`` (``scipy.special.expit``)."""
    return scipy.special.expit(x)


@specialized_from_source
def softplus(x):
    """``log(1 + exp(x))``, as ``np.logaddexp(x, 0)``."""
    return np.logaddexp(x, 0.0)


@specialized_from_source
def silu(x):
    """``x * sigmoid(x)``."""
    return x * scipy.special.expit(x)


swish = silu


@specialized_from_source
def gelu(x, approximate=True):
    """The Gaussian error linear unit: the tanh approximation by default, ``x Φ(x)`` with ``approximate=False``
    (as ``jax.nn.gelu``)."""
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + scipy.special.erf(x * 0.7071067811865476))


@specialized_from_source
def elu(x, alpha=1.0):
    """``x`` for positive ``x``, ``alpha * (exp(x) - 1)`` otherwise."""
    return np.where(x > 0, x, alpha * np.expm1(np.where(x > 0, 0.0, x)))


@specialized_from_source
def selu(x):
    """The scaled ``elu`` of self-normalizing networks (``jax.nn.selu``): ``scale * elu(x, alpha)``."""
    return 1.0507009873554804934193349852946 * elu(x, 1.6732632423543772848170429916717)


@specialized_from_source
def leaky_relu(x, negative_slope=0.01):
    """``x`` for ``x >= 0``, ``negative_slope * x`` otherwise."""
    return np.where(x >= 0, x, negative_slope * x)


@specialized_from_source
def log_sigmoid(x):
    """``-softplus(-x)``."""
    return -np.logaddexp(-x, 0.0)


@specialized_from_source
def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x), axis)``, shifted by the maximum along ``axis`` (which cancels)."""
    unnormalized = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return unnormalized / np.sum(unnormalized, axis=axis, keepdims=True)


@specialized_from_source
def log_softmax(x, axis=-1):
    """``x - logsumexp(x, axis)``, shifted by the maximum along ``axis``."""
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


@specialized_from_source
def logsumexp(a, axis=None, keepdims=False):
    """``log(sum(exp(a), axis))``, shifted by the maximum along ``axis`` (which cancels), as
    ``jax.nn.logsumexp``."""
    top = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - top), axis=axis, keepdims=True)) + top
    if keepdims:
        return out
    return np.sum(out, axis=axis)  # the reduced axes have length 1


@specialized_from_source
def one_hot(x, num_classes, dtype=np.float64):
    """``x[..., None] == arange(num_classes)`` as ``dtype``: a last axis of ``num_classes`` (no derivative)."""
    return (np.expand_dims(x, -1) == np.arange(num_classes)).astype(dtype)


@specialized_from_source
def standardize(x, axis=-1, epsilon=1e-5):
    """``(x - mean) / sqrt(variance + epsilon)`` along ``axis``."""
    mean = np.mean(x, axis=axis, keepdims=True)
    variance = np.mean(x * x, axis=axis, keepdims=True) - mean * mean
    return (x - mean) / np.sqrt(variance + epsilon)


from numbax.nn import initializers  # noqa: E402,F401  (``numbax.nn.initializers``, as ``jax.nn.initializers``)
