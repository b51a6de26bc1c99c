"""Linear algebra, moments and elementwise functions on the GPU backend, in Numba's CUDA simulator: solve, inv,
det and trace (one elimination kernel in the simulator), var and std, cumsum and cumprod, argmax and argmin,
and the elementwise functions with device implementations agree with NumPy (float64, rtol 1e-12); a singular
or non-finite matrix is the CPU backend's ``LinAlgError``."""
import numpy as np
import pytest

import numbax

A = np.array([[4.0, 1.0, -2.0], [1.0, -3.0, 0.5], [2.0, 0.0, 5.0]])
B = np.array([[1.0, 2.0], [-1.0, 0.5], [3.0, -2.0]])
X = np.array([-2.5, -0.0, 0.0, 0.3, 1.0, 4.0])


def linalg(a, b):
    return np.linalg.solve(a, b), np.linalg.solve(a.T, b[:, 0]), np.linalg.inv(a), np.linalg.det(a), np.trace(a @ a)


def moments(x, m):
    return (np.var(x), x.std(ddof=1), np.var(m, axis=0, keepdims=True), np.std(m, axis=-1), np.cumsum(m.T, axis=0),
            m.cumprod(axis=1), np.cumsum(x[::2]))


def functions(x, y):
    return (np.sign(x), np.sinc(x), np.exp2(x), np.logaddexp(x, y), np.logaddexp2(x, y), np.fmax(x, y),
            np.fmin(x, y), np.hypot(x, y), np.arctan2(x, y), np.isnan(y) | np.isinf(y), np.isfinite(y),
            np.argmax(y), np.argmin(x), np.argmax(x.reshape(2, 3)))


@pytest.fixture(scope="module")
def solved(gpu):
    return numbax.jit(linalg, backend="gpu")


def _agree(got, expected):
    for e, g in zip(expected, numbax.device_get(got)):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-15)


def test_linear_algebra_agrees_with_numpy(solved):
    _agree(solved(A, B), linalg(A, B))


@pytest.mark.parametrize("a, message", [
    (np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]]), "Matrix is singular to machine precision"),
    (np.where(np.eye(3) > 0, np.nan, A), "Array must not contain infs or NaNs"),
    (A[:2], "Incompatible array sizes, system is not dimensionally valid"),
])
def test_a_singular_or_non_finite_matrix_is_the_cpu_backends_error(solved, a, message):
    with pytest.raises(np.linalg.LinAlgError, match=message):  # the CPU backend's (Numba's) messages
        solved(a, B)


def test_moments_and_elementwise_functions_agree_with_numpy(gpu):
    m = np.arange(12.0).reshape(3, 4) ** 1.5
    _agree(numbax.jit(moments, backend="gpu")(X, m), moments(X, m))
    y = np.array([1.0, -0.0, 2.0, -np.inf, -4.0, np.nan])
    with np.errstate(invalid="ignore"):  # NumPy's logaddexp of a NaN warns
        expected = functions(X, y)
    _agree(numbax.jit(functions, backend="gpu")(X, y), expected)
