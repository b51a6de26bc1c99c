"""The programs of ``benchmarks/run_batched.py``: plain NumPy that numbax reads, float64.

1. per-example gradients of logistic regression, ``vmap(grad(loss), in_axes=(None, 0, 0))`` over a batch of 256
   rows of 100 features;
2. softmax cross-entropy of 256 x 100 logits written with whole-array reductions along an axis with
   ``keepdims`` (``np.max(z, axis=1, keepdims=True)``), and its gradient.
"""
import numpy as np


def logistic_loss(w, x, y):
    """The log-loss of one example ``x`` with label ``y`` in {-1, 1} under weights ``w``."""
    return np.log1p(np.exp(-y * np.dot(x, w)))


def logistic_args(n=256, d=100, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=d) * 0.1, rng.normal(size=(n, d)), np.sign(rng.normal(size=n))


def softmax_xent(logits, onehot):
    """Mean cross-entropy of rows of logits against one-hot labels, the row maximum subtracted."""
    z = logits - np.max(logits, axis=1, keepdims=True)
    log_norm = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(onehot * (z - log_norm), axis=1))


def softmax_args(n=256, k=100, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, size=n)
    return 3.0 * rng.normal(size=(n, k)), np.eye(k)[labels]
