"""Per-example gradients and the softmax cross-entropy's gradient of ``batched_tasks``, derived by hand for
``numba.njit``: the measure of the limit for numbax's columns."""
import numpy as np
from numba import njit


@njit(cache=True)
def per_example_grads(w, x, y):
    """Row ``i``: ``-y_i sigmoid(-y_i x_i . w) x_i``."""
    n, d = x.shape
    out = np.empty((n, d))
    for i in range(n):
        z = 0.0
        for j in range(d):
            z += x[i, j] * w[j]
        s = -y[i] / (1.0 + np.exp(y[i] * z))
        for j in range(d):
            out[i, j] = s * x[i, j]
    return out


@njit(cache=True)
def softmax_xent_grad(logits, onehot):
    """``(softmax(logits) - onehot) / n``, row by row."""
    n, k = logits.shape
    out = np.empty((n, k))
    for i in range(n):
        top = logits[i, 0]
        for j in range(1, k):
            top = max(top, logits[i, j])
        total = 0.0
        for j in range(k):
            out[i, j] = np.exp(logits[i, j] - top)
            total += out[i, j]
        for j in range(k):
            out[i, j] = (out[i, j] / total - onehot[i, j]) / n
    return out
