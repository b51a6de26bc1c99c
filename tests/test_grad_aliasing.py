"""Writes through views or aliases are refused by reverse mode at the user's line, never differentiated wrongly."""
from __future__ import annotations

import numpy as np
import pytest

import numbax

X = np.array([1.0, 2.0, 3.0])


def through_a_row_view(x):
    out = np.zeros((3, 3))
    for i in range(3):
        row = out[i]
        row[:] = x * i
    return np.sum(out * out)


def through_a_chosen_alias(x):
    out = np.zeros((2, 3))
    for i in range(2):
        b = out if i == 0 else np.zeros((2, 3))
        b[i] = x
    return np.sum(out * x)


def through_a_transpose(x):
    a = np.zeros(3)
    b = a.T
    b[0] = x[1]
    return np.sum(a * x)


def through_a_plain_alias_assigned_once(x):
    a = np.zeros(3)
    b = a
    b[0] = x[1] * 2.0
    return np.sum(a * x)


@pytest.mark.parametrize("fn, line_text, defined", [
    (through_a_row_view, "row[:] = x * i", "row = out[i]"),
    (through_a_chosen_alias, "b[i] = x", "b = out"),
    (through_a_transpose, "b[0] = x[1]", "b = a.T"),
])
def test_write_through_a_view_is_an_error_at_the_write(fn, line_text, defined):
    with pytest.raises(numbax.NumbaxDifferentiationError, match="share memory") as info:
        numbax.grad(fn, backend="python")(X)
    message = str(info.value)
    assert line_text in message and defined in message and "test_grad_aliasing.py" in message


def test_an_alias_that_copy_propagation_removes_is_differentiated():
    got = numbax.grad(through_a_plain_alias_assigned_once, backend="python")(X)
    assert np.allclose(got, [0.0, 2.0 * X[0], 0.0] + np.array([2.0 * X[1], 0.0, 0.0]))


def write_into_a_view_of_a_temporary(x):
    rows = (x * 2.0).reshape(2, 2)
    rows[0, 1] = x[3] ** 2
    return np.sum(rows * x.reshape(2, 2))


def write_into_a_fresh_array(x):
    b = np.zeros(3)
    b[1] = x[1]
    return np.sum(b * x[:3])


def write_into_a_view_of_a_temporary_read_later(x):
    t = x * 2.0
    rows = t.reshape(2, 2)
    rows[0, 1] = x[3] ** 2
    return np.sum(rows) + np.sum(t)


def test_a_write_into_a_view_of_an_array_read_nowhere_else_is_differentiated():
    """Nothing reads the temporary ``x * 2.0`` but the view that is written: the write changes nothing else,
    in reverse mode and in forward over reverse (where ``dx = rt.unbroadcast(t, x)`` is such a view)."""
    x = np.array([0.5, -1.0, 2.0, 0.25])
    # f = 2 x0^2 + x1 x3^2 + 2 x2^2 + 2 x3^2
    grad = numbax.grad(write_into_a_view_of_a_temporary, backend="python")(x)
    np.testing.assert_allclose(grad, [4 * x[0], x[3] ** 2, 4 * x[2], 2 * x[1] * x[3] + 4 * x[3]])
    hessian = numbax.hessian(write_into_a_fresh_array, backend="python")(x)
    np.testing.assert_allclose(hessian, np.diag([0.0, 2.0, 0.0, 0.0]))
    with pytest.raises(numbax.NumbaxDifferentiationError, match="which may share memory with another array"):
        numbax.grad(write_into_a_view_of_a_temporary_read_later, backend="python")(x)
