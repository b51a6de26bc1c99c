"""``vmap`` on the GPU backend of examples that hold small arrays (``backends.cuda.lower.thread_arrays``), in
Numba's CUDA simulator: a vector-state ODE, a Runge-Kutta step, a Newton solve with a 2x2 Jacobian, and
``jvp`` and ``grad`` of them per thread (reverse mode's tapes in device memory), against the CPU backend
(rtol 1e-12), JAX (float64) and central differences; what has no size known when the kernel compiles, or
would share memory NumPy shares, is refused at the user's line.

Sizes stay tiny: the simulator runs each thread in Python, and each CPU program compiles once (module scope).
"""
import ast
import inspect
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)
from test_gpu_vmap import assert_agrees  # noqa: E402

HERE = os.path.abspath(__file__)
Y0, K, STEPS = np.array([0.1, 0.6, 1.0]), np.array([1.0, 1.5, 2.0]), 8


def ode(y0, k, steps):
    y = np.zeros(3)
    y[0] = y0
    y[1] = 2.0 * y0
    y[2] = 1.0
    for _ in range(steps):
        y = y + 0.05 * (-k * y + np.sin(y))
    return np.sum(y ** 2)


def ode_jax(y0, k, steps):
    y = jnp.array([y0, 2.0 * y0, 1.0])
    for _ in range(steps):
        y = y + 0.05 * (-k * y + jnp.sin(y))
    return jnp.sum(y ** 2)


def rk4(y0, k, steps):
    y = rk4_state(y0, k, steps)
    return np.mean(y) + y @ y, np.linalg.norm(y)


def rk4_state(y0, k, steps):
    y = np.zeros(3)
    y[0] = y0
    y[1] = 1.0 - y0
    y[2] = 0.5
    dt = 0.1
    for _ in range(steps):
        k1 = -k * y + np.sin(y)
        k2 = -k * (y + 0.5 * dt * k1) + np.sin(y + 0.5 * dt * k1)
        k3 = -k * (y + 0.5 * dt * k2) + np.sin(y + 0.5 * dt * k2)
        k4 = -k * (y + dt * k3) + np.sin(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y


def newton(a, b):
    x = np.ones(2)
    jac = np.zeros((2, 2))
    f = np.zeros(2)
    steps = 0
    while steps < 30:
        f[0] = x[0] * x[0] + x[1] - a
        f[1] = x[0] + x[1] * x[1] - b
        jac[0, 0] = 2.0 * x[0]
        jac[0, 1] = 1.0
        jac[1, 0] = 1.0
        jac[1, 1] = 2.0 * x[1]
        det = jac[0, 0] * jac[1, 1] - jac[0, 1] * jac[1, 0]
        dx0 = (jac[1, 1] * f[0] - jac[0, 1] * f[1]) / det
        dx1 = (jac[0, 0] * f[1] - jac[1, 0] * f[0]) / det
        x[0] -= dx0
        x[1] -= dx1
        steps += 1
        if abs(dx0) + abs(dx1) < 1e-13:
            break
    return x[0], x[1], steps


def shrink(v):
    y = np.zeros((2, 2))
    y[0, 0] = v
    y[1, 1] = 3.0
    y[0, 1] = -1.0
    y += 0.5
    while np.sum(y * y) > 1.0:
        y = y / np.max(np.abs(y)) * 0.7
    return y[1, 0] - np.min(y) + np.sum(y > 0.1)


def in_place(x):
    y = np.full(2, x)
    y += 1.0
    y *= y
    y -= np.sum(y) * 0.1
    y[0] **= 2
    w = np.where(y > 1.0, y, -2.0 * y)
    return y[0] - y[1] + np.sum(w)


def element_updates(x):
    y = np.zeros(2)
    y[0] = x
    for _ in range(3):
        y[1] = y[1] + y[0]
        y[0] = y[0] * 0.5
    return np.sum(y * y)


def ode_tangent(y0, k, steps):
    return numbax.jvp(lambda kk: ode(y0, kk, steps), (k,), (1.0,))[1]


def ode_tangent_jax(y0, k, steps):
    return jax.jvp(lambda kk: ode_jax(y0, kk, steps), (k,), (1.0,))[1]


def midpoint_energy(y0, k, steps):
    y = np.full(3, y0)
    y[2] = 0.5
    for _ in range(steps):
        half = y + 0.05 * (np.sin(y) - k * y)
        y = y + 0.1 * (np.sin(half) - k * half)
    return np.sum(y ** 2)


CASES = [
    ("ode", ode, (Y0, K, STEPS), (0, 0, None)),
    ("rk4_mean_dot_norm", rk4, (Y0, K, STEPS), (0, 0, None)),
    ("newton_2x2", newton, (np.array([1.5, 2.0, 3.0]), np.array([2.0, 2.5, 3.0])), 0),
    ("shrink_2x2_while_max_min", shrink, (np.array([0.2, 2.0, -4.0]),), 0),
    ("jvp_ode", ode_tangent, (Y0, K, STEPS), (0, 0, None)),
    ("value_and_grad_ode", numbax.value_and_grad(ode, argnums=(0, 1)), (Y0, K, STEPS), (0, 0, None)),
    ("grad_midpoint", numbax.grad(midpoint_energy, argnums=1), (Y0, K, STEPS), (0, 0, None)),
    ("grad_in_place_updates_where", numbax.grad(in_place), (np.array([0.3, 0.8, 1.7]),), 0),
    ("grad_element_updates_in_a_loop", numbax.grad(element_updates), (np.array([0.5, 1.0]),), 0),
]


@pytest.mark.parametrize("name, fn, args, in_axes", CASES, ids=[c[0] for c in CASES])
def test_arrays_per_example_agree_with_the_cpu_backend(gpu, name, fn, args, in_axes):
    got = numbax.device_get(numbax.vmap(fn, in_axes, backend="gpu")(*args))
    assert_agrees(got, numbax.vmap(fn, in_axes)(*args))


@pytest.mark.parametrize("fn, theirs", [(ode, ode_jax), (ode_tangent, ode_tangent_jax),
                                        (numbax.grad(ode, argnums=1), jax.grad(ode_jax, argnums=1))],
                         ids=["value", "jvp", "grad"])
def test_vector_state_ode_agrees_with_jax(gpu, fn, theirs):
    got = numbax.device_get(numbax.vmap(fn, (0, 0, None), backend="gpu")(Y0, K, STEPS))
    expected = jax.vmap(lambda y0, k: theirs(y0, k, STEPS))(Y0, K)
    np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-12)


