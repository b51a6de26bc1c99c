"""Transformations of functions defined inside compiled code: lambdas, nested defs, functools.partial.

``numbax.grad(lambda p: loss(p, batch))(params)`` inside a jit-compiled step is how JAX programs are
written. The local function is lifted (``ast_passes/specialize/lifting.py``): the run-time values it closes
over become keyword arguments that are not differentiated, read when the transformation is called (Python's
late binding), while an enclosing transformation still differentiates through them. JAX in float64 is the
oracle; the refusals are checked to be numbax errors at the user's line.
"""
from __future__ import annotations

import functools
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

X = np.array([0.3, -0.7, 1.1])
BACKENDS = ("python", "cpu")


def loss(p, scale):
    return np.sum(np.tanh(p * scale) ** 2)


def field(p, scale):
    return np.sin(p) * scale + p[0] * p


def jloss(p, scale):
    return jnp.sum(jnp.tanh(p * scale) ** 2)


def jfield(p, scale):
    return jnp.sin(p) * scale + p[0] * p


def grad_of_lambda(x):
    return numbax.grad(lambda p: loss(p, x[0]))(x)


def value_and_grad_of_def(x):
    def objective(p):
        return loss(p, x[2])

    return numbax.value_and_grad(objective)(x)


def jvp_of_lambda(x):
    return numbax.jvp(lambda p: field(p, x[1]), (x,), (np.ones(3),))


def vjp_of_lambda(x):
    out, pull = numbax.vjp(lambda p: field(p, x[1]), x)
    return out, pull(np.ones(3) * 0.5)[0]


def jacfwd_of_lambda(x):
    return numbax.jacfwd(lambda p: field(p, x[0]))(x)


def jacrev_of_lambda(x):
    return numbax.jacrev(lambda p: field(p, x[0]))(x)


def hessian_of_lambda(x):
    return numbax.hessian(lambda p: loss(p, x[1]) * p[2])(x)


def hvp_of_lambda(x):
    return numbax.jvp(numbax.grad(lambda p: loss(p, x[0])), (x,), (np.ones(3),))[1]


def grad_of_partial(x):
    return numbax.grad(functools.partial(loss, scale=x[0]))(x)


def jvp_of_positional_partial(x):
    def flipped(scale, p):
        return field(p, scale)

    return numbax.jvp(functools.partial(flipped, x[1]), (x,), (np.ones(3),))[1]


CASES = {
    grad_of_lambda: lambda x: jax.grad(lambda p: jloss(p, x[0]))(x),
    value_and_grad_of_def: lambda x: jax.value_and_grad(lambda p: jloss(p, x[2]))(x),
    jvp_of_lambda: lambda x: jax.jvp(lambda p: jfield(p, x[1]), (x,), (jnp.ones(3),)),
    vjp_of_lambda: lambda x: (jfield(x, x[1]), jax.vjp(lambda p: jfield(p, x[1]), x)[1](jnp.ones(3) * 0.5)[0]),
    jacfwd_of_lambda: lambda x: jax.jacfwd(lambda p: jfield(p, x[0]))(x),
    jacrev_of_lambda: lambda x: jax.jacrev(lambda p: jfield(p, x[0]))(x),
    hessian_of_lambda: lambda x: jax.hessian(lambda p: jloss(p, x[1]) * p[2])(x),
    hvp_of_lambda: lambda x: jax.jvp(jax.grad(lambda p: jloss(p, x[0])), (x,), (jnp.ones(3),))[1],
    grad_of_partial: lambda x: jax.grad(functools.partial(jloss, scale=x[0]))(x),
    jvp_of_positional_partial: lambda x: jax.jvp(lambda p: jfield(p, x[1]), (x,), (jnp.ones(3),))[1],
}


def _close(got, want):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10, atol=1e-12)
    assert len(jax.tree_util.tree_leaves(got)) == len(jax.tree_util.tree_leaves(want))


@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_a_transformation_of_a_local_function_inside_jit_is_jaxs(fn):
    _close(numbax.jit(fn, backend="python")(X), CASES[fn](X))


