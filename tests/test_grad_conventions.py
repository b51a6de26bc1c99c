"""Derivatives at the points where a convention decides them: JAX's numbers, first and second order.

Where JAX and autograd agree (ties of max/min over axes, abs at 0, ``x ** y`` at 0), numbax gives the same
numbers; where they differ (``np.fmax``/``np.fmin`` and ``np.clip`` at ties, ``x ** 0.0``), JAX's. Each
function is evaluated exactly at its special points (ties, bounds, zeros) and compared with ``jax.grad`` in
float64 on the same source (``grad_corpus.oracles.to_jax``), and its second order (``numbax.grad`` of
``<numbax.grad(f)(x), v>``) with JAX's Hessian-vector product. Functions that ties make only one-sided
differentiable have no finite-difference oracle here: the convention is the point.
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402  (also turns on JAX's float64 mode)

TIES = np.array([1.0, 3.0, 3.0, -2.0])
TIED_ROWS = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]])
W = np.array([0.3, -1.2, 0.7, 2.0])


def abs_at_zero(x):
    return np.abs(x)


def abs_of_zeros(x):
    return np.sum(np.abs(x) * W)


def sign_times(x):
    return np.sign(x) * x


def max_ties(x):
    return np.max(x) * 2.0


def amax_ties(x):
    return np.amax(x * x)


def nanmax_ties(x):
    return np.nanmax(x)


def nanmin_ties(x):
    return np.nanmin(-x)


def method_max_ties(x):
    return x.max()


def max_axis_ties(x):
    return np.sum(np.max(x, axis=1) * np.array([1.0, 2.0]))


def min_axis_ties(x):
    return np.sum(np.min(x, axis=0) * np.array([1.0, 2.0, 3.0]))


def maximum_tie(x):
    return np.sum(np.maximum(x * x, 9.0) * W)


def minimum_tie(x):
    return np.sum(np.minimum(x, 3.0) * W)


def fmax_tie(x):
    return np.sum(np.fmax(x * x, 9.0) * W)


def fmin_tie(x):
    return np.sum(np.fmin(3.0, x) * W)


def builtin_max_tie(x):
    return max(x, 1.0) * x


def builtin_max_tie_second(x):
    return max(1.0, x) * x


def builtin_min_tie(x):
    return min(x * x, 1.0) * x


def clip_at_bounds(x):
    return np.sum(np.clip(x * x, 1.0, 9.0) * W)


def power_0(x):
    return x ** 0 + x


def power_1(x):
    return x ** 1


def power_2(x):
    return x ** 2


def power_half(x):
    return x ** 0.5


def np_power_3(x):
    return np.power(x, 3)


def power_wrt_exponent(y):
    return 0.0 ** y


def powers_wrt_exponents(y):
    return np.sum(np.array([0.0, 1.5, 0.0, 2.0]) ** y)


def sqrt_at_zero(x):
    return np.sqrt(x)


def where_ties(x):
    return np.sum(np.where(x > 1.0, x * x, -x) * W)


def median_even(x):
    return np.median(x * x * x)


def median_odd(x):
    return np.median(x)


def sort_ties(x):
    return np.sum(np.sort(x * x) * W)


def ptp_ties(x):
    return np.ptp(x)


def ptp_axis_ties(x):
    return np.sum(np.ptp(x, axis=1) * np.array([1.0, 2.0]))


def norm_at_zero(x):
    return np.linalg.norm(x)


def norm_ord_2(x):
    return np.linalg.norm(x, ord=2)


def norm_ord_1_at_zero(x):
    return np.linalg.norm(x, ord=1)


def norm_rows_ord_1(x):
    return np.sum(np.linalg.norm(x, ord=1, axis=1))


def prod_zeros(x):
    return np.prod(x)


def prod_of_scalar(x):
    return np.prod(x)


def prod_rows_zeros(x):
    return np.sum(np.prod(x, axis=1) * np.array([1.0, 2.0, -1.0]))


def prod_columns_keepdims(x):
    return np.sum(np.prod(x * x, axis=0, keepdims=True) * np.array([1.0, 2.0]))


def prod_over_axes(x):
    return np.sum(np.prod(x, axis=(0, 2)) * np.array([1.0, 2.0]))


ZERO_ROWS = np.array([[0.0, 2.0], [1.5, 3.0], [0.0, 0.0]])
ZERO_BLOCKS = np.array([[[0.0, 2.0], [1.5, 3.0]], [[0.5, 0.7], [0.0, 0.0]]])

CASES = [
    (abs_at_zero, 0.0), (abs_of_zeros, np.array([0.0, -1.0, 2.0, 0.0])), (sign_times, 0.0), (max_ties, TIES),
    (amax_ties, TIES), (nanmax_ties, TIES), (nanmin_ties, TIES), (method_max_ties, TIES),
    (max_axis_ties, TIED_ROWS), (min_axis_ties, TIED_ROWS), (maximum_tie, TIES), (minimum_tie, TIES),
    (fmax_tie, TIES), (fmin_tie, TIES), (builtin_max_tie, 1.0), (builtin_max_tie_second, 1.0),
    (builtin_min_tie, 1.0), (clip_at_bounds, TIES), (power_0, 0.0), (power_1, 0.0), (power_2, 0.0),
    (power_half, 0.0), (np_power_3, 0.0), (power_wrt_exponent, 2.0),
    (powers_wrt_exponents, np.array([2.0, 1.0, 3.0, 0.5])), (sqrt_at_zero, 0.0), (where_ties, TIES),
    (median_even, TIES), (median_odd, np.array([1.0, 3.0, 3.0])), (sort_ties, TIES), (ptp_ties, TIES),
    (ptp_axis_ties, TIED_ROWS), (norm_at_zero, np.zeros(3)), (norm_ord_2, np.array([0.3, -0.7, 1.1, 0.5])),
    (norm_ord_1_at_zero, np.array([0.0, -1.0, 2.0])), (norm_rows_ord_1, np.array([[0.0, 1.0], [-2.0, 0.0]])),
    (prod_zeros, np.array([0.0, 2.0, 3.0])), (prod_zeros, np.array([0.0, 2.0, 0.0, 3.0])), (prod_of_scalar, 0.0),
    (prod_rows_zeros, ZERO_ROWS), (prod_columns_keepdims, ZERO_ROWS), (prod_over_axes, ZERO_BLOCKS),
]
IDS = [fn.__name__ + (f"_{np.size(x) - np.count_nonzero(x)}" if fn is prod_zeros else "") for fn, x in CASES]
# second order on cpu: the cases whose second derivative is not zero, and one of each family that is
CPU_SECOND = ("abs_at_zero", "max_axis_ties", "maximum_tie", "fmax_tie", "builtin_max_tie", "builtin_min_tie",
              "clip_at_bounds", "power_0", "power_1", "power_2", "power_half", "powers_wrt_exponents",
              "median_even", "sort_ties", "ptp_axis_ties", "norm_ord_2", "prod_zeros_2", "prod_over_axes")


def _direction(x):
    return np.linspace(0.5, 1.7, np.size(x)).reshape(np.shape(x)) if np.ndim(x) else 1.3


def _hvp(fn, v):
    def hvp(x):
        return np.sum(numbax.grad(fn)(x) * v)
    return hvp


def _assert_jax(got, want, what):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12, equal_nan=True,
                               err_msg=what)
    assert np.shape(got) == np.shape(want)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("fn, x", CASES, ids=IDS)
def test_first_order_is_jax(fn, x, backend):
    _assert_jax(numbax.grad(fn, backend=backend)(x), jax.grad(to_jax(fn))(x), fn.__name__)


def _second(fn, x, backend):
    v = _direction(x)
    fj = to_jax(fn)
    want = jax.grad(lambda x: jnp.sum(jax.grad(fj)(x) * v))(x)
    _assert_jax(numbax.grad(_hvp(fn, v), backend=backend)(x), want, fn.__name__)


@pytest.mark.parametrize("fn, x", CASES, ids=IDS)
def test_second_order_is_jax(fn, x):
    _second(fn, x, "python")


@pytest.mark.parametrize("fn, x", [c for c, i in zip(CASES, IDS) if i in CPU_SECOND], ids=CPU_SECOND)
def test_second_order_is_jax_cpu(fn, x):
    _second(fn, x, "cpu")


def power_float_zero(x):
    return x ** 0.0


def test_float_exponent_zero_at_zero_is_jax_nan():
    """JAX differentiates ``x ** 0.0`` (a float exponent) by ``0.0 * x ** -1.0``: NaN at 0; an integer 0 gives 0."""
    for backend in ("python", "cpu"):
        assert np.isnan(numbax.grad(power_float_zero, backend=backend)(0.0))
        assert numbax.grad(power_float_zero, backend=backend)(2.0) == 0.0
    assert np.isnan(jax.grad(to_jax(power_float_zero))(0.0))


def norm_inf(x):
    return np.linalg.norm(x, ord=np.inf)


def test_inf_norm_shares_ties_and_refuses_second_order():
    x = np.array([0.0, -2.0, 2.0])
    _assert_jax(numbax.grad(norm_inf)(x), jax.grad(to_jax(norm_inf))(x), "norm_inf")
    with pytest.raises(numbax.NumbaxDifferentiationError, match="rt.norm_grad .a second derivative of np.linalg.norm. with ord=inf"):
        numbax.grad(_hvp(norm_inf, np.ones(3)))(x)


def sort_rows(x):
    return np.sum(np.sort(x) * x)


def sort_columns(x):
    return np.sum(np.sort(x, axis=0) * x)


def sort_middle_axis(x):
    return np.sum(np.sort(x, axis=-2) ** 2 * x)


def sort_columns_in_place(x):
    y = x * x
    y.sort(axis=0)
    return np.sum(y * x)


def median_rows(x):
    return np.sum(np.median(x, axis=0))


def median_columns_cubed(x):
    return np.sum(np.median(x * x * x, axis=-1) * np.array([0.5, -1.0, 2.0]))


def median_middle_axis(x):
    return np.sum(np.median(x ** 3, axis=1))


def median_over_axes(x, axis):
    return np.median(x, axis=axis)


@pytest.mark.parametrize("backend", ["cpu", "python"])
def test_sort_of_rows_is_jax_to_second_order(backend):
    x = np.array([[1.0, -2.0, 1.0], [0.5, 3.0, -1.0]])
    v = np.array([[0.3, -0.2, 0.7], [1.1, 0.4, -0.6]])
    _assert_jax(numbax.grad(sort_rows, backend=backend)(x), jax.grad(to_jax(sort_rows))(x), "sort_rows")
    hvp = jax.grad(lambda y: jnp.sum(jax.grad(to_jax(sort_rows))(y) * v))(x)
    _assert_jax(numbax.grad(_hvp(sort_rows, v), backend=backend)(x), hvp, "sort_rows second order")


@pytest.mark.parametrize("backend", ["cpu", "python"])
@pytest.mark.parametrize("fn", [sort_columns, sort_columns_in_place])
def test_sort_along_another_axis_is_jax_to_second_order(backend, fn):
    x = np.array([[1.0, -2.0, 1.0], [0.5, 3.0, -1.0], [-0.3, 0.2, 2.0]])
    v = np.array([[0.3, -0.2, 0.7], [1.1, 0.4, -0.6], [0.5, -1.0, 0.1]])
    in_jax = (lambda y: jnp.sum(jnp.sort(y * y, axis=0) * y)) if fn is sort_columns_in_place else to_jax(fn)
    _assert_jax(numbax.grad(fn, backend=backend)(x), jax.grad(in_jax)(x), fn.__name__)
    hvp = jax.grad(lambda y: jnp.sum(jax.grad(in_jax)(y) * v))(x)
    _assert_jax(numbax.grad(_hvp(fn, v), backend=backend)(x), hvp, f"{fn.__name__} second order")


@pytest.mark.parametrize("backend", ["cpu", "python"])
def test_sort_along_the_middle_axis_is_jax(backend):
    x = np.random.default_rng(3).normal(size=(2, 3, 4))
    _assert_jax(numbax.grad(sort_middle_axis, backend=backend)(x), jax.grad(to_jax(sort_middle_axis))(x),
                "sort_middle_axis")


@pytest.mark.parametrize("backend", ["cpu", "python"])
@pytest.mark.parametrize("fn", [median_rows, median_columns_cubed, median_middle_axis])
def test_median_over_an_axis_is_jax_to_second_order_at_ties(backend, fn):
    # each lane's middle elements of a stable sort, as JAX's; ties within lanes (was refused at run time)
    x = np.array([[1.0, -2.0, 1.0, 0.5], [0.5, 3.0, -1.0, 0.5], [1.0, 0.2, 2.0, 0.5]])
    x = x.reshape(3, 2, 2) if fn is median_middle_axis else x
    v = np.linspace(-0.7, 1.3, x.size).reshape(x.shape)
    _assert_jax(numbax.grad(fn, backend=backend)(x), jax.grad(to_jax(fn))(x), fn.__name__)
    hvp = jax.grad(lambda y: jnp.sum(jax.grad(to_jax(fn))(y) * v))(x)
    _assert_jax(numbax.grad(_hvp(fn, v), backend=backend)(x), hvp, f"{fn.__name__} second order")
    _, tangent = numbax.jvp(fn, (x,), (v,), backend=backend)
    _assert_jax(tangent, jax.jvp(to_jax(fn), (x,), (v,))[1], f"{fn.__name__} forward")
    np.testing.assert_array_equal(numbax.jit(lambda y: np.median(y, axis=1), backend=backend)(x),
                                  np.median(x, axis=1))


@pytest.mark.parametrize("backend", ["cpu", "python"])
def test_median_over_a_tuple_of_axes_compiles_and_its_derivative_is_refused(backend):
    x = np.arange(24.0).reshape(2, 3, 4) ** 2 % 7
    for axis in ((0, 1), (0, 2), (1, 2), (0, 1, 2)):
        got = numbax.jit(median_over_axes, static_argnums=1, backend=backend)(x, axis)
        np.testing.assert_array_equal(got, np.median(x, axis=axis))
    with pytest.raises(numbax.NumbaxDifferentiationError, match="np.median over a tuple of axes") as info:
        numbax.grad(lambda y: np.sum(median_over_axes(y, (0, 2))), backend=backend)(x)
    assert info.value.origin.lineno == median_over_axes.__code__.co_firstlineno + 1
