"""numbax.lax: JAX's results in Python, under jit on both backends, and JAX's gradients under grad."""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp

import numpy as np
import pytest

import numbax
from numbax import lax
from numbax import tree_util
from numbax.test_util import check_grads

jax.config.update("jax_enable_x64", True)

BACKENDS = ("python", "cpu")
W = np.array([0.3, -0.7, 0.5])
XS = np.random.default_rng(0).normal(size=(5, 3))
START = np.array([0.2, -0.4, 1.1])  # a module's constant array, the start of a carry


def programs(L, np_):
    """The same programs over ``L`` (numbax.lax or jax.lax) and ``np_`` (numpy or jax.numpy)."""

    def fori(w, xs):
        return np_.sum(L.fori_loop(0, 4, lambda i, v: np_.tanh(v * w + xs[i]), w))

    def fori_pytree(w, xs):
        def body(i, carry):
            a, b = carry
            return (a * w + xs[i], b + np_.sum(a * a))

        a, b = L.fori_loop(1, 5, body, (w, 0.0))
        return np_.sum(a) + b

    def fori_constant_start(w, xs):
        return np_.sum(L.fori_loop(0, 3, lambda i, v: v * w + xs[i], START))

    def fori_stack_of_scalars(w, xs):
        def body(i, v):
            return np_.stack([v[0] * w[0] - v[1] * w[1], v[1] + w[2] * np_.sin(v[0])])

        v = L.fori_loop(0, 4, body, np_.stack([w[1], xs[0, 0]]))
        return v[0] * v[1]

    def fori_where_of_scalars(w, xs):
        def body(i, v):
            return np_.where(v > 0.0, v * w[0] - 0.5, v + w[1] * w[2])

        return L.fori_loop(0, 4, body, w[0] + xs[0, 0])

    def cond(w, xs):
        y = L.cond(np_.sum(w) > 0, lambda u, v: np_.sin(u) * v, lambda u, v: u ** 3 - v, w, xs[0])
        z = L.cond(np_.sum(w) < 0, lambda u, v: np_.sin(u) * v, lambda u, v: u ** 3 - v, w, xs[1])
        return np_.sum(y * z)

    def switch(w, xs):
        total = 0.0
        for index in (-2, 0, 1, 2, 7):
            total = total + np_.sum(L.switch(index, [np_.cos, lambda u: u * xs[0], np_.exp], w))
        return total

    def scan(w, xs):
        def step(c, x):
            c = np_.tanh(c * w + x)
            return c, (c * c, np_.sum(x * c))

        c, (ys, sums) = L.scan(step, np_.zeros_like(w), xs)
        return np_.sum(ys) + np_.sum(c) + np_.sum(sums * sums)

    def scan_reverse(w, xs):
        def step(c, x):
            return c * 0.5 + x, np_.sum(c * w)

        c, ys = L.scan(step, w, xs, reverse=True)
        return np_.sum(c * c) + np_.sum(ys * np_.arange(5.0))

    def scan_length(w, xs):
        c, ys = L.scan(lambda c, _: (c * w, c), w, length=3)
        return np_.sum(c) + np_.sum(ys[1] * ys[2])

    def select(w, xs):
        z = np_.sin(w * 3.0)
        return np_.sum(L.select(z > 0.1, z, L.stop_gradient(z) * 2.0 + z * w))

    def while_cube_root(a):
        def body(v):
            x, k = v
            return (x - (x * x * x - a) / (3.0 * x * x), k + 1)

        x, k = L.while_loop(lambda v: v[1] < 30, body, (a, 0))
        return x

    return {f.__name__: f for f in (fori, fori_pytree, fori_constant_start, fori_stack_of_scalars, fori_where_of_scalars,
                                    cond, switch, scan, scan_reverse, scan_length, select)}, \
        while_cube_root


NUMBAX, NUMBAX_WHILE = programs(lax, np)
JAX, JAX_WHILE = programs(jax.lax, jnp)
NAMES = sorted(NUMBAX)
JXS = jnp.asarray(XS)


