"""Reading arrays: integers, negative indices, slices with steps, integer arrays, masks, np.newaxis."""
import numpy as np

from . import Case, normal

IDX = np.array([0, 2, 2, 4])
ROWS = np.array([0, 2, 1])
COLS = np.array([3, 0, 3])
MASK = np.array([True, False, True, True, False, True])


def scalar_indices(x):
    return x[0] * x[2] + x[-1] ** 2 - x[-2]


def slices(x):
    return np.sum(x[1:4] * x[2:5]) + x[::2].sum() + x[1::3].sum() ** 2


def negative_slices(x):
    return x[-3:].sum() * x[:-2].sum() + x[::-1] @ x + np.sum(x[-1:-4:-1] ** 2)


def rows_and_columns(a):
    return np.sum(a[1, :] ** 2) + np.sum(a[:, 2] * a[:, 0]) + a[2].sum() * a[-1, -1]


def submatrix_product(a):
    return np.sum(a[1:, :2] * a[:2, 2:4])


def strided_two_d(a):
    return np.sum(a[::2, 1::2] ** 3) + np.sum(a[::-1, ::-1] * a)


def integer_array_index(x):
    return np.sum(x[IDX] ** 2)


def integer_array_pairs(a):
    return np.sum(a[ROWS, COLS] * np.array([1.0, -2.0, 0.5]))


def gather_rows(a):
    return np.sum(np.tanh(a[ROWS]) * a[ROWS[::-1]])


def boolean_mask_runtime(x):
    m = x > 0.0
    return np.sum(x[m] ** 2) - np.sum(x[~m])


def boolean_mask_constant(x):
    return np.sum(np.exp(x[MASK]))


def newaxis_outer(u, v):
    return np.sum(np.tanh(u[:, np.newaxis] * v[np.newaxis, :]))


def none_index(x):
    return np.sum((x[None, :] - x[:, None]) ** 2 * 0.5)


def ellipsis_index(a):
    return np.sum(a[..., 0] * a[..., -1]) + a[0, ...].sum()


def runtime_integer_index(x, i):
    return x[i] ** 2 + x[i - 1] * 3.0 + x[-i]


def index_of_computed_array(x):
    y = np.sin(x) * x
    return y[1] + y[-1] * y[0]


def column_of_matrix_product(a, b):
    return np.sum((a @ b)[:, 1] ** 2)


def mixed_basic_and_fancy(a):
    return np.sum(a[1:, ROWS[:2]] ** 2)


def index_with_argmax(x):
    return x[np.argmax(x)] * 2.0 + x[np.argmin(x)]


CASES = [
    Case(scalar_indices, lambda: (normal(1400, 5),)),
    Case(slices, lambda: (normal(1401, 7),)),
    Case(negative_slices, lambda: (normal(1402, 6),)),
    Case(rows_and_columns, lambda: (normal(1403, 3, 4),)),
    Case(submatrix_product, lambda: (normal(1404, 3, 4),)),
    Case(strided_two_d, lambda: (normal(1405, 4, 5),)),
    Case(integer_array_index, lambda: (normal(1406, 5),)),
    Case(integer_array_pairs, lambda: (normal(1407, 3, 4),)),
    Case(gather_rows, lambda: (normal(1408, 3, 4),)),
    Case(boolean_mask_runtime, lambda: (normal(1409, 6),)),
    Case(boolean_mask_constant, lambda: (normal(1410, 6),)),
    Case(newaxis_outer, lambda: (normal(1411, 3), normal(1412, 4)), argnums=(0, 1)),
    Case(none_index, lambda: (normal(1413, 4),)),
    Case(ellipsis_index, lambda: (normal(1414, 2, 3, 4),)),
    Case(runtime_integer_index, lambda: (normal(1415, 5), 2)),
    Case(index_of_computed_array, lambda: (normal(1416, 4),)),
    Case(column_of_matrix_product, lambda: (normal(1417, 3, 4), normal(1418, 4, 2)), argnums=(0, 1)),
    Case(mixed_basic_and_fancy, lambda: (normal(1419, 3, 4),)),
    Case(index_with_argmax, lambda: (normal(1420, 6),)),
]
