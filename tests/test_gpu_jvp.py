"""``jvp`` and ``vjp`` of array programs on the GPU backend, in Numba's CUDA simulator: forward mode (and
``linearize``) and pullbacks run through the GPU lowering that ``grad`` uses (kernels, reductions, products, control flow in the host driver),
agrees with the CPU backend (structure, dtypes, values: rtol 1e-12) and leaves its results on the device; what the
lowering does not cover is refused at the user's line.

A sample of the jvp corpus (tests/test_jvp.py) runs here, small for the simulator; the whole corpus was run
against the CPU backend by hand (the report of issue 15). ``counted_while`` is the regression test of a fused
kernel that read a value its loop had already overwritten (``backends.cuda.lower.fusible``).
"""
import copy
import inspect
import os
import sys

import numpy as np
import pytest

import numbax
from numbax import tree_util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import test_jvp  # noqa: E402  (the jvp corpus)
from test_jvp import jax  # noqa: E402  (float0)

HERE = os.path.abspath(__file__)
CORPUS = {case.id: case for case in test_jvp.CASES}
SAMPLE = ("while_loops.counted_while", "linalg.quadratic_form", "reductions.sum_keepdims_normalize",
          "indexing.boolean_mask_runtime", "linalg.cholesky_log_det", "linalg.einsum_contractions",
          "linalg.tensordot_axes")


def _on_host(out):
    for leaf in tree_util.tree_leaves(out):
        assert not isinstance(leaf, np.ndarray), f"a result on the host: {leaf!r}"
    return numbax.device_get(out)


def _agree(got, expected):
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected)
    for e, g in zip(tree_util.tree_leaves(expected), tree_util.tree_leaves(got)):
        e, g = np.asarray(e), np.asarray(g)
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", SAMPLE)
def test_the_jvp_corpus_on_the_gpu_agrees_with_the_cpu_backend(gpu, name):
    case = CORPUS[name]
    args = case.args_factory()
    tangents = test_jvp._tangents(case, args)
    expected = numbax.jvp(case.fn, copy.deepcopy(args), tangents, has_aux=case.has_aux)
    got = numbax.jvp(case.fn, copy.deepcopy(args), tangents, has_aux=case.has_aux, backend="gpu")
    _agree(_on_host(got), expected)


def model(w, x):
    h = np.tanh(x * w) + 0.5 * w
    while np.max(np.abs(h)) > 1.0:
        h = h * 0.5
    return np.sum(h * h), h


W, X, T = np.linspace(-1.0, 2.0, 4), np.linspace(0.5, 1.5, 4), np.linspace(1.0, -1.0, 4)


def test_computation_follows_the_primals_and_tangents_onto_the_gpu(gpu):
    expected = numbax.jvp(model, (W, X), (T, np.zeros(4)), backend="python")
    on_gpu = numbax.device_put((W, X, T, np.zeros(4)), gpu)
    _agree(_on_host(numbax.jvp(model, on_gpu[:2], on_gpu[2:])), expected)
    out, f_jvp = numbax.linearize(model, W, X, backend="gpu")
    _agree(_on_host((out, f_jvp(T, np.zeros(4)))), expected)
    with pytest.raises(numbax.NumbaxDeviceError, match="`tangents` on the host"):
        numbax.jvp(model, on_gpu[:2], (T, np.zeros(4)))


def test_a_pullback_runs_where_its_primals_and_cotangents_are(gpu):
    cotangent = (2.0, np.linspace(0.0, 1.0, 4))
    _, pullback = numbax.vjp(model, W, X, backend="python")
    expected = pullback(cotangent)
    _, pullback = numbax.vjp(model, W, X, backend="gpu")
    _agree(_on_host(pullback(cotangent)), expected)
    on_gpu = numbax.device_put((W, X), gpu)
    _, pullback = numbax.vjp(model, *on_gpu)
    _agree(_on_host(pullback(numbax.device_put(cotangent, gpu))), expected)
    with pytest.raises(numbax.NumbaxDeviceError, match="`cotangent` on the host"):
        pullback(cotangent)


def picks(x, i):
    return np.sin(x[i]) * x[1:3]


def test_indexing_and_slicing_have_their_tangents_on_the_gpu(gpu):
    float0 = np.zeros((), jax.dtypes.float0)
    expected = numbax.jvp(picks, (W, -1), (T, float0), backend="python")
    _agree(_on_host(numbax.jvp(picks, (W, -1), (T, float0), backend="gpu")), expected)


def gathers(x, j):
    return np.sin(x[j]) * 2.0


def test_gathers_have_their_tangents_on_the_gpu(gpu):
    j = np.array([0, 2, 0])
    expected = numbax.jvp(gathers, (W, j), (T, np.zeros(3, jax.dtypes.float0)), backend="python")
    _agree(_on_host(numbax.jvp(gathers, (W, j), (T, np.zeros(3, jax.dtypes.float0)), backend="gpu")), expected)


def test_what_the_gpu_lowering_does_not_cover_is_refused_at_the_users_line(gpu):
    j = np.array([[0, 2]])
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.jvp(gathers, (W, j), (T, np.zeros((1, 2), jax.dtypes.float0)), backend="gpu")
    lines, first = inspect.getsourcelines(gathers)
    assert info.value.origin.filename == HERE and info.value.origin.lineno == first + 1
    assert "by other than 1-d integer arrays" in info.value.message and "CPU backend" in info.value.hint


def writes(x):
    x[0] = 0.5
    return x * x


def test_writing_into_a_host_argument_under_jvp_is_refused_at_the_users_line(gpu):
    x = W.copy()
    with pytest.raises(numbax.NumbaxDeviceError, match="writing into a host argument's array") as info:
        numbax.jvp(writes, (x,), (T,), backend="gpu")
    lines, first = inspect.getsourcelines(writes)
    assert info.value.origin.filename == HERE and info.value.origin.lineno == first + 1
    np.testing.assert_array_equal(x, W)
