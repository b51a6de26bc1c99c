"""Attribute writes on a dataclass pytree inside compiled code (``state.x = ...``) and ``dataclasses.replace``:
done while compiling, as Python does them, on pytrees that hold the function's run-time values; the caller's
pytree is unchanged, as in JAX. Refused: writes inside run-time control flow, into frozen dataclasses, into
objects of a module (a write while compiling would happen once, not at each call), and into the arguments of a
function that compiled code calls (rebuilt there from their leaves, so the caller would not see the write)."""
import dataclasses

import numpy as np
import pytest

import numbax
from numbax import tree_util


@tree_util.register_dataclass
@dataclasses.dataclass
class State:
    x: np.ndarray
    v: np.ndarray


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Frozen:
    x: np.ndarray


def step(state, dt):
    state.v = state.v - dt * np.sin(state.x)
    state.x = state.x + dt * state.v
    return state


def replaced(state, dt):
    return dataclasses.replace(state, x=state.x + dt * state.v)


def energy_after(x, v):
    state = State(x, v)
    state.v = state.v - 0.1 * np.sin(state.x)
    state = replaced(state, 0.1)
    return np.sum(state.v ** 2) + np.sum(np.cos(state.x))


def energy_by_hand(x, v):
    v1 = v - 0.1 * np.sin(x)
    return np.sum(v1 ** 2) + np.sum(np.cos(x + 0.1 * v1))


X, V = np.array([0.3, -1.2]), np.array([0.5, 0.25])


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_attribute_writes_and_replace(backend):
    state = State(X.copy(), V.copy())
    out = numbax.jit(step, backend=backend)(state, 0.1)
    v1 = V - 0.1 * np.sin(X)
    np.testing.assert_allclose(out.v, v1, rtol=1e-15)
    np.testing.assert_allclose(out.x, X + 0.1 * v1, rtol=1e-15)
    np.testing.assert_array_equal(state.x, X)  # the caller's pytree is unchanged, as in JAX
    out = numbax.jit(replaced, backend=backend)(state, 0.5)
    np.testing.assert_allclose(out.x, X + 0.5 * V, rtol=1e-15)
    np.testing.assert_array_equal(out.v, V)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_derivatives_through_attribute_writes(backend):
    gx, gv = numbax.grad(energy_after, argnums=(0, 1), backend=backend)(X, V)
    eps = 1e-6
    for k in range(2):
        e = np.eye(2)[k] * eps
        np.testing.assert_allclose(gx[k], (energy_by_hand(X + e, V) - energy_by_hand(X - e, V)) / (2 * eps),
                                   rtol=1e-7)
        np.testing.assert_allclose(gv[k], (energy_by_hand(X, V + e) - energy_by_hand(X, V - e)) / (2 * eps),
                                   rtol=1e-7)


def in_a_loop(state, n):
    for _ in range(n):
        state.x = state.x * 0.5
    return state


def into_frozen(f):
    f.x = f.x + 1.0
    return f


GLOBAL = State(np.zeros(2), np.zeros(2))


def into_a_global(x):
    GLOBAL.x = x
    return x


def steps_twice(x, v):
    state = State(x, v)
    step(state, 0.1)  # Python would see step's writes here; a callee's arguments are rebuilt from their leaves
    return step(state, 0.1)


def test_refusals_at_the_users_line():
    with pytest.raises(numbax.NumbaxSpecializationError, match="the caller would not see the change"):
        numbax.jit(steps_twice)(X, V)
    with pytest.raises(numbax.NumbaxSpecializationError, match="inside run-time control flow"):
        numbax.jit(in_a_loop)(State(X, V), 3)
    with pytest.raises(numbax.NumbaxSpecializationError, match="FrozenInstanceError") as info:
        numbax.jit(into_frozen)(Frozen(X))
    assert "test_dataclass_updates.py" in str(info.value)
    with pytest.raises(numbax.NumbaxSpecializationError, match="assignment to an attribute of a State"):
        numbax.jit(into_a_global)(X)
