"""NumPy calls, array attributes, dtypes, indexing and module-level constants."""
import math

import numpy as np
from numpy import exp, tanh
from numpy.linalg import norm

from . import Case, integers, normal, uniform

EPS = 1e-8
NUM_FEATURES = 3
SCALES = (0.5, 2.0)
MIX = np.array([[1.0, 0.5, -0.25], [0.0, 2.0, 1.0], [-1.0, 0.0, 0.75]])
BIAS = np.array([0.1, -0.2, 0.3])


# ---- elementwise math ----------------------------------------------------------------------

def tanh_layer(x, w, b):
    return np.tanh(x @ w + b)


def softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)


def leaky_relu(x):
    return np.where(x > 0, x, 0.01 * x)


def clipped_sqrt(x):
    return np.sqrt(np.clip(x, 0.0, 4.0))


def imported_names(x):
    # `from numpy import tanh, exp` and `from numpy.linalg import norm`
    return tanh(x) * exp(-x * x) / norm(x)


def sin_pi(x):
    return np.sin(np.pi * x) + np.cos(2.0 * np.pi * x)


def math_sqrt_scalar(x, s):
    return x * math.sqrt(s) + math.sqrt(2.0)


def power_and_abs(x):
    return np.abs(x) ** 1.5 - x ** 2


# ---- reductions ----------------------------------------------------------------------------

def row_sums(x):
    return np.sum(x, axis=1)


def col_means(x):
    return np.mean(x, axis=0)


def standardize(x):
    mu = x.mean()
    sd = np.sqrt(np.mean((x - mu) ** 2))
    return (x - mu) / (sd + EPS)


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def logsumexp_rows(x):
    m = np.max(x, axis=1)
    return m + np.log(np.sum(np.exp(x - m[:, None]), axis=1))


def running_total(x):
    return np.cumsum(x)


def norms(x):
    return np.linalg.norm(x), np.linalg.norm(x[0])


def dot_vectors(x, y):
    return np.dot(x, y)


def matvec_gram(a, v):
    return a.T @ (a @ v)


def outer_product(x, y):
    return np.outer(x, y)


def methods_chain(x):
    return x.sum() + x.max() - x.min() + x.mean() * x.std()


# ---- array creation --------------------------------------------------------------------------

def zeros_from_shape(x):
    out = np.zeros(x.shape)
    out += 2.0 * x
    return out


def ones_rows(x):
    n = x.shape[0]
    return np.ones((n, NUM_FEATURES)) * x[:, :1]


def empty_then_fill(x):
    out = np.empty(x.shape)
    for i in range(x.shape[0]):
        out[i] = x[i] ** 2
    return out


def arange_weights(x):
    return np.arange(x.shape[0]) * x


def zeros_like_accumulate(x):
    acc = np.zeros_like(x)
    acc += x
    acc *= 3.0
    acc -= 1.0
    return acc


# ---- shapes, attributes, indexing ----------------------------------------------------------

def gram_transpose(x):
    return x.T @ x


def shape_unpack(x):
    n, m = x.shape
    return x.sum() / (n * m)


def ndim_dispatch(x):
    if x.ndim == 1:
        return x * 2.0
    else:
        return x.sum(axis=0)


def len_mean(x):
    return x.sum() / len(x)


def slice_zero(x):
    x[1:3] = 0.0
    return x * 2.0


def column_update(x, y):
    out = np.zeros(x.shape)
    for j in range(x.shape[1]):
        out[:, j] += x[:, j] * y[j]
    return out


def reversed_and_strided(x):
    return x[::-1] + x[::2].sum() - x[1:-1].mean()


def reshape_flatten(x):
    y = x.reshape((x.shape[0] * x.shape[1],))
    return y.copy() * 2.0


def stack_concat(x, y):
    return np.concatenate((x, y)) * 2.0


# ---- dtypes -----------------------------------------------------------------------------------

def float32_tanh(x):
    return np.tanh(x) * 2


def float32_const(x):
    return x * np.float32(0.5) + np.float32(1.0)


def float32_python_scalar(x):
    return x * 0.5 + 1.0


def int_arithmetic(x):
    return x // 2 + x % 3 - x * x


def int_sum(x):
    return np.sum(x * x)


def bool_mask_count(x, mask):
    return np.sum(mask), np.where(mask, x, -x)


def bool_ops(x):
    pos = x > 0
    small = np.abs(x) < 1.0
    return pos & small, pos | small


def zero_d_array(x):
    return x * 2.0 + 1.0


