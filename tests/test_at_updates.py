"""JAX's indexed updates, ``x.at[idx].set(v)`` and the rest, inside compiled code: functional updates of a
copy, differentiated in both modes and batched, against JAX (float64); what numbax does not implement is
refused at the user's line."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

X = np.array([0.3, -0.7, 1.1, 2.0])


def updates(x, m):
    y = x.at[1].set(x[0] * 3.0)
    y = y.at[2:].add(m.sin(x[:2]))
    y = y.at[0].multiply(x[3])
    y = y.at[3].subtract(x[1])
    y = y.at[1:3].divide(1.5 + x[2:] ** 2)
    y = y.at[-1].max(0.5)
    y = y.at[0].min(x[2])
    y = y.at[2].power(2.0)
    built = m.zeros(3).at[1].set(x[1])
    return m.sum(y ** 2) + y.at[1].get() + m.sum(built * x[:3])


def ours(x):
    return updates(x, np)


def theirs(x):
    return updates(jnp.asarray(x), jnp)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_updates_and_their_derivatives_follow_jax(backend):
    np.testing.assert_allclose(numbax.jit(ours, backend=backend)(X), theirs(X), rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(ours, backend=backend)(X), jax.grad(theirs)(X), rtol=1e-12)
    np.testing.assert_allclose(numbax.jvp(ours, (X,), (np.ones(4),), backend=backend)[1],
                               jax.jvp(theirs, (X,), (jnp.ones(4),))[1], rtol=1e-12)


def test_hessian_and_vmap():
    np.testing.assert_allclose(numbax.hessian(ours, backend="python")(X), jax.hessian(theirs)(X), rtol=1e-10)
    xs = np.stack([X, X[::-1]])
    np.testing.assert_allclose(numbax.vmap(ours, backend="python")(xs), jax.vmap(theirs)(xs), rtol=1e-12)


def leaves_the_input(x):
    y = x.at[0].set(10.0)
    return x[0] + y[0]


def test_the_input_is_not_written():
    x = X.copy()
    assert numbax.jit(leaves_the_input, backend="python")(x) == X[0] + 10.0
    np.testing.assert_array_equal(x, X)


def repeated_add(x):
    return x.at[np.array([0, 0])].add(1.0)


def with_mode(x):
    return x.at[0].set(1.0, mode="drop")


def unknown_update(x):
    return x.at[0].scale(2.0)


def set_through_an_array_index(x):
    return x.at[np.array([0, 2])].set(np.array([5.0, 6.0]))


@pytest.mark.parametrize("fn, text", [
    (repeated_add, "through an integer-array index, whose repeated positions JAX accumulates"),
    (with_mode, "with the keyword 'mode', which numbax does not implement"),
    (unknown_update, "x.at[...].scale is not one of JAX's indexed updates"),
], ids=["array-index-add", "mode", "unknown"])
def test_refused_at_the_users_line(fn, text):
    with pytest.raises(numbax.NumbaxError, match=text.replace("[", r"\[").replace("]", r"\]")) as info:
        numbax.jit(fn, backend="python")(X)
    assert info.value.origin.filename == __file__


def test_set_through_an_array_index():
    np.testing.assert_allclose(numbax.jit(set_through_an_array_index, backend="python")(X), [5.0, -0.7, 6.0, 2.0])


def reference_kept_across_a_rebinding(x):
    first = x.at[0]
    x = x * 2.0
    return first.set(-1.0) + x


def test_x_at_refers_to_the_array_as_it_was():
    """``x.at`` holds the array it was taken of, as JAX's does, even when ``x`` is rebound before ``.set``."""
    got = numbax.jit(reference_kept_across_a_rebinding, backend="python")(X)
    np.testing.assert_allclose(got, np.concatenate([[-1.0], X[1:]]) + 2.0 * X)
