"""Outputs stacked into rows (``vmap``'s examples, ``lax.scan``'s steps, a staged ``vmap``'s values) must each
have the first one's shape, as JAX traces one: NumPy's assignment would broadcast ``x[:1]`` into a row of two
(a wrong value before ``rt.check_row``). Where symbolic shapes prove the shapes equal, no check is made."""
import numpy as np
import pytest

import numbax
from numbax import lax

X = np.arange(6.0).reshape(2, 3)


def prefix(x, n):
    return x[:n]


def scanned(x, ns):
    return lax.scan(lambda carry, n: (carry, x[:n]), 0.0, ns)[1]


def summed_prefix(x, n):
    return lax.psum(x[:n], "i")


def scaled(x, w):
    return np.tanh(x @ w) * 2.0


@pytest.mark.parametrize("ns", [np.array([2, 1]), np.array([1, 2])])
def test_vmap_of_examples_of_different_shapes_raises_at_the_function(ns):
    with pytest.raises(numbax.NumbaxShapeError, match="stacked with outputs of shape") as info:
        numbax.vmap(prefix)(X, ns)
    assert info.value.origin.filename == __file__


def test_lax_scan_of_steps_of_different_shapes_raises_at_the_scan():
    with pytest.raises(numbax.NumbaxShapeError, match=r"an output of shape \(1,\) stacked with outputs of shape "
                                                      r"\(2,\)") as info:
        numbax.jit(scanned)(X[0], np.array([2, 1]))
    assert info.value.origin.filename == __file__


def test_staged_vmap_of_examples_of_different_shapes_raises():
    with pytest.raises(numbax.NumbaxShapeError, match="stacked with outputs of shape"):
        numbax.vmap(summed_prefix, axis_name="i")(X, np.array([2, 1]))


def test_examples_of_one_shape_stack_and_need_no_check():
    ns = np.array([2, 2])
    np.testing.assert_array_equal(numbax.vmap(prefix)(X, ns), X[:, :2])
    np.testing.assert_array_equal(numbax.jit(scanned)(X[0], ns), np.stack([X[0, :2]] * 2))
    w = np.linspace(-1.0, 1.0, 6).reshape(3, 2)
    vmapped = numbax.vmap(scaled, in_axes=(0, None))
    np.testing.assert_allclose(vmapped(X, w), np.tanh(X @ w) * 2.0, rtol=1e-15)
    assert "check_row" not in numbax.source(vmapped, X, w)  # proven by symbolic shapes
    assert "check_row" in numbax.source(numbax.vmap(prefix), X, ns)  # a slice of run-time length: checked
