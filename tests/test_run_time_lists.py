"""Lists of run-time length in compiled code (comprehensions and generator expressions over a run-time
``range`` or array, ``append`` once per iteration of a run-time loop), held as the array of their items:
values against JAX (float64), gradients in both modes against JAX and central differences, second
derivatives where numbax's loops have them, and the refusals, at the user's line."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

X = np.array([0.3, -0.7, 1.1, 0.45])
W = np.array([0.5, -1.0, 2.0, 0.3])
N = 3  # a run-time argument for numbax, a Python int for JAX


def programs(m):
    """The same programs over NumPy (for numbax) and jax.numpy (the oracle)."""

    def stacked(x, w, n):
        ys = m.stack([m.sin(x[i]) * w for i in range(n)])
        return m.sum(ys * ys)

    def generator_sum(x, w, n):
        return sum(m.tanh(w[i] * x[i]) for i in range(1, n + 1, 2))

    def trajectory(x, w, n):
        path = [x]
        for i in range(n):
            x = m.cos(x) * w + 0.1 * i
            path.append(x)
        return m.sum(m.array(path) ** 2)

    def appended(x, w, n):
        out = []
        for i in range(n):
            y = m.sin(x * w[i])
            out.append(m.dot(y, x))
        return m.sum(m.asarray(out) * m.arange(1.0, n + 1.0))

    def over_rows(x, w, n):
        ys = [m.dot(w, row) ** 2 for row in m.outer(x, w)]
        total = 0.0
        for y in ys:
            total = total + y
        return total + ys[len(ys) - 1] * n + sum(ys, 1.0)

    return {f.__name__: f for f in (stacked, generator_sum, trajectory, appended, over_rows)}


NUMPY, JAX = programs(np), programs(jnp)
NAMES = sorted(NUMPY)


def _jax(name):
    return lambda x, w: JAX[name](x, w, N)


@pytest.mark.parametrize("name", NAMES)
def test_values_under_jit_are_jaxs(name):
    np.testing.assert_allclose(numbax.jit(NUMPY[name])(X, W, N), _jax(name)(X, W), rtol=1e-12)
    np.testing.assert_allclose(numbax.jit(NUMPY[name])(X, W, N + 1), JAX[name](X, W, N + 1), rtol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_reverse_mode_is_jaxs_and_central_differences(name):
    grads = numbax.grad(NUMPY[name], argnums=(0, 1))(X, W, N)
    for got, want in zip(grads, jax.grad(_jax(name), argnums=(0, 1))(X, W)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    h, e = 1e-6, np.eye(len(X))
    central = [(NUMPY[name](X + h * e[k], W, N) - NUMPY[name](X - h * e[k], W, N)) / (2 * h) for k in range(len(X))]
    np.testing.assert_allclose(grads[0], central, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", NAMES)
def test_forward_mode_is_jaxs(name):
    primal, tangent = numbax.jvp(lambda x, w: NUMPY[name](x, w, len(x) - 1), (X, W), (W, X))  # n at run time
    want = jax.jvp(_jax(name), (X, W), (W, X))
    np.testing.assert_allclose(primal, want[0], rtol=1e-12)
    np.testing.assert_allclose(tangent, want[1], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["stacked", "trajectory"])
def test_second_derivatives_forward_over_forward_are_jaxs(name):
    hessian = numbax.jacfwd(numbax.jacfwd(lambda x, w: NUMPY[name](x, w, len(x) - 1)))(X, W)
    np.testing.assert_allclose(hessian, jax.hessian(_jax(name))(X, W), rtol=1e-10, atol=1e-12)


def test_reverse_over_reverse_is_refused_not_wrong():
    """grad of grad through the loop that writes a list's rows: refused, as for any loop that saves arrays."""
    with pytest.raises(numbax.NumbaxDifferentiationError, match="higher-order derivative"):
        numbax.hessian(NUMPY["stacked"])(X, W, N)


def test_a_long_static_loop_makes_its_list_at_run_time_and_a_short_one_unrolls():
    def long(x):
        out = []
        for i in range(1500):
            out.append(x[i % 4] * i)
        return np.stack(out)

    def short(x):
        out = [x]
        for i in range(2):
            out.append(x * i)
        return out

    np.testing.assert_array_equal(numbax.jit(long)(X), [X[i % 4] * i for i in range(1500)])
    assert [list(v) for v in numbax.jit(short)(X)] == [list(X), list(X * 0), list(X)]


def empty_stack(x, n):
    return np.stack([x * i for i in range(n)])


def ragged(x, n):
    return np.stack([x[:i + 1] for i in range(n)])


@pytest.mark.parametrize("fun, error, message", [
    (empty_stack, numbax.NumbaxEmptyListError, "would be empty"),
    (ragged, numbax.NumbaxShapeError, r"an item of shape \(2,\) in a list of items of shape \(1,\)"),
])
def test_run_time_refusals_name_the_line(fun, error, message):
    with pytest.raises(error, match=message) as info:
        numbax.jit(fun)(X, 0 if fun is empty_stack else 3)
    assert info.value.origin.filename == __file__


def returned(x, n):
    return [x * i for i in range(n)]


def rows_of(x, n):
    return [x * i for i in range(n)]


def passed_on(x, n):
    return np.stack(rows_of(x, n))


def filtered(x, n):
    return np.stack([x * i for i in range(n) if i > 1])


def joined(x, n):
    return np.stack([x for i in range(n)] + [x])


def mixed_dtypes(x, n):
    out = [x]
    for i in range(n):
        out.append(i)
    return np.stack(out)


def read_while_growing(x, n):
    out = [x]
    for i in range(n):
        out.append(out[-1] * 2.0)
    return np.stack(out)


def leaves_early(x, n):
    out = []
    for i in range(n):
        if i > 2:
            break
        out.append(x)
    return np.stack(out)


def written_after_appending(x, n):
    row = np.zeros(2)
    out = []
    for i in range(n):
        row[0] = x[i]
        out.append(row)
    return np.stack(out)


def tuples_appended(x, n):
    out = [(x, x)]
    for i in range(n):
        out.append((x, x * i))
    return len(out)


def axis_one(x, n):
    return np.stack([x for i in range(n)], axis=1)


@pytest.mark.parametrize("fun, message", [
    (returned, "returned from a function"), (passed_on, "returned from a function"), (filtered, "a condition in a comprehension"), (joined, "`\\+` of a list"),
    (mixed_dtypes, "an item of dtype int64 and 0 dimensions appended to a list of items of dtype float64 and 1"),
    (read_while_growing, "`out` is used inside a loop"), (leaves_early, "may leave an iteration early"),
    (axis_one, "passed to `stack` with these arguments"), (written_after_appending, "written in place"),
    (tuples_appended, "a list whose items are not arrays or numbers"),
])
def test_what_a_run_time_list_cannot_do_is_refused_at_the_line(fun, message):
    with pytest.raises(numbax.NumbaxSpecializationError, match=message) as info:
        numbax.jit(fun)(X, 3)
    assert info.value.origin.filename == __file__
