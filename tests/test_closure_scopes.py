"""A function defined inside compiled code reads the variables of the scope that defined it (Python's lexical
scoping), never those of the function that happens to call it.

numbax inlines every call, so a closure's free name once resolved to whatever variable of that name the
calling code held: a parameter of another local function, a loop variable of ``lax.fori_loop``'s lowering
(``i``, ``val``), ``lax.scan``'s per-step output (``y``), a ``lax.cond`` operand... and gave a wrong value
without a word. Each program here shadows a closure's name between its definition and its call; the
expected values are Python's own (the program run as it is) and JAX's for the ``lax`` programs, and the gradients
JAX's in float64. A closure over a run-time value that outlives the function that made it is refused.
"""
from __future__ import annotations

import functools
import os
import sys

import jax
import numpy as np
import pytest

import numbax
from numbax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402  (turns on jax_enable_x64)

X = np.array([1.0, 2.0, 3.0])
Y = np.array([10.0, 20.0, 30.0])
BACKENDS = ("python", "cpu")


def shadowed_by_parameter(x, y):
    def inner(a):
        return a * y

    def outer(y):
        return inner(y) + 0.0

    return outer(x)


def shadowed_two_levels(x, y):
    def inner(a):
        return a * y

    def middle(b):
        return inner(b) * 2.0

    def outer(y):
        return middle(y) - 1.0

    return outer(x)


def shadowed_by_local(x, y):
    def inner(a):
        return a + y

    def outer(z):
        y = z * 3.0
        return inner(z) * y

    return outer(x)


def scan_reads_y(x, y):
    def step(c, xi):
        c = y * xi + c
        return c, np.sum(c)

    carry, ys = lax.scan(step, x, x)
    return carry + ys[0]


def fori_reads_val(x, val):
    def body(i, v):
        return v + val

    return lax.fori_loop(0, 2, body, x)


def fori_reads_i(x, i):
    def body(k, v):
        return v + i * x[k]

    return lax.fori_loop(0, 3, body, x)


def nested_fori(x, y):
    def body(i, val):
        return val + y * x[i]

    def body2(k, y):
        return lax.fori_loop(0, 2, body, y)

    return lax.fori_loop(0, 1, body2, x * 0.0)


def cond_reads_operand_name(x, operand_0):
    def yes(a):
        return a * operand_0

    def no(a):
        return a - operand_0

    return lax.cond(np.sum(x) > 0.0, yes, no, x)


def while_reads_val(x, val):
    def more(state):
        return state[0] < 3

    def step(state):
        k, v = state
        return k + 1, v * 0.5 + val

    return lax.while_loop(more, step, (0, x))[1]


def partial_crosses(x, y):
    def f(a, b):
        return a * b

    p = functools.partial(f, y)

    def outer(y):
        return p(y)

    return outer(x)


def default_crosses(x, y):
    scale = y * 2.0

    def inner(a, b=scale):
        return a * b

    def outer(scale):
        return inner(scale)

    return outer(x)


def keyword_default_crosses(x, y):
    scale = y + 1.0

    def inner(a, *, b=scale):
        return a * b

    def outer(scale):
        return inner(scale)

    return outer(x)


def late_binding(x, y):
    def inner(a):
        return a * y

    y = y + 1.0

    def outer(y):
        return inner(y)

    return outer(x)


PROGRAMS = [shadowed_by_parameter, shadowed_two_levels, shadowed_by_local, scan_reads_y, fori_reads_val,
            fori_reads_i, nested_fori, cond_reads_operand_name, while_reads_val, partial_crosses,
            default_crosses, keyword_default_crosses, late_binding]


def python_value(fn, *args):
    return fn(*args)  # numbax.lax's functions run as Python outside compiled code


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_value_is_pythons(fn, backend):
    want = python_value(fn, X, Y)
    np.testing.assert_allclose(numbax.jit(fn, backend=backend)(X, Y), want, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(jax.jit(to_jax(fn))(X, Y)), want, rtol=1e-13)


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_gradient_is_jaxs(fn):
    def total(x, y):
        return np.sum(fn(x, y))

    got = numbax.grad(total, argnums=(0, 1), backend="python")(X, Y)
    want = jax.jacfwd(to_jax(total), argnums=(0, 1))(X, Y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12, atol=1e-12)
    tangents = (X * 0.1 - 0.2, Y * 0.01 + 0.3)
    got_out, got_tangent = numbax.jvp(fn, (X, Y), tangents, backend="python")
    want_out, want_tangent = jax.jvp(to_jax(fn), (X, Y), tangents)
    np.testing.assert_allclose(got_out, np.asarray(want_out), rtol=1e-13)
    np.testing.assert_allclose(got_tangent, np.asarray(want_tangent), rtol=1e-12, atol=1e-12)


def make_scaler(s):
    def scale(a):
        return a * s

    return scale


def escaping_closure(x, y):
    scale = make_scaler(y)
    return scale(x)


def escaping_constant(x, y):
    scale = make_scaler(2.0)
    return scale(x) + y


def test_closure_outliving_its_maker_is_refused():
    with pytest.raises(numbax.NumbaxSpecializationError) as info:
        numbax.jit(escaping_closure, backend="python")(X, Y)
    message = str(info.value)
    assert "test_closure_scopes.py" in message and "`s`" in message and "make_scaler" in message


def test_closure_over_a_constant_may_outlive_its_maker():
    np.testing.assert_allclose(numbax.jit(escaping_constant, backend="python")(X, Y), X * 2.0 + Y)


def transformed_local_function_crosses(x, y):
    def loss(p):
        return np.sum(np.sin(p) * y)

    def outer(y):
        return numbax.grad(loss)(y) + numbax.jvp(loss, (y,), (y,))[1]

    return outer(x)


def partial_of_a_transformed_function_crosses(x, y):
    def loss(p, q):
        return np.sum(p * q * y)

    p = functools.partial(loss, y)

    def outer(y):
        return numbax.grad(p)(y)

    return outer(x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [transformed_local_function_crosses, partial_of_a_transformed_function_crosses],
                         ids=lambda f: f.__name__)
def test_a_transformed_local_function_reads_its_makers_values(fn, backend):
    want = {"transformed_local_function_crosses": np.cos(X) * Y + np.sum(np.cos(X) * X * Y),
            "partial_of_a_transformed_function_crosses": Y * Y}[fn.__name__]
    np.testing.assert_allclose(fn(X, Y), want, rtol=1e-13)
    np.testing.assert_allclose(numbax.jit(fn, backend=backend)(X, Y), want, rtol=1e-13)