@pytest.mark.parametrize("fn", [grad_of_lambda, hessian_of_lambda, vjp_of_lambda], ids=lambda f: f.__name__)
def test_compiled(fn):
    _close(numbax.jit(fn)(X), CASES[fn](X))


def late_binding(x):
    s = x[0]
    g = numbax.grad(lambda p: np.sum(p * s))
    s = x[1]
    return g(x)


def test_a_closed_over_value_is_read_when_the_transformation_is_called():
    """As in Python (and JAX): the lambda sees ``s`` as it is at the call, not at the ``grad``."""
    np.testing.assert_allclose(numbax.jit(late_binding, backend="python")(X), np.full(3, X[1]))


def inner_gradient(x):
    return numbax.grad(lambda y: np.sum(np.sin(x * y)))(x)


def squared_inner_gradient(x):
    return np.sum(inner_gradient(x) ** 2)


def test_an_enclosing_transformation_differentiates_through_the_captured_values():
    """The inner gradient is a function of the ``x`` it closes over: the outer ``grad`` follows it there."""
    def jax_inner(x):
        return jax.grad(lambda y: jnp.sum(jnp.sin(x * y)))(x)

    want = jax.grad(lambda x: jnp.sum(jax_inner(x) ** 2))(X)
    np.testing.assert_allclose(numbax.grad(squared_inner_gradient, backend="python")(X), want, rtol=1e-10)
    np.testing.assert_allclose(numbax.jacfwd(inner_gradient, backend="python")(X), jax.jacfwd(jax_inner)(X),
                               rtol=1e-10)


def keyword_only(x, *, scale):
    return np.sin(x) * scale


def test_a_jacobian_of_a_function_with_keyword_only_parameters():
    np.testing.assert_allclose(numbax.jacfwd(keyword_only, backend="python")(X, scale=2.0),
                               np.diag(2.0 * np.cos(X)))
    np.testing.assert_allclose(numbax.jacrev(keyword_only, backend="python")(X, scale=2.0),
                               np.diag(2.0 * np.cos(X)))


def reads_a_local_helper(x):
    def helper(p):
        return p * x[0]

    return numbax.grad(lambda p: np.sum(helper(p)))(x)


def takes_varargs(x):
    return numbax.grad(lambda *ps: np.sum(ps[0] * x[0]))(x)


@pytest.mark.parametrize("fn, text", [
    (reads_a_local_helper, "reads `helper`, another function defined there"),
    (takes_varargs, "with *args, **kwargs or keyword-only defaults"),
], ids=["helper", "varargs"])
def test_refused_at_the_users_line(fn, text):
    with pytest.raises(numbax.NumbaxError, match=text.replace("*", r"\*")) as info:
        numbax.jit(fn, backend="python")(X)
    assert info.value.origin.filename == __file__


def assigned_after_the_grad(x):
    g = numbax.grad(lambda p: np.sum(p * late_value))
    late_value = x[2]
    return g(x)


def test_a_value_assigned_after_the_transformation_is_made_is_read_at_the_call():
    """Python's late binding again: the name is not yet bound when ``grad`` is made, and is at its call."""
    np.testing.assert_allclose(numbax.jit(assigned_after_the_grad, backend="python")(X), np.full(3, X[2]))


shadowed = 100.0  # a global of the name the functions below take as a parameter: it must not be read


def two_scopes_up(x, shadowed):
    def inner(y):
        scale = lambda p: p * shadowed  # noqa: E731
        return scale(y)

    return inner(x)


def grad_two_scopes_up(x, shadowed):
    def inner(y):
        return numbax.grad(lambda p: np.sum(p * shadowed))(y)

    return inner(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lambda_in_a_local_def_reads_the_compiled_functions_variable(backend):
    """It read the global of that name before (a silent wrong value): Python's scopes, innermost first."""
    np.testing.assert_allclose(numbax.jit(two_scopes_up, backend=backend)(X, 3.0), 3.0 * X)
    np.testing.assert_allclose(numbax.jit(grad_two_scopes_up, backend=backend)(X, 3.0), np.full(3, 3.0))
