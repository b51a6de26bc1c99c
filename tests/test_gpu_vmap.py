"""``vmap`` on the GPU backend, in Numba's CUDA simulator: a function of numbers per example is one kernel,
each thread running one example's whole body, and agrees with the CPU backend (structure, dtypes, values:
rtol 1e-12, 1e-5 for float32); examples holding arrays run in turn, each one's array code as kernels; what
neither covers is refused at the user's line.

The programs are the vmap corpus's cases that are numbers per example (tests/test_vmap.py) and the loops the
GPU backend is for: an ODE integrator, a Newton solve, a count of iterations. Sizes stay tiny: the simulator
runs each thread in Python.
"""
import inspect
import os
import sys

import numpy as np
import pytest

import numbax
from numbax import tree_util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import test_vmap  # noqa: E402  (the vmap corpus)

HERE = os.path.abspath(__file__)


def ode(y0, k, steps):
    y = y0
    dt = 0.01
    for _ in range(steps):
        y = y + dt * (-k * y + np.sin(y))
    return y


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12:
        x = x - (x * x - a) / (2.0 * x)
    return x, x * 2.0


def iterations(v, limit):
    n = 0
    while v < limit:
        v = v * 2.0 + 1.0
        n += 1
    return {"n": n, "v": v}


def logistic_path(r, x0, steps):
    x = x0
    top = 0.0
    for _ in range(steps):
        x = r * x * (1.0 - x)
        if x > top:
            top = x
        elif x < 0.05:
            break
    return top


def float32_step(x, s):
    y = x * np.float32(0.5) + s
    return np.tanh(y) * 2.0


def piecewise(x):
    if x > 0.0 and x < 1.0:
        return x * x
    return np.exp(-abs(x)) + np.maximum(x, 0.5)


def constant_and_value(x):
    return x * 2.0, 3.0


V = np.linspace(-1.5, 2.0, 5)
CORPUS = {c.id: c for c in test_vmap.CASES}
SCALAR_CORPUS = ("elementwise_rows_of_scalars", "while_loop", "scalar_examples")  # numbers per example
CASES = [
    ("ode", ode, (np.linspace(0.1, 1.0, 5), np.linspace(1.0, 2.0, 5), 20), (0, 0, None), 0),
    ("newton_sqrt", newton_sqrt, (np.linspace(1.0, 3.0, 4),), 0, 0),
    ("iterations_int_and_dict", iterations, (np.array([0.5, 3.0, 12.0, 1.0]), 20.0), (0, None), 0),
    ("logistic_path_break", logistic_path, (np.linspace(2.5, 3.9, 4), 0.3, 30), (0, None, None), 0),
    ("float32", float32_step, (np.linspace(0, 1, 5, dtype=np.float32), 1.5), (0, None), -1),
    ("piecewise_bool_ops", piecewise, (V,), 0, 0),
    ("constant_output_broadcast", constant_and_value, (V,), 0, 0),
    ("negative_in_axes", newton_sqrt, (np.linspace(1.0, 3.0, 4),), -1, -1),
] + [(f"corpus.{name}", CORPUS[name].fn, CORPUS[name].args, CORPUS[name].in_axes, CORPUS[name].out_axes)
     for name in SCALAR_CORPUS]


def assert_agrees(got, expected):
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected)
    for e, g in zip(tree_util.tree_leaves(expected), tree_util.tree_leaves(got)):
        e, g = np.asarray(e), np.asarray(g)
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        if e.dtype.kind in "biu":
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=1e-5 if e.dtype == np.float32 else 1e-12)


def _on_device(out):
    for leaf in tree_util.tree_leaves(out):
        assert not isinstance(leaf, np.ndarray), f"a result on the host: {leaf!r}"
    return numbax.device_get(out)


@pytest.mark.parametrize("name, fn, args, in_axes, out_axes", CASES, ids=[c[0] for c in CASES])
def test_vmap_on_the_gpu_agrees_with_the_cpu_backend(gpu, name, fn, args, in_axes, out_axes):
    expected = numbax.vmap(fn, in_axes, out_axes)(*args)
    got = _on_device(numbax.vmap(fn, in_axes, out_axes, backend="gpu")(*args))
    assert_agrees(got, expected)
    source = numbax.source(numbax.vmap(fn, in_axes, out_axes, backend="gpu"), *args)
    assert source.count("@cuda.jit") == 1, source  # one kernel: each thread runs an example's whole body


def rows(x):
    return np.sum(x * x)


def constant(x, y):
    v = 0.5
    return 0.5 + v


