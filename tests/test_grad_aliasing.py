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
