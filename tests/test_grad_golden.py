"""Golden-source tests for reverse mode: the generated adjoint of a few representative programs.

Each expected function is the code ``numbax.grad`` must generate, written out as a real function
(comments are not compared; the test checks separately that ``# grad of:`` comments are there).
The programs live in ``tests/fixtures/grad_programs.py``.
"""
import inspect
import os
import sys
import textwrap

import numpy as np
import pytest

import numbax
from numbax import runtime as rt  # noqa: F401  (the expected functions read like generated code)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures import grad_programs  # noqa: E402
from fixtures.golden import function_text  # noqa: E402



def expected_grad_predict_loss(w, x, y):
    rt.assume_equal(x.shape[1], w.shape[0])
    rt.assume_equal(y.shape[0], x.shape[0])
    rt.check_contraction('grad_programs.py:6: @', 'ij,j->i', 'j', x, w)
    product = rt.matmul(x, w)
    # grad of: return np.mean((pred - y) ** 2)
    dt4 = 1.0
    divide = np.divide(1, product.size)
    dt3_j = dt4 * divide
    dt1 = np.empty(x.shape[0])
    for j in range(x.shape[0]):
        # grad_programs.py:6: pred = np.tanh(x @ w)
        pred_j = rt.tanh(product[j])
        # grad_programs.py:7: return np.mean((pred - y) ** 2)
        t2_j = pred_j - y[j]
        # grad of: return np.mean((pred - y) ** 2)
        dpred_j = dt3_j * 2 * t2_j
        # grad of: pred = np.tanh(x @ w)
        dt1_j = dpred_j * (1.0 - pred_j * pred_j)
        dt1[j] = dt1_j
    dw = rt.matmul(dt1, x)
    return dw


def expected_grad_euler(y0, k, n):
    row = 0
    y = y0
    # grad_programs.py:13: y = y + 0.1 * (-k * y)
    _t1 = -k
    y_rows = np.empty((len(range(n)), y0.shape[0]))
    trips = 0
    for i in range(n):
        rt.save_row(y_rows, row, y)
        trips = trips + 1
        row = row + 1
        y_1 = np.empty(y0.shape[0])
        for j in range(y0.shape[0]):
            # grad_programs.py:13: y = y + 0.1 * (-k * y)
            y_j = y[j] + 0.1 * (_t1 * y[j])
            y_1[j] = y_j
        y = y_1
    # grad of: return np.sum(y)
    dt4 = 1.0
    dy = rt.unreduce(dt4, y, None, False)
    # grad of: for i in range(n):
    dt1 = 0.0
    dt2 = np.empty(y0.shape[0])
    for step in range(trips):
        row = row - 1
        y_2 = y_rows[row]
        dy_1 = np.empty(y0.shape[0])
        for j_1 in range(y0.shape[0]):
            # grad of: y = y + 0.1 * (-k * y)
            dt2_j = dy[j_1] * 0.1
            dy_j = dy[j_1] + dt2_j * _t1
            dt2[j_1] = dt2_j
            dy_1[j_1] = dy_j
        dy = dy_1
        dt1 = dt1 + np.sum(dt2 * y_2)
    dk = -dt1
    # grad of: y = y0
    dy0 = dy
    return rt.arrays_out((dy0, dk))


def expected_grad_newton_sqrt(a, tol):
    tape = np.empty((16, 1))
    row = 0
    x = a
    # grad_programs.py:19: while np.abs(x * x - a) > tol:
    _t1 = x * x
    _t2 = _t1 - a
    _t3 = np.abs(_t2)
    _t4 = _t3 > tol
    go = _t4
    trips = 0
    while go:
        if row == len(tape):
            tape = rt.grow_rows(tape)
        tape[row, 0] = x
        # grad_programs.py:20: x = 0.5 * (x + a / x)
        rt.check_divisor(x, 'float division by zero', 'grad_programs.py:20:23')
        x = 0.5 * (x + a / x)
        # grad_programs.py:19: while np.abs(x * x - a) > tol:
        _t1 = x * x
        _t2 = _t1 - a
        _t3 = np.abs(_t2)
        _t4 = _t3 > tol
        go = _t4
        trips = trips + 1
        row = row + 1
    # grad of: return x
    dx = 1.0
    # grad of: while np.abs(x * x - a) > tol:
    da = 0.0
    for step in range(trips):
        row = row - 1
        x_1 = tape[row, 0]
        # grad_programs.py:20: x = 0.5 * (x + a / x)
        t5 = a / x_1
        # grad of: x = 0.5 * (x + a / x)
        dt6 = dx * 0.5
        dx = dt6
        da = da + dt6 / x_1
        dx = dx + -dt6 * t5 / x_1
    # grad of: x = a
    da = da + dx
    return rt.arrays_out(da)


