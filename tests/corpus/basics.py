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



# ---- reductions over axes, with keepdims (numbax.runtime helpers where Numba has none) ---------

def standardize_columns(x):
    mu = np.mean(x, axis=0, keepdims=True)
    sd = x.std(axis=0, ddof=1, keepdims=True)
    return (x - mu) / sd, np.var(x, axis=1)


def softmax_rows(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def extremes_3d(x):
    return np.min(x, axis=(0, 2)), np.max(x, axis=(1, 2), keepdims=True), np.ptp(x, axis=1)


def argmax_argmin_axes(x):
    return np.argmax(x, axis=1), x.argmin(axis=0, keepdims=True), np.argmax(x, axis=-1, keepdims=True)


def cumulative_axes(x):
    return np.cumsum(x, axis=1), x.cumprod(axis=0), np.cumsum(x, axis=-1)


def norms_over_axes(x):
    return (np.linalg.norm(x, axis=1, keepdims=True), np.linalg.norm(x, ord=1, axis=0),
            np.linalg.norm(x, ord=np.inf, axis=1), np.linalg.norm(x, 'fro'))


def batched_matrix_norms(x):
    return np.linalg.norm(x, axis=(1, 2)), np.linalg.norm(x, ord=2, axis=(1, 2), keepdims=True)


def int_axis_reductions(x):
    return np.mean(x, axis=0), np.sum(x, axis=1, keepdims=True), x.max(axis=1), np.any(x > 2, axis=0)


def float32_axis_reductions(x):
    return x.mean(axis=1), np.std(x, axis=0, keepdims=True), np.max(x, axis=0), np.cumsum(x, axis=0)


def static_axis(x, axis):
    return np.mean(x, axis=axis, keepdims=True) - x.min(axis=axis, keepdims=True)


def normalize_in_loop(x, n):
    for _ in range(n):
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        x = x - x.mean(axis=0, keepdims=True)
    return x


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


def float32_compared_with_python_floats(x):
    """NumPy 2 compares in float32: float32(0.1) > 0.1 is False."""
    return np.sum(x > 0.1) + np.sum(x <= 0.2), x[0] >= 0.1


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


# ---- more NumPy -------------------------------------------------------------------------------

def keepdims_normalize(x):
    return x / np.sum(x, axis=1, keepdims=True)


def method_axis(x):
    return x.sum(axis=0) - x.max(axis=1).sum() + x.min(axis=-1).mean()


def row_norms(x):
    return np.linalg.norm(x, axis=1)


def creation_from_runtime_n(x, n):
    return np.zeros(n) + np.arange(n) * x[0] + np.linspace(0.0, 1.0, n)


def identity_shift(a):
    return a + np.eye(a.shape[0]) * 2.0


def linalg_solve(a, b):
    return np.linalg.solve(a, b), np.linalg.det(a)


def astype_and_float32_of_scalar(x, s):
    return x.astype(np.float32) * np.float32(s)


def argmax_sort(x):
    return np.argmax(x), np.sort(x), x.argmin()


def array_methods(x):
    return x.clip(-0.5, 0.5).cumsum(), x.prod(), (x > 0).any(), (x > -5).all()


def math_module(s):
    return math.exp(-s) + math.log(1.0 + s) * math.pi + math.cos(s)


def int_float_conversions(x, n):
    k = int(x.sum() * 10.0)
    return float(n) / 4 + k


def int_true_division(a, b):
    return a / b, a // b, a % b, -a // b, 2 ** b


def swap_elements(x):
    x[0], x[-1] = x[-1], x[0]
    return x


def boolean_mask_assign(x):
    x[x < 0] = 0.0
    return x


def fancy_index(x, idx):
    return x[idx] * 2.0


def ellipsis_and_newaxis(x):
    return x[..., 0] + x[:, None, 1].sum()


def negative_index_and_size(x):
    return x[-1] * x.size + x.shape[-1] + len(x.shape)


def vector_dot_matmul(x, y):
    return x @ y


def chained_comparison(s):
    if 0.0 < s < 1.0:
        return s * 2.0
    return s


def abs_of_array(x):
    return abs(x) + abs(-2.5)


def annotated(x: np.ndarray, scale: float = 2.0) -> np.ndarray:
    """A docstring, annotations and an annotated assignment."""
    y: np.ndarray = x * scale
    pass
    return y


def complex_magnitude(z):
    return np.abs(z) + np.real(z * np.conj(z))


def static_assert(x):
    assert x.ndim == 2
    return x.T


# ---- aliasing, copies, constructors --------------------------------------------------------

ACT = np.tanh
CONFIG = {"scale": 2.0, "shift": -0.5}
PICK = np.array([0, 2])
HALF32 = np.float32(0.5)


def scalar_read_then_write(x):
    tmp = x[0]
    x[0] = x[-1]
    x[-1] = tmp
    return tmp


def rebinding_after_use(x):
    a = x.sum()
    b = a * 2.0
    a = 0.0
    return a + b


def alias_aug_assign(x):
    y = x
    y += 1.0
    return x


def param_in_place(x):
    x *= 2.0
    return x.sum()


def loop_variable_after_loop(x):
    j = -1
    for j in range(x.shape[0]):
        pass
    return j


def row_and_column_assign(x):
    x[0, :] = x[1, :] * 2.0
    x[:, 0] = 0
    return x


def module_constants_misc(x):
    return ACT(x[PICK]) * CONFIG["scale"] + CONFIG["shift"]


def float32_module_constant(x):
    return x * HALF32


def int_array_times_float(x):
    return x * 0.5 + x / 4


def zero_d_to_scalar(x, y):
    return float(x) * y + y.item()


def shape_comparison(x, y):
    if x.shape == y.shape:
        return x + y
    return x * 0.0


def dtype_keywords(x):
    n, m = x.shape
    a = np.zeros((n, m), dtype=np.float32)
    b = np.ones_like(x, dtype=np.int64)
    return a + np.float32(1.0), b * 3


def array_from_scalars(x):
    return np.array([x.sum(), x.max(), x.min()])


def stack_list(x, y):
    return np.stack([x, y]), np.concatenate([x, y])


def reshape_varargs(x):
    return x.reshape(2, -1), x.reshape(-1)


def newaxis_broadcast(x, y):
    return x[:, np.newaxis] * y[np.newaxis, :]


def int_slice_fill(x):
    x[1:3] = 0
    return x


def float32_scalar_times_float(x):
    return x[0] * 0.5 + x[1] / 3


def float32_ufunc_with_float(x):
    return np.maximum(x, 0.0) * 2.5 - np.tanh(x) * 0.5


def float32_times_weak_argument(x, s, k):
    return x * s + k


def int32_plus_literal(x):
    return x + 1, x * 2 - 3


def int_bool_of_zero_d(x, y):
    return int(x) + int(y > 0.5), bool(y > 0.0)


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
    Case(float32_compared_with_python_floats, lambda: (np.array([0.1, 0.2, 0.05, 0.3], dtype=np.float32),)),
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
    Case(keepdims_normalize, lambda: (uniform(56, 3, 4),)),
    Case(method_axis, lambda: (normal(57, 3, 4),)),
    Case(row_norms, lambda: (normal(58, 3, 4),)),
    Case(creation_from_runtime_n, lambda: (normal(59, 2), 5)),
    Case(identity_shift, lambda: (normal(60, 3, 3),)),
    Case(linalg_solve, lambda: (normal(61, 3, 3) + 3.0 * np.eye(3), normal(62, 3)), rtol=1e-10),
    Case(astype_and_float32_of_scalar, lambda: (normal(63, 4), 0.5)),
    Case(argmax_sort, lambda: (normal(64, 6),)),
    Case(array_methods, lambda: (normal(65, 6),)),
    Case(math_module, lambda: (0.75,)),
    Case(int_float_conversions, lambda: (uniform(66, 3), 7)),
    Case(int_true_division, lambda: (17, 5)),
    Case(swap_elements, lambda: (normal(67, 5),)),
    Case(boolean_mask_assign, lambda: (normal(68, 7),)),
    Case(fancy_index, lambda: (normal(69, 6), np.array([0, 2, 5]))),
    Case(ellipsis_and_newaxis, lambda: (normal(70, 3, 2),)),
    Case(negative_index_and_size, lambda: (normal(71, 4),)),
    Case(vector_dot_matmul, lambda: (normal(72, 4), normal(73, 4))),
    Case(chained_comparison, lambda: (0.25,)),
    Case(abs_of_array, lambda: (normal(74, 4),)),
    Case(annotated, lambda: (normal(75, 3),)),
    Case(complex_magnitude, lambda: (normal(76, 3) + 1j * normal(77, 3),)),
    Case(static_assert, lambda: (normal(78, 2, 3),)),
    Case(scalar_read_then_write, lambda: (normal(79, 4),)),
    Case(rebinding_after_use, lambda: (normal(80, 4),)),
    Case(alias_aug_assign, lambda: (normal(81, 4),)),
    Case(param_in_place, lambda: (normal(82, 4),)),
    Case(loop_variable_after_loop, lambda: (normal(83, 4),)),
    Case(row_and_column_assign, lambda: (normal(84, 3, 3),)),
    Case(module_constants_misc, lambda: (normal(85, 4),)),
    Case(float32_module_constant, lambda: (normal(86, 4, dtype=np.float32),)),
    Case(int_array_times_float, lambda: (integers(87, 5),)),
    Case(zero_d_to_scalar, lambda: (np.array(2.5), np.array(0.5))),
    Case(shape_comparison, lambda: (normal(88, 3), normal(89, 3))),
    Case(dtype_keywords, lambda: (normal(90, 2, 3),)),
    Case(array_from_scalars, lambda: (normal(91, 5),)),
    Case(stack_list, lambda: (normal(92, 3), normal(93, 3))),
    Case(reshape_varargs, lambda: (normal(94, 2, 3),)),
    Case(newaxis_broadcast, lambda: (normal(95, 3), normal(96, 2))),
    Case(int_slice_fill, lambda: (normal(97, 5),)),
    Case(gram_transpose, lambda: (normal(98, 3, 5).T,), id="gram_transpose_noncontiguous"),
    Case(row_sums, lambda: (np.asfortranarray(normal(99, 4, 5)),), id="row_sums_fortran"),
    Case(running_total, lambda: (normal(100, 10)[::3],), id="running_total_strided_view"),
    Case(standardize_columns, lambda: (normal(101, 6, 3),)),
    Case(softmax_rows, lambda: (normal(102, 3, 5),)),
    Case(extremes_3d, lambda: (normal(103, 2, 3, 4),)),
    Case(argmax_argmin_axes, lambda: (normal(104, 4, 5),)),
    Case(cumulative_axes, lambda: (uniform(105, 3, 4),)),
    Case(norms_over_axes, lambda: (normal(106, 3, 4),)),
    Case(batched_matrix_norms, lambda: (normal(107, 2, 3, 4),), rtol=1e-10),
    Case(int_axis_reductions, lambda: (integers(108, 4, 3),)),
    Case(float32_axis_reductions, lambda: (normal(109, 5, 3, dtype=np.float32),)),
    Case(static_axis, lambda: (normal(110, 2, 3, 4), 1), static_argnums=(1,)),
    Case(static_axis, lambda: (normal(111, 2, 3, 4), (0, -1)), static_argnums=(1,), id="static_axis_tuple"),
    Case(normalize_in_loop, lambda: (uniform(112, 4, 3), 3)),
    Case(float32_scalar_times_float, lambda: (normal(400, 3, dtype=np.float32),)),
    Case(float32_ufunc_with_float, lambda: (normal(401, 5, dtype=np.float32),)),
    Case(float32_times_weak_argument, lambda: (normal(402, 4, dtype=np.float32), 0.25, 3)),
    Case(int32_plus_literal, lambda: (integers(403, 5).astype(np.int32),)),
    Case(int_bool_of_zero_d, lambda: (np.array(7.9), np.array(0.75))),
]