# arrays per example (the rest of the vmap corpus agrees too: benchmarks/gpu_corpus_status.py): blocks of
# examples' rows written by a ufunc's ``out`` (affine_shared_weights), ``rt.stack_rows`` (out_axes_prefix_with_none)
# and a result that depends on no example (``rt.stack_buffer`` of a number; found by the fuzzer)
IN_TURN = [("rows", rows, (np.arange(6.0).reshape(3, 2),), 0, 0),
           ("constant", constant, (np.ones((3, 4)), np.ones(3)), 0, 0)] + \
    [(f"corpus.{name}", CORPUS[name].fn, CORPUS[name].args, CORPUS[name].in_axes, CORPUS[name].out_axes)
     for name in ("affine_shared_weights", "out_axes_prefix_with_none")]


@pytest.mark.parametrize("name, fn, args, in_axes, out_axes", IN_TURN, ids=[c[0] for c in IN_TURN])
def test_examples_holding_arrays_run_in_turn_and_agree(gpu, name, fn, args, in_axes, out_axes):
    """An example holding arrays (a row of a mapped matrix, a shared vector) is array code: the examples run one
    after another, as on the CPU, each one's statements as kernels."""
    expected = numbax.vmap(fn, in_axes, out_axes)(*args)
    assert_agrees(_on_device(numbax.vmap(fn, in_axes, out_axes, backend="gpu")(*args)), expected)


def test_jit_of_vmap_and_device_arrays(gpu):
    y0, k = np.linspace(0.1, 1.0, 5), np.linspace(1.0, 2.0, 5)
    expected = numbax.vmap(ode, (0, 0, None))(y0, k, 20)
    jitted = numbax.jit(numbax.vmap(ode, (0, 0, None)), static_argnums=2, backend="gpu")
    assert_agrees(_on_device(jitted(y0, k, 20)), expected)
    on_gpu = numbax.device_put((y0, k), gpu)
    assert_agrees(_on_device(numbax.vmap(ode, (0, 0, None))(*on_gpu, 20)), expected)


def count_all(x, limit):
    counted = numbax.vmap(iterations, in_axes=(0, None))(x, limit)
    return counted["n"] * 2, counted["v"] + limit


def test_vmap_inside_a_function_jitted_for_the_gpu(gpu):
    x = np.array([0.5, 3.0, 12.0, 1.0])
    assert_agrees(_on_device(numbax.jit(count_all, backend="gpu")(x, 20.0)), numbax.jit(count_all)(x, 20.0))


def test_axis_size_with_nothing_mapped(gpu):
    fn = numbax.vmap(lambda a: a * 2.0 + 1.0, in_axes=None, axis_size=3, backend="gpu")
    assert_agrees(_on_device(fn(1.5)), np.full(3, 4.0))


def test_jax_errors_of_the_call_are_kept(gpu):
    with pytest.raises(ValueError, match="inconsistent sizes"):
        numbax.vmap(ode, (0, 0, None), backend="gpu")(np.ones(3), np.ones(4), 2)


def indexes_an_invariant(x):
    acc = np.zeros(2)
    return acc[0] + x


def allocates(x, n):
    acc = np.full(n, x)  # a size known when the kernel compiles is a thread's local array (test_gpu_thread_arrays)
    return acc[0] + acc[1]


def carried_out_axes_none(x):
    return x * 2.0


def _line(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("fn, args, kwargs, line, construct", [
    (indexes_an_invariant, (np.ones(3),), {}, "acc[0]", "indexing `acc[0]`"),
    (allocates, (np.ones(3), 2), {"in_axes": (0, None)}, "np.full", "whose shape is not written as numbers"),
    (carried_out_axes_none, (np.ones(3),), {"out_axes": None}, "def carried_out_axes_none",
     "out_axes=None for an output computed per example"),
], ids=lambda v: getattr(v, "__name__", None))
def test_what_is_not_numbers_per_example_is_refused_at_the_users_line(gpu, fn, args, kwargs, line, construct):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.vmap(fn, backend="gpu", **kwargs)(*args)
    error = info.value
    assert construct in error.message, error.message
    assert error.origin is not None and error.origin.filename == HERE
    assert error.origin.lineno == _line(fn, line), error
    assert "CPU backend" in error.hint


def nested(x):
    return numbax.vmap(lambda a: a * x)(np.ones(2))


def test_a_vmap_inside_one_examples_body_is_refused(gpu):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet"):
        numbax.vmap(nested, backend="gpu")(np.ones(3))


def test_a_refusal_with_no_line_of_the_users_left_is_at_the_def_line(gpu, monkeypatch):
    """Where the GPU lowering refuses code in which nothing of the user's is left to point at (all of it
    constants), the error is at the ``def`` line of the function compiled."""
    from numbax.backends.cuda import lower_on_use

    def refusing(module, avals, constants):
        raise numbax.NumbaxDeviceError("`rt.something(1.0)` is not supported by the GPU backend yet")

    def halves(x):
        return 0.5 + 0.5

    monkeypatch.setattr(lower_on_use, "legalize", refusing)
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.vmap(halves, backend="gpu")(np.ones((3, 4)))
    assert info.value.origin.lineno == inspect.getsourcelines(halves)[1]
    assert info.value.origin.filename == HERE and "def halves" in str(info.value)