def test_derivatives_per_thread_agree_with_central_differences(gpu):
    values = numbax.vmap(ode, (0, 0, None), backend="gpu")
    h = 1e-5
    central = (numbax.device_get(values(Y0, K + h, STEPS)) - numbax.device_get(values(Y0, K - h, STEPS))) / (2 * h)
    for fn in (ode_tangent, numbax.grad(ode, argnums=1)):
        got = numbax.device_get(numbax.vmap(fn, (0, 0, None), backend="gpu")(Y0, K, STEPS))
        np.testing.assert_allclose(got, central, rtol=1e-7)


def two_states(y0):
    y = np.zeros(2)
    y[0] = y0
    y = y * 2.0 + np.cos(y)
    return np.max(y) + y @ y


def _examples_1(out, y0, batch):
    """The golden kernel of ``vmap(two_states)`` (comments aside): never called, its names (``cuda``, ``gr``,
    ``math``) the generated module's."""
    for i in range(cuda.grid(1), batch, cuda.gridsize(1)):  # noqa: F821
        _t4 = cuda.local.array((2,), np.float64)  # noqa: F821
        _t5 = cuda.local.array((2,), np.float64)  # noqa: F821
        y = cuda.local.array((2,), np.float64)  # noqa: F821
        y0_1 = y0[i]
        for _j_1 in range(2):
            y[_j_1] = np.float64(0)
        y[0] = y0_1
        for _j_1 in range(2):
            _t4[_j_1] = y[_j_1] * 2.0
        for _j_1 in range(2):
            _t5[_j_1] = math.cos(y[_j_1])  # noqa: F821
        for _j_1 in range(2):
            y[_j_1] = _t4[_j_1] + _t5[_j_1]
        _r_1 = y[0]
        for _j_1 in range(2):
            _r_1 = gr.maximum(_r_1, y[_j_1])  # noqa: F821
        _r_2 = np.float64(0)
        for _j_1 in range(2):
            _r_2 = _r_2 + y[_j_1] * y[_j_1]
        out[i] = _r_1 + _r_2