def zero_d_reduce(x, y):
    return np.sum(x * y) + y


# ---- module-level constants --------------------------------------------------------------------

def const_array_affine(x):
    return x @ MIX + BIAS


def const_tuple_scales(x):
    lo, hi = SCALES
    return np.clip(x, -lo, hi) * NUM_FEATURES


def builtin_min_max_abs(x, y):
    a = x.sum()
    b = y.sum()
    return max(a, b) - min(a, b) + abs(a - b) + min(x.shape[0], 3)


def conditional_expression(x):
    scale = 2.0 if x.sum() > 0 else 0.5
    return x * scale


CASES = [
    Case(tanh_layer, lambda: (normal(0, 4, 3), normal(1, 3, 5), normal(2, 5))),
    Case(softplus, lambda: (normal(3, 7),)),
    Case(leaky_relu, lambda: (normal(4, 3, 4),)),
    Case(clipped_sqrt, lambda: (normal(5, 10) * 3.0,)),
    Case(imported_names, lambda: (normal(6, 6),)),
    Case(sin_pi, lambda: (normal(7, 5),)),
    Case(math_sqrt_scalar, lambda: (normal(8, 4), 3.0)),
    Case(power_and_abs, lambda: (normal(9, 6),)),
    Case(row_sums, lambda: (normal(10, 4, 5),)),
    Case(col_means, lambda: (normal(11, 4, 5),)),
    Case(standardize, lambda: (normal(12, 20),)),
    Case(softmax, lambda: (normal(13, 6),)),
    Case(logsumexp_rows, lambda: (normal(14, 3, 4),)),
    Case(running_total, lambda: (uniform(15, 8),)),
    Case(norms, lambda: (normal(16, 3, 4),)),
    Case(dot_vectors, lambda: (normal(17, 5), normal(18, 5))),
    Case(matvec_gram, lambda: (normal(19, 4, 3), normal(20, 3))),
    Case(outer_product, lambda: (normal(21, 3), normal(22, 4))),
    Case(methods_chain, lambda: (uniform(23, 3, 4),)),
    Case(zeros_from_shape, lambda: (normal(24, 2, 3),)),
    Case(ones_rows, lambda: (normal(25, 4, 2),)),
    Case(empty_then_fill, lambda: (normal(26, 5),)),
    Case(arange_weights, lambda: (normal(27, 5),)),
    Case(zeros_like_accumulate, lambda: (normal(28, 3, 3),)),
    Case(gram_transpose, lambda: (normal(29, 5, 3),)),
    Case(shape_unpack, lambda: (uniform(30, 3, 4),)),
    Case(ndim_dispatch, lambda: (normal(31, 5),), id="ndim_dispatch_1d"),
    Case(ndim_dispatch, lambda: (normal(32, 4, 3),), id="ndim_dispatch_2d"),
    Case(len_mean, lambda: (uniform(33, 6),)),
    Case(slice_zero, lambda: (normal(34, 6),)),
    Case(column_update, lambda: (normal(35, 4, 3), normal(36, 3))),
    Case(reversed_and_strided, lambda: (normal(37, 7),)),
    Case(reshape_flatten, lambda: (normal(38, 3, 4),)),
    Case(stack_concat, lambda: (normal(39, 3), normal(40, 2))),
    Case(float32_tanh, lambda: (normal(41, 3, 4, dtype=np.float32),)),
    Case(float32_const, lambda: (normal(42, 5, dtype=np.float32),)),
    Case(float32_python_scalar, lambda: (normal(43, 5, dtype=np.float32),)),
    Case(int_arithmetic, lambda: (integers(44, 7),)),
    Case(int_sum, lambda: (integers(45, 3, 3),)),
    Case(bool_mask_count, lambda: (normal(46, 6), normal(47, 6) > 0)),
    Case(bool_ops, lambda: (normal(48, 8),)),
    Case(zero_d_array, lambda: (np.array(1.5),)),
    Case(zero_d_reduce, lambda: (normal(49, 4), np.array(0.25))),
    Case(const_array_affine, lambda: (normal(50, 4, 3),)),
    Case(const_tuple_scales, lambda: (normal(51, 6),)),
    Case(builtin_min_max_abs, lambda: (normal(52, 4), normal(53, 5))),
    Case(conditional_expression, lambda: (uniform(54, 4),), id="conditional_expression_pos"),
    Case(conditional_expression, lambda: (-uniform(55, 4),), id="conditional_expression_neg"),
]
