"""Linear algebra: products, contractions, solves, factorizations and norms."""
import numpy as np
from numpy.linalg import norm

from . import Case, normal, well_conditioned

W33 = np.array([[1.0, -0.5, 0.2], [0.3, 2.0, -1.0], [0.0, 0.7, 0.4]])


def matvec_energy(a, x):
    return np.sum((a @ x) ** 2)


def matmul_chain(a, b, c):
    return np.sum(np.tanh(a @ b @ c))


def dot_of_vectors(x, y):
    return np.dot(x, y) ** 2 + np.dot(x, x)


def quadratic_form(x, a):
    return x @ a @ x


def trace_of_inverse(a):
    return np.trace(np.linalg.inv(a)) + np.sum(np.linalg.inv(a) * W33)


def log_abs_det(a):
    return np.log(np.abs(np.linalg.det(a)))


def slogdet_logabs(a):
    sign, logdet = np.linalg.slogdet(a)
    return logdet * sign


def solve_vector(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2)


def solve_matrix(a, b):
    return np.sum(np.linalg.solve(a, b) * W33[:, :2])


def cholesky_log_det(b):
    s = b @ b.T + 3.0 * np.eye(3)
    chol = np.linalg.cholesky(s)
    return 2.0 * np.sum(np.log(np.diag(chol))) + np.sum(chol * W33)


def norms(x, a):
    return np.linalg.norm(x) + norm(a) + np.sum(np.linalg.norm(a, axis=1) * x[:3])


def normalize_vector(x):
    v = x / np.linalg.norm(x)
    return v @ np.array([1.0, 2.0, -1.0, 0.5])


def einsum_contractions(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b) * W33) + np.einsum("ij,ij->", a, b.T)


def outer_and_inner(x, y):
    return np.sum(np.outer(x, y) * W33) + np.inner(x, y) ** 2


def tensordot_axes(a, b):
    return np.sum(np.tensordot(a, b, axes=([1, 2], [0, 1])) * np.array([1.0, -1.0]))


def gram_trace(x):
    g = x.T @ x
    return np.trace(g @ g)


def ridge_regression_loss(x, y):
    w = np.linalg.solve(x.T @ x + 0.5 * np.eye(3), x.T @ y)
    r = x @ w - y
    return r @ r


def batched_matmul(a, b):
    return np.sum(np.matmul(a, b) ** 2)


def reshape_then_matmul(a, b):
    return np.sum(a.reshape(6, 2).T @ b)


def transpose_axes(a):
    return np.sum(np.transpose(a, (2, 0, 1)).reshape(4, 6) @ np.ones(6) * np.arange(4.0))


def gaussian_log_likelihood(l_raw, x):
    cov = l_raw @ l_raw.T + np.eye(3)
    sign, logdet = np.linalg.slogdet(cov)
    return -0.5 * (x @ np.linalg.solve(cov, x) + logdet)


CASES = [
    Case(matvec_energy, lambda: (normal(1300, 3, 4), normal(1301, 4)), argnums=(0, 1)),
    Case(matmul_chain, lambda: (normal(1302, 2, 3), normal(1303, 3, 4), normal(1304, 4, 2)), argnums=(0, 1, 2)),
    Case(dot_of_vectors, lambda: (normal(1305, 4), normal(1306, 4)), argnums=(0, 1)),
    Case(quadratic_form, lambda: (normal(1307, 3), normal(1308, 3, 3)), argnums=(0, 1)),
    Case(trace_of_inverse, lambda: (well_conditioned(1309, 3),)),
    Case(log_abs_det, lambda: (well_conditioned(1310, 3),)),
    Case(slogdet_logabs, lambda: (well_conditioned(1311, 3),)),
    Case(solve_vector, lambda: (well_conditioned(1312, 3), normal(1313, 3)), argnums=(0, 1)),
    Case(solve_matrix, lambda: (well_conditioned(1314, 3), normal(1315, 3, 2)), argnums=(0, 1)),
    Case(cholesky_log_det, lambda: (normal(1316, 3, 3),)),
    Case(norms, lambda: (normal(1317, 4), normal(1318, 3, 4)), argnums=(0, 1)),
    Case(normalize_vector, lambda: (normal(1319, 4),)),
    Case(einsum_contractions, lambda: (normal(1320, 3, 4), normal(1321, 4, 3)), argnums=(0, 1)),
    Case(outer_and_inner, lambda: (normal(1322, 3), normal(1323, 3)), argnums=(0, 1)),
    Case(tensordot_axes, lambda: (normal(1324, 2, 3, 4), normal(1325, 3, 4, 2)), argnums=(0, 1)),
    Case(gram_trace, lambda: (normal(1326, 4, 3),)),
    Case(ridge_regression_loss, lambda: (normal(1327, 6, 3), normal(1328, 6)), argnums=(0, 1)),
    Case(batched_matmul, lambda: (normal(1329, 2, 3, 4), normal(1330, 2, 4, 3)), argnums=(0, 1)),
    Case(reshape_then_matmul, lambda: (normal(1331, 3, 4), normal(1332, 6, 2)), argnums=(0, 1)),
    Case(transpose_axes, lambda: (normal(1333, 2, 3, 4),)),
    Case(gaussian_log_likelihood, lambda: (normal(1334, 3, 3), normal(1335, 3)), argnums=(0, 1)),
]