def test_golden_kernel_with_local_arrays(gpu):
    source = numbax.source(numbax.vmap(two_states, backend="gpu"), np.ones(3))
    kernels = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.decorator_list]
    assert len(kernels) == 1, source
    kernels[0].decorator_list = []
    want = ast.parse(inspect.getsource(_examples_1)).body[0]
    want.body = want.body[1:]  # its docstring
    assert ast.unparse(kernels[0]) == ast.unparse(want), source
    assert "# test_gpu_thread_arrays.py:" in source, source  # each statement's user line


def grows(x):
    y = np.zeros(2)
    y[0] = x
    y[1] = 0.5
    while np.sum(y * y) < 4.0:
        y = y * y + 0.6
    return np.sum(y)


def grows_linearly(x):
    y = np.zeros(2)
    y[0] = x
    y[1] = 0.5
    while np.sum(y * y) < 4.0:
        y = y * 1.5 + 0.1
    return np.sum(y)


def sized_at_run_time(x, n):
    y = np.zeros(n)
    y[0] = x
    return np.sum(y)


def broadcast_between_shapes(x):
    a = np.zeros(3)
    a[0] = x
    b = np.ones((2, 3))
    b[0, 0] = x
    return np.sum(a + b)


def written_after_a_copy(x, steps):
    a = np.zeros(2)
    a[0] = x
    b = np.ones(2)
    for _ in range(steps):
        b = a
        a[1] = a[1] + 1.0
    return b[1]


def updated_after_a_copy(x, steps):
    a = np.zeros(2)
    a[0] = x
    b = np.ones(2)
    for _ in range(steps):
        b = a
        a += 1.0
    return b[1]


def slices(x):
    a = np.zeros(4)
    a[0] = x
    b = a[1:] + x
    return b[0]


def _line(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("fn, args, in_axes, line, construct", [
    (sized_at_run_time, (np.ones(2), 3), (0, None), "np.zeros(n)", "whose shape is not written as numbers"),
    (broadcast_between_shapes, (np.ones(2),), 0, "np.sum", "broadcasting an array of shape (3,)"),
    (written_after_a_copy, (np.ones(2), 3), (0, None), "a[1] = a[1]",
     "a write into an array per example that NumPy would share with `b`"),
    (updated_after_a_copy, (np.ones(2), 3), (0, None), "a += 1.0",
     "a write into an array per example that NumPy would share with `b`"),
    (slices, (np.ones(2),), 0, "a[1:]", "a part of an array per example"),
    (numbax.grad(grows), (np.array([0.5, 1.0]),), 0, "while np.sum",
     "reverse mode's record of an array per example in the loop"),
], ids=["sized_at_run_time", "broadcast", "written_after_a_copy", "updated_after_a_copy", "slices",
        "grad_of_a_while_loop"])
def test_what_a_thread_cannot_hold_is_refused_at_the_users_line(gpu, fn, args, in_axes, line, construct):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.vmap(fn, in_axes, backend="gpu")(*args)
    error = info.value
    assert construct in error.message, error.message
    assert error.origin is not None and error.origin.filename == HERE
    assert error.origin.lineno == _line(getattr(fn, "fun", fn), line), error


def test_a_while_loop_whose_gradient_records_nothing_per_trip_runs_on_the_gpu(gpu):
    """``np.zeros(2)`` has a known shape, so reverse mode through ``y = y * 1.5 + 0.1`` records no array per
    trip (only the trip count): the derivative is 1.5 to the number of trips (3 and 2 here)."""
    x = np.array([0.5, 1.0])
    expected = numbax.vmap(numbax.grad(grows_linearly))(x)
    np.testing.assert_allclose(expected, [1.5 ** 3, 1.5 ** 2], rtol=1e-14)
    assert_agrees(numbax.device_get(numbax.vmap(numbax.grad(grows_linearly), backend="gpu")(x)), expected)
