"""Jacobians of array programs on the GPU backend, in Numba's CUDA simulator: ``jacfwd``, ``jacrev`` and
``hessian`` run the sweep's columns (rows) one after another in the host driver, each one's forward (reverse)
mode as kernels; they agree with the CPU backend's code (run uncompiled, ``backend="python"``: rtol 1e-12) and
leave their results on the device. A reshape of a strided view is NumPy's view where its strides allow one."""
import numpy as np
import pytest

import numbax
from numbax import tree_util


def layer(w, b, x):
    return np.tanh(x @ w + b) * np.sum(b ** 2)


def readout(w, b, x):
    return np.sum(layer(w, b, x), axis=0)


def energy(x):
    return np.sum(np.sin(x) * x[::-1]) + np.mean(x) ** 2


W = np.array([[0.3, -0.2], [0.5, 0.1]])
B = np.array([0.2, -0.4])
X = np.array([[1.0, 0.5], [-0.5, 2.0], [0.3, -1.2]])


def _agree(got, expected):
    for leaf in tree_util.tree_leaves(got):
        assert not isinstance(leaf, np.ndarray), f"a result on the host: {leaf!r}"
    got = numbax.device_get(got)
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected)
    for e, g in zip(tree_util.tree_leaves(expected), tree_util.tree_leaves(got)):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("jacobian, fn", [(numbax.jacfwd, readout), (numbax.jacrev, layer)],
                         ids=lambda v: v.__name__)
def test_jacobians_on_the_gpu_agree_with_the_cpu_backend(gpu, jacobian, fn):
    expected = jacobian(fn, argnums=(0, 1), backend="python")(W, B, X)
    _agree(jacobian(fn, argnums=(0, 1), backend="gpu")(W, B, X), expected)


def test_the_hessian_follows_its_argument_onto_the_gpu(gpu):
    x = np.array([0.3, -0.5, 0.8, 1.1])
    _agree(numbax.hessian(energy)(numbax.device_put(x, gpu)), numbax.hessian(energy, backend="python")(x))


def overlapping(x):
    y = x * 1.0
    y += y[::-1]  # NumPy reads a buffered copy of y[::-1]: so does the GPU backend
    return y


def test_an_update_by_a_value_that_overlaps_it_reads_a_copy(gpu):
    x = np.arange(4.0)
    _agree(numbax.jit(overlapping, backend="gpu")(x), overlapping(x))


def strided_reshape(x):
    v = x[::2].reshape(2, 2)  # a view in NumPy (its strides allow one): the write shows in x
    v[0, 1] = -1.0
    return v, x


def test_a_reshape_of_a_strided_view_is_numpys_view(gpu):
    x = np.arange(8.0)
    _agree(numbax.jit(strided_reshape, backend="gpu")(x.copy()), strided_reshape(x.copy()))


def test_a_jacobian_of_a_matrix_output_moves_its_columns_last_as_the_cpu_backend(gpu):
    expected = numbax.jacfwd(layer, backend="python")(W, B, X)  # the sweep's np.moveaxis: a view on the GPU
    _agree(numbax.jacfwd(layer, backend="gpu")(W, B, X), expected)
