"""Golden-source tests for reverse mode: the generated adjoint of a few representative programs.

Each expected function is the code ``numbax.grad`` must generate, written out as a real function
(comments are not compared; the test checks separately that ``# grad of:`` comments are there).
The programs live in ``tests/fixtures/grad_programs.py``.
"""
import inspect
import os
import sys
import textwrap

import gast
import numpy as np
import pytest

import numbax
from numbax import runtime as rt  # noqa: F401  (the expected functions read like generated code)
from numbax.ast_passes.unparse import unparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures import grad_programs  # noqa: E402



def expected_grad_predict_loss(w, x, y):
    pred = np.tanh(x @ w)
    # grad_programs.py:7: return np.mean((pred - y) ** 2)
    _t2 = pred - y
    _t3 = _t2 ** 2
    _t4 = np.mean(_t3)
    # grad of: return np.mean((pred - y) ** 2)
    dt4 = 1.0
    dt3 = rt.unreduce(dt4, _t3, None, False) * (1 / _t3.size)
    dt2 = rt.unbroadcast(dt3 * 2 * _t2, _t2)
    dpred = rt.unbroadcast(dt2, pred)
    # grad of: pred = np.tanh(x @ w)
    dt1 = dpred * (1.0 - pred * pred)
    dw = dt1 @ x
    return (_t4, dw)


def expected_grad_euler(y0, k, n):
    y_tape = []
    t3_tape = []
    t2_tape = []
    y = y0
    # grad_programs.py:13: y = y + 0.1 * (-k * y)
    _t1 = -k
    trips = 0
    for i in range(n):
        y_tape.append(y)
        # grad_programs.py:13: y = y + 0.1 * (-k * y)
        _t2 = _t1 * y
        t2_tape.append(_t2)
        _t3 = 0.1 * _t2
        t3_tape.append(_t3)
        y = y + _t3
        trips = trips + 1
    y_1 = y
    trips_1 = trips
    # grad_programs.py:14: return np.sum(y)
    _t4 = np.sum(y)
    # grad of: return np.sum(y)
    dt4 = 1.0
    dy = rt.unreduce(dt4, y_1, None, False)
    # grad of: for i in range(n):
    dt1 = 0.0
    for step in range(trips_1):
        t3 = t3_tape.pop()
        t2 = t2_tape.pop()
        y_2 = y_tape.pop()
        # grad of: y = y + 0.1 * (-k * y)
        dy_out_2 = dy
        dy = rt.unbroadcast(dy_out_2, y_2)
        dt3 = rt.unbroadcast(dy_out_2, t3)
        dt2 = rt.unbroadcast(dt3 * 0.1, t2)
        dt1 = dt1 + np.sum(dt2 * y_2)
        dy = dy + rt.unbroadcast(dt2 * _t1, y_2)
    dk = -dt1
    # grad of: y = y0
    dy0 = dy
    return (_t4, dy0, dk)


def expected_grad_newton_sqrt(a, tol):
    t5_tape = np.empty(16, np.float64)
    t5_count = 0
    x_tape = np.empty(16, np.float64)
    x_count = 0
    run_tape = np.empty(16, np.bool_)
    run_count = 0
    x = a
    # grad_programs.py:19: while np.abs(x * x - a) > tol:
    go = True
    trips = 0
    while go:
        run = True
        cond = not np.abs(x * x - a) > tol
        if cond:
            run = False
            go = False
        if run_count == len(run_tape):
            run_tape = rt.grow(run_tape)
        run_tape[run_count] = run
        run_count = run_count + 1
        if run:
            if x_count == len(x_tape):
                x_tape = rt.grow(x_tape)
            x_tape[x_count] = x
            x_count = x_count + 1
            # grad_programs.py:20: x = 0.5 * (x + a / x)
            _t5 = a / x
            if t5_count == len(t5_tape):
                t5_tape = rt.grow(t5_tape)
            t5_tape[t5_count] = _t5
            t5_count = t5_count + 1
            x = 0.5 * (x + _t5)
        trips = trips + 1
    trips_1 = trips
    # grad of: return x
    dx = 1.0
    # grad of: while np.abs(x * x - a) > tol:
    da = 0.0
    for step in range(trips_1):
        run_count, run_1 = (run_count - 1, run_tape[run_count - 1])
        if run_1:
            # grad of: x = 0.5 * (x + a / x)
            dt6 = dx * 0.5
            dx = dt6
            t5_count, t5 = (t5_count - 1, t5_tape[t5_count - 1])
            x_count, x_1 = (x_count - 1, x_tape[x_count - 1])
            da = da + dt6 / x_1
            dx = dx + -dt6 * t5 / x_1
    # grad of: x = a
    da = da + dx
    return (x, da)


