"""Writes into arrays: ``x[i] = ...``, ``out[:, j] += ...``, masked and sliced assignment, on arrays
made inside the function and on copies of the inputs. JAX cannot run these (its arrays are
immutable), so finite differences are the oracle."""
import numpy as np

from . import Case, normal, uniform

W5 = np.array([0.5, -1.0, 2.0, 0.25, -0.75])
W34 = np.linspace(-1.0, 1.5, 12).reshape(3, 4)
SLOTS = np.array([0, 2, 1, 2, 0])


def setitem_in_loop(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i] ** 2 * (i + 1)
    return np.sum(out * W5)


def column_accumulate(a):
    out = np.zeros((3, 4))
    for j in range(4):
        out[:, j] += a[:, j] * j + a[:, 0]
    return np.sum(out * W34)


def copy_then_modify(x):
    y = x.copy()
    y[0] = 0.0
    y[1:] *= 2.0
    y[-1] += y[1] * y[2]
    return np.sum(y ** 2)


def cumulative_product_inplace(x):
    out = np.empty_like(x)
    acc = 1.0
    for i in range(x.shape[0]):
        acc *= x[i]
        out[i] = acc
    return np.sum(out * W5)


def overwrite_in_loop(x):
    y = x.copy()
    for i in range(1, y.shape[0]):
        y[i] = y[i - 1] * 0.5 + np.sin(y[i])
    return np.sum(y * W5)


def matmul_loops(a, b):
    n, k = a.shape
    m = b.shape[1]
    out = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(k):
                s += a[i, p] * b[p, j]
            out[i, j] = s
    return np.sum(out ** 2)


def differences(x):
    out = np.zeros(x.shape[0] - 1)
    for i in range(1, x.shape[0]):
        out[i - 1] = x[i] - x[i - 1]
    return np.sum(out ** 3)


def relu_by_mask_assignment(x):
    y = x.copy()
    y[y < 0.0] = 0.0
    return np.sum(y * W5)


def normalize_rows_inplace(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] / np.sum(a[i] ** 2)
    return np.sum(out * W34)


def fill_from_reductions(x):
    out = np.zeros(3)
    out[0] = x.sum()
    out[1] = x.max()
    out[2] = np.sum(x * x)
    return out @ np.array([1.0, 2.0, 0.5])


def slice_assignment(x):
    y = np.zeros(6)
    y[1:4] = x[:3] ** 2
    y[4:] = np.sin(x[3:5])
    return np.sum(y * np.arange(6.0))


def aug_assign_element(x):
    y = x.copy()
    y[2] += y[0] * y[1]
    y[0] -= 3.0 * y[2]
    return np.sum(y * y)


def thomas_solve(lower, diag, upper, rhs):
    n = diag.shape[0]
    c = np.zeros(n)
    d = np.zeros(n)
    c[0] = upper[0] / diag[0]
    d[0] = rhs[0] / diag[0]
    for i in range(1, n):
        denom = diag[i] - lower[i] * c[i - 1]
        if i < n - 1:
            c[i] = upper[i] / denom
        d[i] = (rhs[i] - lower[i] * d[i - 1]) / denom
    x = np.zeros(n)
    x[n - 1] = d[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = d[i] - c[i] * x[i + 1]
    return np.sum(x * W5)


def heat_equation(u0, alpha, steps):
    u = u0.copy()
    for _ in range(steps):
        u_new = u.copy()
        u_new[1:-1] = u[1:-1] + alpha * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = u_new
    return np.sum(u ** 2)


def scatter_add(x):
    out = np.zeros(3)
    for i in range(x.shape[0]):
        out[SLOTS[i]] += x[i] * x[i]
    return np.sum(out * np.array([1.0, -1.0, 2.0]))


def row_update_on_input_copy(a):
    b = a.copy()
    for i in range(1, b.shape[0]):
        b[i, :] = b[i, :] - 0.5 * b[i - 1, :]
    return np.sum(np.tanh(b) * W34)


CASES = [
    Case(setitem_in_loop, lambda: (normal(1800, 5),), oracle="fd"),
    Case(column_accumulate, lambda: (normal(1801, 3, 4),), oracle="fd"),
    Case(copy_then_modify, lambda: (normal(1802, 5),), oracle="fd"),
    Case(cumulative_product_inplace, lambda: (uniform(1803, 5),), oracle="fd"),
    Case(overwrite_in_loop, lambda: (normal(1804, 5),), oracle="fd"),
    Case(matmul_loops, lambda: (normal(1805, 2, 3), normal(1806, 3, 2)), argnums=(0, 1), oracle="fd"),
    Case(differences, lambda: (normal(1807, 5),), oracle="fd"),
    Case(relu_by_mask_assignment, lambda: (normal(1808, 5),), oracle="fd"),
    Case(normalize_rows_inplace, lambda: (normal(1809, 3, 4),), oracle="fd"),
    Case(fill_from_reductions, lambda: (normal(1810, 4),), oracle="fd"),
    Case(slice_assignment, lambda: (normal(1811, 5),), oracle="fd"),
    Case(aug_assign_element, lambda: (normal(1812, 4),), oracle="fd"),
    Case(thomas_solve, lambda: (normal(1813, 5), uniform(1814, 5, low=3.0, high=4.0), normal(1815, 5), normal(1816, 5)),
         argnums=(0, 1, 2, 3), oracle="fd"),
    Case(heat_equation, lambda: (normal(1817, 6), 0.2, 5), argnums=(0, 1), oracle="fd"),
    Case(scatter_add, lambda: (normal(1818, 5),), oracle="fd"),
    Case(row_update_on_input_copy, lambda: (normal(1819, 3, 4),), oracle="fd"),
]
