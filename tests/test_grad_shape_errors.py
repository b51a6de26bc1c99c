"""Shape mismatches under reverse mode: NumPy's ValueError, as a NumbaxShapeError at the user's line naming the
shapes, raised by the forward sweep's checks before anything is differentiated (grad, value_and_grad, vjp,
grad inside jit), on both backends; fitting shapes still differentiate to JAX's values."""
import inspect
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax.errors import NumbaxShapeError
from numbax.runtime import checks

jax.config.update("jax_enable_x64", True)

X, Y = np.array([.3, -.7, 1.1, .5]), np.array([.2, 1.3, -.4])


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def add(x, y):
    return np.sum(x + y)


def multiply(x, y):
    return np.sum(np.multiply(x, y) * 2.0)


def maximum(x, y):
    return np.sum(np.maximum(x, y))


def where(x, y):
    return np.sum(np.where(x > 0, x, y))


def outer_then_rows(x, y):
    return np.sum(x[:, None] * y + np.ones((2, 1)))


def reshape_function(x, y):
    return np.sum(np.reshape(x, (3, 3))) + np.sum(y)


def reshape_method(x, y):
    return np.sum(x.reshape(3, -1) * 2.0) + np.sum(y)


def concatenate(x, y):
    return np.sum(np.concatenate((x[:, None], y[:, None]), axis=1))


def stack(x, y):
    return np.sum(np.stack((x, y)))


def hstack(x, y):
    return np.sum(np.hstack((x[:, None], y[:, None])))


def vstack(x, y):
    return np.sum(np.vstack((x, y)))


def store_too_long(x, y):
    z = x * 1.0
    z[0:2] = y
    return np.sum(z)


def add_in_place(x, y):
    z = x * 1.0
    z += y
    return np.sum(z)


def add_in_place_grows(x, y):
    z = x[:3] * 1.0
    z += np.outer(y, y)
    return np.sum(z)


CASES = [
    (add, "x + y"),
    (multiply, "np.multiply(x, y)"),
    (maximum, "np.maximum(x, y)"),
    (where, "np.where(x > 0, x, y)"),
    (outer_then_rows, "x[:, None] * y + np.ones((2, 1))"),
    (reshape_function, "np.reshape(x, (3, 3))"),
    (reshape_method, "x.reshape(3, -1)"),
    (concatenate, "np.concatenate("),
    (stack, "np.stack((x, y))"),
    (hstack, "np.hstack("),
    (vstack, "np.vstack((x, y))"),
    (add_in_place, "z += y"),
    (add_in_place_grows, "z += np.outer(y, y)"),
    (store_too_long, "z[0:2] = y"),
]

TRANSFORMS = {
    "jit": lambda fn, backend: numbax.jit(fn, backend=backend),
    "grad": lambda fn, backend: numbax.grad(fn, backend=backend),
    "grad of both": lambda fn, backend: numbax.grad(fn, argnums=(0, 1), backend=backend),
    "value_and_grad": lambda fn, backend: numbax.value_and_grad(fn, backend=backend),
    "vjp": lambda fn, backend: lambda x, y: numbax.vjp(fn, x, y, backend=backend)[1](1.0),
    "grad in jit": lambda fn, backend: numbax.jit(numbax.grad(fn), backend=backend),
}


def _numpys_message(fn):
    with pytest.raises(ValueError) as info:
        fn(X, Y)
    return str(info.value)


def _assert_raised_at_the_users_line(call, fn, text):
    with pytest.raises(NumbaxShapeError) as info:
        call(X, Y)
    assert isinstance(info.value, ValueError)
    assert str(info.value).splitlines()[0] == f"{__file__}:{_line_of(fn, text)}: {_numpys_message(fn)}"


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("fn, text", CASES)
def test_reverse_mode_raises_numpys_shape_error_at_the_users_line(fn, text, transform):
    _assert_raised_at_the_users_line(TRANSFORMS[transform](fn, "python"), fn, text)


@pytest.mark.parametrize("fn, text", CASES)
def test_reverse_mode_on_cpu_raises_numpys_shape_error_at_the_users_line(fn, text):
    _assert_raised_at_the_users_line(TRANSFORMS["grad of both"](fn, "cpu"), fn, text)


@pytest.mark.parametrize("transform", ["value_and_grad", "grad in jit"])
def test_reverse_mode_on_cpu_checks_in_each_transform(transform):
    _assert_raised_at_the_users_line(TRANSFORMS[transform](add, "cpu"), add, "x + y")


def fitting(a, b, m):
    rows = a[:, None] * b + m                                        # (4, 1) * (3,) + (4, 3)
    s = np.where(rows > 0, rows, 0.5 * rows)
    both = np.concatenate((s, m), axis=1) + np.hstack((m, s))        # (4, 6)
    t = np.vstack((b, b)) * np.stack((b, b), axis=0)                 # (2, 3)
    u = m * 1.0
    u += b
    return np.sum(both ** 2) + np.sum(t) + np.sum(u.reshape(3, 4) ** 2)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_fitting_shapes_differentiate_as_jax(backend):
    a, b = X, Y
    m = np.linspace(-1.0, 1.0, 12).reshape(4, 3)

    def in_jax(a, b, m):
        rows = a[:, None] * b + m
        s = jnp.where(rows > 0, rows, 0.5 * rows)
        both = jnp.concatenate((s, m), axis=1) + jnp.hstack((m, s))
        t = jnp.vstack((b, b)) * jnp.stack((b, b), axis=0)
        return jnp.sum(both ** 2) + jnp.sum(t) + jnp.sum((m + b).reshape(3, 4) ** 2)

    got = numbax.grad(fitting, argnums=(0, 1, 2), backend=backend)(a, b, m)
    for g, want in zip(got, jax.grad(in_jax, argnums=(0, 1, 2))(a, b, m)):
        np.testing.assert_allclose(g, np.asarray(want), rtol=1e-12)


def add_through_a_view(x, y):
    z = x * 1.0
    front = z[0:2]
    front += y
    return np.sum(z * z)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_an_update_through_a_view_writes_through_under_jit_and_is_refused_under_grad(backend):
    x, y = X, Y[:2]
    np.testing.assert_allclose(numbax.jit(add_through_a_view, backend=backend)(x, y), add_through_a_view(x, y))
    with pytest.raises(numbax.NumbaxDifferentiationError, match="`front \\+= ...` writes into `front`") as info:
        numbax.grad(add_through_a_view, argnums=(0, 1), backend=backend)(x, y)
    assert f"{__file__}:{_line_of(add_through_a_view, 'front += y')}:" in str(info.value)


def test_the_benchmarks_gradients_keep_no_check_their_shapes_prove():
    """The checks of the user's operations cost the benchmarks nothing: reverse mode proves their shapes fit."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
    import grad_tasks

    shape_checks = set(checks.__all__) - {"check_index", "check_extent", "check_span", "check_divisor"}
    for task in grad_tasks.TASKS:
        source = numbax.grad(task.fn, argnums=task.argnums, backend="python").generate(task.args(), {}).source
        assert not [c for c in shape_checks if f"rt.{c}(" in source], task.name
