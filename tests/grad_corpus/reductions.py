"""Reductions over all axes and over one, with keepdims, as functions and as methods."""
import numpy as np

from . import Case, normal, uniform

W4 = np.array([1.0, -0.5, 2.0, 0.3])
W34 = np.linspace(-1.0, 1.5, 12).reshape(3, 4)
LABELS = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


def sum_over_axis(x):
    return np.sum(np.sum(x, axis=0) ** 2) + np.sum(x, axis=1) @ np.array([1.0, 2.0, 3.0])


def sum_keepdims_normalize(x):
    p = x / x.sum(axis=1, keepdims=True)
    return np.sum(p * W34)


def means(x):
    return np.sum(np.mean(x, axis=1) ** 2) + x.mean() + np.mean(x, axis=0) @ W4


def variance_and_std(x):
    return np.var(x) + np.std(x, axis=0) @ W4 + x.var(axis=1).sum()


def sample_std(x):
    return np.std(x, ddof=1) + np.var(x, axis=0, ddof=1) @ W4


def products(x):
    return np.prod(x) + np.prod(x, axis=0) @ W4 + x.prod(axis=1).sum()


def max_minus_min(x):
    return np.max(x) - np.min(x) + x.max(axis=1).sum() + np.min(x, axis=0) @ W4


def amax_amin_keepdims(x):
    return np.sum(np.amax(x, axis=0, keepdims=True) * W34) + np.sum(np.amin(x, axis=1, keepdims=True) * x)


def cumulative_sum(x):
    return np.sum(np.cumsum(x) ** 2) + np.sum(np.cumsum(x.reshape(3, 4), axis=1) * W34)


def cumulative_product(x):
    return np.sum(np.cumprod(x, axis=1) * W34) + np.cumprod(x.ravel())[-1]


def logsumexp_rows(x):
    m = x.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.sum(np.exp(x - m), axis=1))
    return np.sum(lse * np.array([1.0, -2.0, 0.5]))


def softmax_cross_entropy(logits):
    z = logits - logits.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -np.sum(LABELS * log_p) / logits.shape[0]


def mean_of_row_norms(x):
    return np.sqrt((x ** 2).sum(axis=-1)).mean()


def layer_norm(x):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + 1e-5)
    return np.sum(y * W34)


def weighted_average(x, w):
    return np.dot(w, x) / np.sum(w)


def negative_axis_reductions(x):
    return np.sum(np.sum(x, axis=-1) * np.max(x, axis=-2)[:3]) + np.mean(x, axis=(0, 1))


def reduction_of_broadcast(x, y):
    return np.sum((x[:, None] - y[None, :]) ** 2, axis=0) @ W4


CASES = [
    Case(sum_over_axis, lambda: (normal(1200, 3, 4),)),
    Case(sum_keepdims_normalize, lambda: (uniform(1201, 3, 4),)),
    Case(means, lambda: (normal(1202, 3, 4),)),
    Case(variance_and_std, lambda: (normal(1203, 3, 4),)),
    Case(sample_std, lambda: (normal(1204, 3, 4),)),
    Case(products, lambda: (uniform(1205, 3, 4),)),
    Case(max_minus_min, lambda: (normal(1206, 3, 4),)),
    Case(amax_amin_keepdims, lambda: (normal(1207, 3, 4),)),
    Case(cumulative_sum, lambda: (normal(1208, 12),)),
    Case(cumulative_product, lambda: (uniform(1209, 3, 4),)),
    Case(logsumexp_rows, lambda: (normal(1210, 3, 4),)),
    Case(softmax_cross_entropy, lambda: (normal(1211, 4, 3),)),
    Case(mean_of_row_norms, lambda: (normal(1212, 3, 4),)),
    Case(layer_norm, lambda: (normal(1213, 3, 4),)),
    Case(weighted_average, lambda: (normal(1214, 5), uniform(1215, 5)), argnums=(0, 1)),
    Case(negative_axis_reductions, lambda: (normal(1216, 3, 4),)),
    Case(reduction_of_broadcast, lambda: (normal(1217, 5), normal(1218, 4)), argnums=(0, 1)),
]
