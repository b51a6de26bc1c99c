"""Higher-order reverse mode: ``grad`` of functions that call ``grad``, ``value_and_grad`` and ``vjp``.

Second (and third) derivatives are compared with JAX in float64 mode on the same NumPy source
(``grad_corpus.oracles.to_jax``) and with central finite differences of numbax's own first
derivative, on both backends. What the outer reverse mode cannot read in an inner gradient (list
tapes, in-place helpers, helpers without rules) is refused at the inner call.
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax import test_util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import fd_grad, to_jax  # noqa: E402  (also turns on JAX's float64 mode)

BACKENDS = ("python", "cpu")
TOL = dict(rtol=1e-9, atol=1e-10)
FD_TOL = dict(rtol=1e-5, atol=1e-6)


def assert_close(got, expected, **tol):
    got_leaves, expected_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected)
    assert len(got_leaves) == len(expected_leaves)
    for g, e in zip(got_leaves, expected_leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), **(tol or TOL))


# ---- scalar functions: grad of grad ------------------------------------------------------------

def sin_cube(x):
    return np.sin(x) * x ** 3


def exp_poly(x):
    return np.exp(0.5 * x) * (x ** 4 - 2.0 * x + 1.0)


def branchy(x):
    if x > 0.5:
        y = np.sin(x) * x
    else:
        y = np.exp(x) ** 2 / (1.0 + x * x)
    return y


def loop_product(x):
    y = x
    for i in range(4):
        y = np.sin(y) * x + 0.1 * i
    return y


def grows_past_sixteen(x):  # more iterations than a while loop's first table rows: the inner tape grows
    y = 1.0
    while y < 100.0:
        y = y * (1.0 + 0.1 * x) + 0.05 * np.sin(x * y)
    return y


SCALAR_CASES = [(sin_cube, 0.7), (exp_poly, -0.4), (branchy, 0.9), (branchy, 0.2), (loop_product, 0.8),
                (grows_past_sixteen, 0.6)]
SCALAR_IDS = ["sin_cube", "exp_poly", "branchy_then", "branchy_else", "loop_product", "grows_past_sixteen"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, x", SCALAR_CASES, ids=SCALAR_IDS)
def test_grad_of_grad_matches_jax_and_finite_differences(fn, x, backend):
    got = numbax.grad(numbax.grad(fn), backend=backend)(x)
    assert_close(got, jax.grad(jax.grad(to_jax(fn)))(x))
    assert_close(got, fd_grad(numbax.grad(fn, backend="python"), (x,)), **FD_TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_a_function_calling_grad(backend):
    def second(x):
        return numbax.grad(exp_poly)(x)

    assert_close(numbax.grad(second, backend=backend)(-0.4), jax.grad(jax.grad(to_jax(exp_poly)))(-0.4))


@pytest.mark.parametrize("backend", BACKENDS)
def test_third_order(backend):
    got = numbax.grad(numbax.grad(numbax.grad(sin_cube)), backend=backend)(0.7)
    assert_close(got, jax.grad(jax.grad(jax.grad(to_jax(sin_cube))))(0.7))


def newton_sqrt(a, tol):  # the README's example
    x = a
    while np.abs(x * x - a) > tol:
        x = 0.5 * (x + a / x)
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_second_derivative_through_a_data_dependent_while_loop(backend):
    assert numbax.grad(numbax.grad(newton_sqrt), backend=backend)(2.0, 1e-12) == pytest.approx(-0.25 * 2.0 ** -1.5)


def two_arguments(x, y):
    return x ** 3 * y + np.exp(x * y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mixed_partials_with_argnums(backend):
    got = numbax.grad(numbax.grad(two_arguments, argnums=1), argnums=(0, 1), backend=backend)(0.7, 0.3)
    assert_close(got, jax.grad(jax.grad(to_jax(two_arguments), argnums=1), argnums=(0, 1))(0.7, 0.3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_value_and_grad_compose_either_way(backend):
    d1, d2 = jax.grad(to_jax(sin_cube))(0.7), jax.grad(jax.grad(to_jax(sin_cube)))(0.7)
    assert_close(numbax.value_and_grad(numbax.grad(sin_cube), backend=backend)(0.7), (d1, d2))
    assert_close(numbax.grad(numbax.value_and_grad(sin_cube), has_aux=True, backend=backend)(0.7), (d1, d1))
    assert_close(numbax.jit(numbax.grad(numbax.grad(sin_cube)), backend=backend)(0.7), d2)


def squared_slopes(xs):
    return np.sum(numbax.vmap(numbax.grad(sin_cube))(xs) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_composes_with_higher_order(backend):
    xs = np.array([0.1, 0.7, -0.3])
    fj = to_jax(sin_cube)
    assert_close(numbax.vmap(numbax.grad(numbax.grad(sin_cube)), backend=backend)(xs),
                 jax.vmap(jax.grad(jax.grad(fj)))(xs))
    assert_close(numbax.grad(squared_slopes, backend=backend)(xs),
                 jax.grad(lambda xs: jnp.sum(jax.vmap(jax.grad(fj))(xs) ** 2))(xs))


# ---- arrays: Hessian-vector products -------------------------------------------------------------

def tanh_loss(x, y):  # as in test_test_util.py
    return np.sum(np.tanh(x * y) ** 2) + np.sum(np.exp(0.3 * x))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


RNG = np.random.default_rng(0)
X4 = np.array([0.3, -1.2, 0.7, 1.1])
V4 = np.array([0.5, -1.0, 2.0, 0.3])
Y4 = np.array([1.1, 0.4, -0.6, 0.9])
W1, B1, W2 = RNG.normal(size=(3, 4)), RNG.normal(size=4), RNG.normal(size=4)
XS, YS = RNG.normal(size=(5, 3)), RNG.normal(size=5)
DW1, DB1, DW2 = RNG.normal(size=(3, 4)), RNG.normal(size=4), RNG.normal(size=4)


def tanh_loss_x(x):
    return tanh_loss(x, Y4)


def mlp_loss(w1, b1, w2, x, y):
    h = np.tanh(x @ w1 + b1)
    return np.mean((h @ w2 - y) ** 2)


def jax_hvp(fn, x, v):
    return jax.grad(lambda x: jnp.vdot(jax.grad(to_jax(fn))(x), v))(x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [tanh_loss_x, rosenbrock], ids=["tanh_loss", "rosenbrock"])
def test_hessian_vector_product(fn, backend):
    hvp = numbax.grad(lambda x: numbax.grad(fn)(x) @ V4, backend=backend)
    got = hvp(X4)
    assert_close(got, jax_hvp(fn, X4, V4))
    assert_close(got, fd_grad(lambda x: numbax.grad(fn, backend="python")(x) @ V4, (X4,)), **FD_TOL)


def sin_of_running_sums(a):
    return np.sum(np.sin(np.cumsum(a, axis=1)) * np.cumprod(a, axis=0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_vector_product_through_scans_along_an_axis(backend):
    """A scan along an axis keeps its operand's ndim (the inner gradient's loops took it as 1-D)."""
    a = np.random.default_rng(5).uniform(0.5, 1.5, size=(3, 4))
    v = np.random.default_rng(6).normal(size=(3, 4))
    got = numbax.grad(lambda a: np.sum(numbax.grad(sin_of_running_sums)(a) * v), backend=backend)(a)
    assert_close(got, jax.grad(lambda a: jnp.vdot(jax.grad(to_jax(sin_of_running_sums))(a), v))(a))


def mlp_curvature(w1, b1, w2):
    g1, g2, g3 = numbax.grad(mlp_loss, argnums=(0, 1, 2))(w1, b1, w2, XS, YS)
    return np.sum(g1 * DW1) + np.sum(g2 * DB1) + np.sum(g3 * DW2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mlp_hessian_vector_product_over_every_parameter(backend):
    got = numbax.grad(mlp_curvature, argnums=(0, 1, 2), backend=backend)(W1, B1, W2)

    def jax_curvature(w1, b1, w2):
        g1, g2, g3 = jax.grad(to_jax(mlp_loss), argnums=(0, 1, 2))(w1, b1, w2, XS, YS)
        return jnp.sum(g1 * DW1) + jnp.sum(g2 * DB1) + jnp.sum(g3 * DW2)

    assert_close(got, jax.grad(jax_curvature, argnums=(0, 1, 2))(W1, B1, W2))


def value_times_slope(x):
    value, g = numbax.value_and_grad(rosenbrock)(x)
    return value * np.sum(g * V4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_a_function_calling_value_and_grad(backend):
    def jax_value_times_slope(x):
        value, g = jax.value_and_grad(to_jax(rosenbrock))(x)
        return value * jnp.sum(g * V4)

    assert_close(numbax.grad(value_times_slope, backend=backend)(X4), jax.grad(jax_value_times_slope)(X4))


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_hessian_vector_product_is_float32(backend):
    x, v = X4.astype(np.float32), V4.astype(np.float32)
    got = numbax.grad(lambda x: numbax.grad(tanh_loss_x)(x) @ v, backend=backend)(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, jax_hvp(tanh_loss_x, X4, V4), rtol=1e-5, atol=1e-5)


def rows_loop(x):  # a float64 array of one length saved in a loop: a row table in the inner gradient
    h = x
    total = 0.0
    for i in range(3):
        h = np.tanh(h * x + 0.1 * i)
        total = total + np.sum(h * h)
    return total


def rows_while(x):
    h = x
    k = 0
    while k < 20:
        h = np.sin(h) * x + 0.5
        k = k + 1
    return np.sum(h ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [rows_loop, rows_while])
def test_hessian_vector_product_through_loops_with_row_tables(fn, backend):
    got = numbax.grad(lambda x: numbax.grad(fn)(x) @ V4, backend=backend)(X4)
    assert_close(got, jax_hvp(fn, X4, V4))


IDX = np.array([0, 2, 2, 3])


def gathered(x):  # an integer-array index with a repeat: the inner adjoint is rt.index_added
    return np.sum(np.sin(x[IDX]) ** 2 * x[IDX])


def masked(x):
    return np.sum(x[x > 0.0] ** 3) + np.sum(np.exp(x[x < 0.5]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_vector_product_through_fancy_indexing(backend):
    got = numbax.grad(lambda x: numbax.grad(gathered)(x) @ V4, backend=backend)(X4)
    assert_close(got, jax_hvp(gathered, X4, V4))
    got = numbax.grad(lambda x: numbax.grad(masked)(x) @ V4, backend=backend)(X4)
    assert_close(got, fd_grad(lambda x: numbax.grad(masked, backend="python")(x) @ V4, (X4,)), **FD_TOL)


def unrolled_descent(x):  # differentiating through optimization steps (meta-learning)
    for _ in range(3):
        x = x - 0.01 * numbax.grad(rosenbrock)(x)
    return rosenbrock(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_through_gradient_steps_in_a_loop(backend):
    def jax_descent(x):
        for _ in range(3):
            x = x - 0.01 * jax.grad(to_jax(rosenbrock))(x)
        return to_jax(rosenbrock)(x)

    assert_close(numbax.grad(unrolled_descent, backend=backend)(X4), jax.grad(jax_descent)(X4))


def test_the_outermost_program_is_still_fused():
    hvp = numbax.grad(lambda x: numbax.grad(tanh_loss_x)(x) @ V4)
    source = numbax.source(hvp, X4)
    assert "for j in range(" in source and "_view" not in source and "rt.save_row" not in source


# ---- vjp --------------------------------------------------------------------------------------

def vector_fn(x):
    return np.tanh(x) * x[0] + np.exp(0.5 * x)


def pulled_back(x):
    out, pull = numbax.vjp(vector_fn, x)
    (g,) = pull(out * V4)
    return np.sum(g * g)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_a_function_calling_vjp(backend):
    def jax_pulled_back(x):
        out, pull = jax.vjp(to_jax(vector_fn), x)
        (g,) = pull(out * V4)
        return jnp.sum(g * g)

    assert_close(numbax.grad(pulled_back, backend=backend)(X4), jax.grad(jax_pulled_back)(X4))


def two_outputs(x, y):
    return x * y, np.sum(np.sin(x))


def with_aux(x):
    return np.tanh(x) * 2.0, np.sum(x)


def pullbacks_of_pytrees(x, y):
    (a, b), pull = numbax.vjp(two_outputs, x, y)
    gx, gy = pull((a, 1.5))
    out, pull_aux, aux = numbax.vjp(with_aux, x, has_aux=True)
    (g,) = pull_aux(out)
    return np.sum(gx * gy) + b + aux + np.sum(g)


def jax_pullbacks_of_pytrees(x, y):
    (a, b), pull = jax.vjp(to_jax(two_outputs), x, y)
    gx, gy = pull((a, 1.5))
    out, pull_aux, aux = jax.vjp(to_jax(with_aux), x, has_aux=True)
    (g,) = pull_aux(out)
    return jnp.sum(gx * gy) + b + aux + jnp.sum(g)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_of_tuple_outputs_and_has_aux_inside_jit_and_grad(backend):
    x, y = X4[:3], Y4[:3]
    assert_close(numbax.jit(pullbacks_of_pytrees, backend=backend)(x, y), jax_pullbacks_of_pytrees(x, y))
    assert_close(numbax.grad(pullbacks_of_pytrees, argnums=(0, 1), backend=backend)(x, y),
                 jax.grad(jax_pullbacks_of_pytrees, argnums=(0, 1))(x, y))


def pull_after_reassigning(x):
    out, pull = numbax.vjp(vector_fn, x)
    x = x * 3.0
    (g,) = pull(V4)
    return g + x + out


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_pullback_keeps_the_primals_it_was_made_with(backend):
    assert_close(numbax.jit(pull_after_reassigning, backend=backend)(X4), pull_after_reassigning(X4))


@pytest.mark.parametrize("order", [2, 3])
def test_check_grads_in_reverse_mode(order):
    test_util.check_grads(tanh_loss, (X4, Y4), order, modes=("rev",))


# ---- what is refused, at the inner call ------------------------------------------------------------

def float32_loop(w):  # float32 arrays saved in a loop go on a list tape
    for _ in range(3):
        w = np.tanh(w) * w
    return np.sum(w)


def slogdet_in_a_loop(a):  # slogdet's results read in a loop: rt.slogdet_grad has no rule of its own
    r = np.linalg.slogdet(a)
    total = 0.0
    for i in range(2):
        total = total + r[i]
    return total


def max_norm(x):  # rt.norm_grad's rule covers ord None and "fro", and 1 and 2 over vectors
    return np.linalg.norm(x, ord=np.inf)


@pytest.mark.parametrize("fn, x, what", [
    (float32_loop, np.ones(4, np.float32), "list tape"),
    (slogdet_in_a_loop, np.eye(3) * 2.0 + 0.1, "rt.slogdet_grad, which has no derivative rule"),
], ids=["list_tape", "no_rule"])
def test_what_the_outer_reverse_mode_cannot_read_is_refused_at_the_inner_call(fn, x, what):
    def outer(x):
        return np.sum(numbax.grad(fn)(x) * x)

    with pytest.raises(numbax.NumbaxDifferentiationError, match="higher-order derivative") as info:
        numbax.grad(outer, backend="python")(x)
    text = str(info.value)
    assert what in text and f"{__file__}:" in text and "numbax.grad(fn)(x)" in text


def test_a_rule_for_some_argument_values_refuses_the_others_at_the_users_line():
    """``rt.norm_grad``'s ``refuse`` (the registry's hook, which the outer reverse mode asks) names the norm's
    line and the order."""
    def outer(x):
        return np.sum(numbax.grad(max_norm)(x) * x)

    with pytest.raises(numbax.NumbaxDifferentiationError, match=r"second derivative of np.linalg.norm\) with "
                                                                  r"ord=inf over a vector") as info:
        numbax.grad(outer, backend="python")(X4)
    assert "return np.linalg.norm(x, ord=np.inf)" in str(info.value)