def expected_grad_relu_sum(x):
    s = np.sum(x)
    # grad_programs.py:26: if s > 0:
    _t1 = s > 0
    if _t1:
        out = s * 2.0
    else:
        out = -s
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
    return (out, dx)


def expected_grad_rosenbrock(x):
    # grad_programs.py:34: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    _t1 = x[1:]
    _t2 = x[:-1]
    _t3 = _t2 ** 2
    _t4 = _t1 - _t3
    _t5 = _t4 ** 2
    _t6 = 100.0 * _t5
    _t7 = x[:-1]
    _t8 = 1.0 - _t7
    _t9 = _t8 ** 2
    _t10 = _t6 + _t9
    _t11 = np.sum(_t10)
    # grad of: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    dt11 = 1.0
    dt10 = rt.unreduce(dt11, _t10, None, False)
    dt6 = rt.unbroadcast(dt10, _t6)
    dt9 = rt.unbroadcast(dt10, _t9)
    dt8 = rt.unbroadcast(dt9 * 2 * _t8, _t8)
    dt7 = rt.unbroadcast(-dt8, _t7)
    dx = rt.zeros_like(x)
    dx_view = dx[:-1]
    dx_view += dt7
    dt5 = rt.unbroadcast(dt6 * 100.0, _t5)
    dt4 = rt.unbroadcast(dt5 * 2 * _t4, _t4)
    dt1 = rt.unbroadcast(dt4, _t1)
    dt3 = rt.unbroadcast(-dt4, _t3)
    dt2 = rt.unbroadcast(dt3 * 2 * _t2, _t2)
    dx_view_1 = dx[:-1]
    dx_view_1 += dt2
    dx_view_2 = dx[1:]
    dx_view_2 += dt1
    return (_t11, dx)


CASES = [
    ("predict_loss", 0, lambda: (np.ones(3), np.ones((4, 3)), np.ones(4))),
    ("euler", (0, 1), lambda: (np.ones(3), 0.5, 10)),
    ("newton_sqrt", 0, lambda: (2.0, 1e-9)),
    ("relu_sum", 0, lambda: (np.ones(3),)),
    ("rosenbrock", 0, lambda: (np.linspace(-1.0, 1.5, 5),)),
]


def _function(text: str, name: str) -> str:
    node = next(n for n in gast.parse(text).body if isinstance(n, gast.FunctionDef))
    node.name = name
    return unparse(node)


@pytest.mark.parametrize("name,argnums,make_args", CASES, ids=[c[0] for c in CASES])
def test_generated_adjoint_matches_golden(name, argnums, make_args):
    fn = getattr(grad_programs, name)
    source = numbax.grad(fn, argnums=argnums, backend="python").lower_source(*make_args())
    expected = textwrap.dedent(inspect.getsource(globals()[f"expected_grad_{name}"]))
    assert _function(source, "f") == _function(expected, "f")
    assert "# grad of: " in source


@pytest.mark.parametrize("name,argnums,make_args", CASES, ids=[c[0] for c in CASES])
def test_golden_adjoint_computes_the_gradient(name, argnums, make_args):
    """The pinned code is also right: it agrees with central differences."""
    fn = getattr(grad_programs, name)
    args = make_args()
    nums = (argnums,) if isinstance(argnums, int) else argnums
    out = globals()[f"expected_grad_{name}"](*args)
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
        np.testing.assert_allclose(out[1 + position], numeric, rtol=1e-5, atol=1e-7)
