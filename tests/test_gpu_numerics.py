"""Linear algebra, moments and elementwise functions on the GPU backend, in Numba's CUDA simulator: solve, inv,
det and trace (one elimination kernel in the simulator), var and std, cumsum and cumprod, argmax and argmin,
products, any and all, and the elementwise functions with device implementations agree with NumPy (float64,
rtol 1e-12; signed zeros, NaN and infinities as NumPy's); a singular or non-finite matrix is the CPU backend's
``LinAlgError``."""
import os

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


def clipped(x, b):
    return x.clip(max=b), np.clip(x, None, b), np.clip(x, b, None), np.clip(x, min=-b), x.clip(-b, b)


def test_clip_with_one_bound_agrees_with_numpy_and_the_cpu_backends_gradient(gpu):
    # a bound of None was refused ("Constant inside an array expression"); its kernel takes the other bound only
    x = np.array([-2.5, -0.0, 0.3, 1.0, np.nan, 4.0])
    _agree(numbax.jit(clipped, backend="gpu")(x, 0.5), clipped(x, 0.5))
    total = lambda x, b: sum(np.sum(c * c) for c in clipped(x, b))  # noqa: E731
    x = np.array([-2.5, -0.25, 0.3, 1.0, 4.0])
    got = numbax.device_get(numbax.grad(total, argnums=(0, 1), backend="gpu")(x, 0.5))
    _agree(got, numbax.grad(total, argnums=(0, 1))(x, 0.5))


def rounding(x, k):
    return (np.floor(x), np.ceil(x), np.trunc(x), np.rint(x), np.round(x), np.cbrt(x), np.reciprocal(x),
            np.floor(k), np.reciprocal(k))


def products(m, k, e):
    return (np.prod(m), np.prod(m, axis=0), m.prod(axis=1, keepdims=True), np.any(m > 2.0), np.all(m, axis=1),
            (k > 3).any(), np.prod(k), np.prod(e), np.any(e), np.all(e), np.prod(e.reshape(0, 2), axis=1),
            m[0:1, 0].item())


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # 1 / 0.0: the simulator's threads' NumPy
def test_rounding_keeps_numpys_signed_zeros_and_non_finite_values(gpu):
    x = np.array([-2.5, -1.5, -0.5, -0.3, -0.0, 0.0, 0.5, 2.5, 2.7, 1e17, -np.inf, np.nan, -27.0])
    k = np.array([-3, 2, 1])
    with np.errstate(divide="ignore"):
        expected = rounding(x, k)
    got = numbax.device_get(numbax.jit(rounding, backend="gpu")(x, k))
    for e, g in zip(expected, got):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-12)
        assert np.array_equal(np.signbit(g), np.signbit(e))


def test_products_any_and_all_agree_with_numpy_empty_arrays_too(gpu):
    m, k, e = np.array([[0.5, 1.5, -2.0], [3.0, 0.0, np.nan]]), np.arange(1, 6), np.zeros(0)
    for want, got in zip(products(m, k, e), numbax.device_get(numbax.jit(products, backend="gpu")(m, k, e))):
        assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)


def only_element(x):
    return x.item() * 2.0


def test_item_of_other_than_one_element_is_numpys_error_at_the_users_line(gpu):
    with pytest.raises(numbax.NumbaxShapeError, match="can only convert an array of size 1") as info:
        numbax.jit(only_element, backend="gpu")(np.ones(2))
    assert info.value.origin.filename == os.path.abspath(__file__) and "x.item()" in info.value.origin.line


def ieee(x):
    return np.sqrt(x) + np.log(x) * np.exp(x * 1000.0) + np.arccos(x) + np.sin(x * np.inf)


def test_nan_and_infinities_where_pythons_math_raises_are_numpys(gpu):
    """The simulator runs kernels as Python, whose ``math.sqrt(-2.0)`` raises where a GPU gives NaN
    (``simulated_math``; found by the differential tester): the results are NumPy's and the CPU backend's."""
    x = np.array([-2.0, 0.0, 0.5, 2.0])
    with np.errstate(all="ignore"):
        expected = ieee(x)
    got = numbax.device_get(numbax.jit(ieee, backend="gpu")(x))
    # NaN and infinities where NumPy has them; finite values within a few ulp (libm's and Numba's transcendental
    # functions round differently on different CPUs)
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    np.testing.assert_allclose(got, numbax.jit(ieee)(x), rtol=1e-13)