@pytest.mark.parametrize("name", NAMES)
def test_python_semantics_match_jax(name):
    assert np.allclose(NUMBAX[name](W, XS), JAX[name](W, JXS), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
def test_jit_matches_jax(name, backend):
    got = numbax.jit(NUMBAX[name], backend=backend)(W, XS)
    assert np.allclose(got, JAX[name](W, JXS), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
def test_grad_matches_jax(name, backend):
    got = numbax.grad(NUMBAX[name], backend=backend)(W, XS)
    assert np.allclose(got, jax.grad(JAX[name])(W, JXS), rtol=1e-10, atol=1e-12)


def test_constant_array_carried_by_a_loop_is_not_written():
    """The loop's variable starts as a copy of the module's array, which an update in place leaves alone."""
    def grow(t, n):
        z = START
        for i in range(n):
            z += t
        return z

    before = START.copy()
    assert np.array_equal(numbax.jit(grow)(2.0, 2), before + 4.0)
    assert np.array_equal(numbax.jit(grow)(2.0, 0), before) and np.array_equal(START, before)
    assert np.array_equal(numbax.grad(lambda t: np.sum(grow(t, 3)))(2.0), 9.0)


def where_of_scalars(c, i, x):
    return np.where(c > 0, i, x), np.where(c > 0, i, i), np.where(c < 0, True, False)


def test_where_of_scalars_is_the_scalar_in_numpys_dtype():
    for c in (1.0, -1.0):
        for got, expected in zip(numbax.jit(where_of_scalars)(c, 3, 2.5), where_of_scalars(c, 3, 2.5)):
            assert got == expected and np.asarray(got).dtype == expected.dtype


def stacked(w):
    return np.sum(np.stack([w[0] * w[1], np.sin(w[2]), 2.0]) ** 2)


def stacked_jax(w):
    return jnp.sum(jnp.stack([w[0] * w[1], jnp.sin(w[2]), 2.0]) ** 2)


def test_stack_of_scalars_matches_jax_to_second_order_and_batched():
    assert np.allclose(numbax.jit(stacked)(W), stacked_jax(W), rtol=1e-12, atol=0)
    assert np.allclose(numbax.hessian(stacked)(W), jax.hessian(stacked_jax)(W), rtol=1e-12, atol=1e-14)
    assert np.allclose(numbax.jacfwd(numbax.grad(stacked))(W), jax.hessian(stacked_jax)(W), rtol=1e-12, atol=1e-14)
    assert np.allclose(numbax.vmap(stacked)(XS), jax.vmap(stacked_jax)(JXS), rtol=1e-12, atol=0)
    check_grads(stacked, (W,), order=2, modes=("fwd",))
    check_grads(stacked, (W,), order=1, modes=("rev",))


def test_stack_of_float32_scalars_keeps_float32_in_both_modes():
    w = W.astype(np.float32)
    _, tangent = numbax.jvp(lambda v: np.stack([v[0] * v[1], v[2]]), (w,), (np.ones_like(w),))
    assert tangent.dtype == np.float32
    np.testing.assert_allclose(tangent, [w[0] + w[1], 1.0], rtol=1e-6)
    assert numbax.grad(stacked)(w).dtype == np.float32


def test_stack_of_scalars_reverse_over_reverse():
    # the inner adjoint's zero cotangent of the tuple of scalars (``rt.zeros_like``) is a list of zeros
    check_grads(stacked, (W,), order=2, modes=("rev",))
    assert np.allclose(numbax.jacrev(numbax.grad(stacked))(W), jax.hessian(stacked_jax)(W), rtol=1e-12, atol=1e-14)


def test_stack_of_scalars_along_a_missing_axis_is_refused():
    with pytest.raises(numbax.errors.NumbaxTypingError, match="must be the constant 0 or -1"):
        numbax.jit(lambda_stack_axis_1)(2.5)


def lambda_stack_axis_1(x):
    return np.stack([x, x], axis=1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_while_loop_gradient_in_reverse_mode(backend):
    """JAX cannot reverse-differentiate while_loop; its forward mode is the oracle."""
    value, slope = numbax.value_and_grad(NUMBAX_WHILE, backend=backend)(2.0)
    assert value == pytest.approx(2.0 ** (1 / 3), rel=1e-14)
    assert slope == pytest.approx(float(jax.jacfwd(JAX_WHILE)(2.0)), rel=1e-12)
    assert slope == pytest.approx(1 / (3 * 2.0 ** (2 / 3)), rel=1e-12)


def test_generated_code_is_native_control_flow():
    def code(source):
        return [line.strip() for line in source.split('"""')[2].splitlines() if not line.strip().startswith("#")]

    scan_code = code(numbax.source(numbax.jit(NUMBAX["scan"]), W, XS))
    assert any(line.startswith("for ") for line in scan_code)
    assert not any(re.search(r"\blax\.", line) for line in scan_code)  # check locations name test_lax.py
    assert any(line.startswith("while ") for line in code(numbax.source(numbax.jit(NUMBAX_WHILE), 2.0)))


def test_scan_pytrees_and_no_outputs_match_jax():
    xs = {"a": XS, "b": XS[:, :2] * 2.0}

    def step(c, x):
        return c + np.sum(x["a"]) * x["b"], None

    def jstep(c, x):
        return c + jnp.sum(x["a"]) * x["b"], None

    got = lax.scan(step, np.zeros(2), xs)
    want = jax.lax.scan(jstep, jnp.zeros(2), xs)
    assert got[1] is None and np.allclose(got[0], want[0])
    compiled = numbax.jit(lambda xs: lax.scan(step, np.zeros(2), xs)[0])
    assert np.allclose(compiled(xs), want[0])


def test_tree_util_inside_jit():
    def f(params, x):
        scaled = tree_util.tree_map(lambda p: p * x, params)
        leaves = tree_util.tree_leaves(scaled)
        total = 0.0
        for leaf in leaves:
            total = total + np.sum(leaf)
        return tree_util.tree_unflatten(tree_util.tree_structure(params), leaves), total

    params = {"w": np.ones((2, 2)), "b": (np.arange(2.0), None)}
    tree, total = numbax.jit(f)(params, 3.0)
    assert np.allclose(tree["w"], 3.0) and np.allclose(tree["b"][0], [0.0, 3.0]) and tree["b"][1] is None
    assert total == pytest.approx(15.0)


def test_scan_without_xs_or_length_is_an_error_at_the_users_line():
    def f(x):
        return lax.scan(lambda c, _: (c, c), x)

    with pytest.raises(numbax.NumbaxSpecializationError, match="needs `xs` or `length`") as info:
        numbax.jit(f)(1.0)
    assert "test_lax.py" in str(info.value)


def test_cond_with_keyword_operands_is_an_error():
    def f(x):
        return lax.cond(x > 0, lambda u: u, lambda u: -u, operand=x)

    with pytest.raises(numbax.NumbaxSpecializationError, match="operands positionally"):
        numbax.jit(f)(1.0)


def test_calling_numbax_internals_in_compiled_code_is_a_clear_error():
    def f(x):
        return numbax.test_util.check_grads(np.sin, (x,), 1)

    with pytest.raises(numbax.NumbaxSpecializationError, match="cannot call"):
        numbax.jit(f)(1.0)


def test_scan_over_zero_elements_in_python_says_why():
    with pytest.raises(ValueError, match="zero elements"):
        lax.scan(lambda c, x: (c, x), 0.0, np.zeros((0, 3)))


def numbers_carried(L):
    """A carry that enters the loop as Python numbers, in a tuple and in a dict, and leaves as run-time values."""

    def f(x):
        v, n = L.while_loop(lambda s: s[0] < 10.0, lambda s: (s[0] * x, s[1] + 1), (1.0, 0))
        a, b = L.fori_loop(0, 3, lambda i, s: (s[0] * x + i, {"b": s[1]["b"] + x * x}), (1.0, {"b": 0.0}))
        return v + n + a + b["b"]

    return f


def pair_summed_in_a_python_loop(x):
    acc = (0.0, 1.0)
    for i in range(x.shape[0]):
        acc = (acc[0] + x[i], acc[1] * x[i])
    return acc[0] + acc[1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_carry_of_python_numbers_matches_jax(backend):
    """``(1.0, 0)`` as a loop's carry is given run-time variables before the loop, as a lone number is, not
    refused as a carry that changes its structure."""
    ours, theirs = numbers_carried(lax), jax.jit(numbers_carried(jax.lax))
    for x in (1.5, 2.5):
        np.testing.assert_allclose(numbax.jit(ours, backend=backend)(x), theirs(x), rtol=1e-13)
        np.testing.assert_allclose(numbax.grad(ours, backend=backend)(x), jax.jacfwd(numbers_carried(jax.lax))(x),
                                   rtol=1e-13)
    x = np.array([0.5, 2.0, -1.5])
    np.testing.assert_allclose(numbax.jit(pair_summed_in_a_python_loop, backend=backend)(x), 1.0 - 1.5, rtol=1e-15)
    np.testing.assert_allclose(numbax.grad(pair_summed_in_a_python_loop, backend=backend)(x),
                               1.0 + np.array([-3.0, -0.75, 1.0]), rtol=1e-15)

def carry_updated_by_where(x):
    def body(i, state):
        best, count = state
        better = x[i] > best
        return np.where(better, x[i], best), count + better

    return lax.fori_loop(0, x.shape[0], body, (x[0], 0))


def test_a_number_carried_through_where_matches_jax():
    """np.where of numbers is the selected number (``rt.where``): a loop carry entering as a number holds it (it
    was Numba's "Cannot unify float64 and array(float64, 0d, C)", stopping random-walk Metropolis)."""
    x = np.array([0.5, 2.0, -1.0, 3.0, 1.0])
    best, count = numbax.jit(carry_updated_by_where)(x)
    want = jax.jit(lambda x: jax.lax.fori_loop(0, 5, lambda i, s: (jnp.where(x[i] > s[0], x[i], s[0]),
                                                                   s[1] + (x[i] > s[0])), (x[0], 0)))(x)
    assert float(best) == float(want[0]) and int(count) == int(want[1])
