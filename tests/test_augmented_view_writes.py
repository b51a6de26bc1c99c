"""``v += e`` where ``v`` is a view writes into the array it views: the optimizer must see that write.

The optimizer's "what does this code write into" (``hoist_invariants.updated_in_place``) counted subscript
stores and calls with effects but took ``v += e`` of a name for a rebinding. Two fresh ``np.zeros_like(x)``
arrays, each updated through a reversed view, were then merged into one by common-subexpression
elimination (a wrong value from plain ``jit``), and ``jacrev`` of ``(x * 2.0)[::-1]`` or ``np.sort(x)[1:]``
(whose adjoint adds the cotangent into a view of a zero array) hoisted that zero array out of the loop over
the basis and reused the first row for every row. Values are NumPy's and JAX's (float64).
"""
from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402  (turns on jax_enable_x64)

X = np.array([0.3, -1.2, 2.5, 0.7])
BACKENDS = ("python", "cpu")


def two_zero_arrays_updated_through_views(x):
    d = np.zeros_like(x)
    v = d[::-1]
    v += x
    a = d * 2.0
    e = np.zeros_like(x)
    w = e[::-1]
    w += x * 3.0
    b = e * 2.0
    return a + b


def updated_through_a_slice_in_a_loop(x):
    total = np.zeros_like(x)
    for k in range(3):
        acc = np.zeros_like(x)
        head = acc[1:]
        head += x[:-1] * k
        total = total + acc * 2.0
    return total


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [two_zero_arrays_updated_through_views, updated_through_a_slice_in_a_loop],
                         ids=lambda f: f.__name__)
def test_jit_sees_writes_through_views(fn, backend):
    np.testing.assert_allclose(numbax.jit(fn, backend=backend)(X), fn(X.copy()), rtol=1e-15)


def reversed_double(x):
    return (x * 2.0)[::-1]


def sorted_tail(x):
    return np.sort(x)[1:]


def strided_square(x):
    return (x ** 2)[::2] + x[1::2]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [reversed_double, sorted_tail, strided_square], ids=lambda f: f.__name__)
def test_jacobians_of_views(fn, backend):
    want = np.asarray(jax.jacrev(to_jax(fn))(jnp.asarray(X)))
    np.testing.assert_allclose(numbax.jacrev(fn, backend=backend)(X), want, rtol=1e-14)
    np.testing.assert_allclose(numbax.jacfwd(fn, backend=backend)(X), want, rtol=1e-14)
    batch = np.stack([X, X[::-1] * 0.5])
    per_row = np.stack([np.asarray(jax.jacrev(to_jax(fn))(jnp.asarray(row))) for row in batch])
    np.testing.assert_allclose(numbax.vmap(numbax.jacrev(fn, backend=backend), backend=backend)(batch), per_row,
                               rtol=1e-14)