def expected_grad_relu_sum(x):
    s = np.sum(x)
    # grad_programs.py:26: if s > 0:
    _t1 = s > 0
    # grad of: return out
    dout = 1.0
    # grad of: if s > 0:
    if _t1:
        # grad of: out = s * 2.0
        ds = dout * 2.0
    else:
        # grad of: out = -s
        ds = -dout
    # grad of: s = np.sum(x)
    dx = rt.unreduce(ds, x, None, False)
    return dx


def expected_grad_rosenbrock(x):
    # grad of: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    dt11 = 1.0
    dx = rt.zeros_like(x)
    dt5_j = dt11 * 100.0
    for j in range(x.shape[0] - 1):
        # grad_programs.py:34: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t4_j = x[j + 1] - x[j] ** 2
        t8_j = 1.0 - x[j]
        # grad of: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        dt8_j = dt11 * 2 * t8_j
        dt7_j = -dt8_j
        dx[j] += dt7_j
        dt4_j = dt5_j * 2 * t4_j
        dt3_j = -dt4_j
        dt2_j = dt3_j * 2 * x[j]
        dx[j] += dt2_j
        dx[j + 1] += dt4_j
    return dx



def expected_grad_rest_sum(a, rest_0, rest_1):
    rt.assume_equal(rest_0.shape[0], a.shape[0])
    rt.assume_equal(rest_1.shape[0], a.shape[0])
    # grad of: def rest_sum(a, *rest):
    dt1 = 1.0
    # grad of: return s * len(rest)
    dt8 = dt1 * 2
    drest_1 = np.empty(a.shape[0])
    for j in range(a.shape[0]):
        # grad_programs.py:40: s = s + np.sum(np.sin(a * r))
        t6_j = a[j] * rest_1[j]
        # grad of: s = s + np.sum(np.sin(a * r))
        dt6_j = dt8 * np.cos(t6_j)
        drest_1_j = dt6_j * a[j]
        drest_1[j] = drest_1_j
    return drest_1


CASES = [
    ("predict_loss", 0, lambda: (np.ones(3), np.ones((4, 3)), np.ones(4))),
    ("euler", (0, 1), lambda: (np.ones(3), 0.5, 10)),
    ("newton_sqrt", 0, lambda: (2.0, 1e-9)),
    ("relu_sum", 0, lambda: (np.ones(3),)),
    ("rosenbrock", 0, lambda: (np.linspace(-1.0, 1.5, 5),)),
    # ``*rest``: its arguments as passed are parameters of their own (``rest_1`` differentiated, argnums=2)
    ("rest_sum", 2, lambda: (np.linspace(0.1, 0.5, 3), np.ones(3), np.linspace(-1.0, 1.0, 3))),
]


@pytest.mark.parametrize("name,argnums,make_args", CASES, ids=[c[0] for c in CASES])
def test_generated_adjoint_matches_golden(name, argnums, make_args):
    fn = getattr(grad_programs, name)
    source = numbax.grad(fn, argnums=argnums, backend="python").lower_source(*make_args())
    expected = textwrap.dedent(inspect.getsource(globals()[f"expected_grad_{name}"]))
    assert function_text(source, "f") == function_text(expected, "f")
    assert "# grad of: " in source


@pytest.mark.parametrize("name,argnums,make_args", CASES, ids=[c[0] for c in CASES])
def test_golden_adjoint_computes_the_gradient(name, argnums, make_args):
    """The pinned code is also right: it agrees with central differences."""
    fn = getattr(grad_programs, name)
    args = make_args()
    nums = (argnums,) if isinstance(argnums, int) else argnums
    out = globals()[f"expected_grad_{name}"](*args)
    grads = (out,) if isinstance(argnums, int) else out
    for position, index in enumerate(nums):
        x = np.asarray(args[index], dtype=float)
        numeric = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            step = np.zeros_like(x)
            step[i] = 1e-6
            hi = list(args)
            lo = list(args)
            hi[index] = x + step if x.shape else float(x + step)
            lo[index] = x - step if x.shape else float(x - step)
            numeric[i] = (fn(*hi) - fn(*lo)) / 2e-6
        np.testing.assert_allclose(grads[position], numeric, rtol=1e-5, atol=1e-7)
