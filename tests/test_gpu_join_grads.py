"""Derivatives of ``np.concatenate``, ``np.stack`` and ``np.diag`` on the GPU backend, in Numba's CUDA simulator:
reverse mode's cotangents of the joined arrays (one statement per array: ``backends.cuda.lower.parts``) and of a
diagonal taken or made, over positive and negative axes, in both modes, and to second order for diagonals. Each
agrees with the CPU backend (values at rtol 1e-12, shapes, dtypes) and leaves its results on the device. Refused
at the user's line: a second derivative through a join (reverse mode's tuple of cotangents), a concatenation
over no axis."""
import inspect

import numpy as np
import pytest

import numbax
from gpu_agreement import agree_on_device

X = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 7.0], [2.0, 2.0, -4.0], [1.0, 0.0, -3.0]])
V = np.array([1.0, -2.0, 0.5])
W = np.arange(12.0).reshape(4, 3) - 4.0


def joined(x, v):
    rows = np.concatenate((x, np.sin(x[:2]), x[1:2] ** 2))
    columns = np.concatenate((x, x[:, :1] * 3.0), axis=-1)
    stacked = np.stack([x, 2.0 * x, np.cos(x)], axis=1)
    last = np.stack((v, v * v), axis=-1)
    return np.sum(rows ** 2) + np.sum(columns * np.arange(4.0)) + np.sum(np.sin(stacked)) + \
        np.sum(last * np.array([1.0, -2.0])) + np.sum(np.concatenate((v, v[::-1] * 3.0)) * np.arange(6.0))


def diagonals(x, v):
    return np.sum(np.diag(v) * W[:3]) + np.sum(np.diag(x[:3]) ** 3) + np.sum(np.diag(x) * v)


def joined_gradient_norm(x, v):
    return np.sum(numbax.grad(joined, argnums=(0, 1))(x, v)[0] ** 2)


def diagonals_gradient_norm(x, v):
    return np.sum(numbax.grad(diagonals)(x, v) ** 2)


def _tangents(on):
    t = (np.linspace(-1.0, 1.0, X.size).reshape(X.shape), np.array([0.5, 1.0, -2.0]))
    return numbax.device_put(t, on) if on else t


TRANSFORMS = {
    "grad": lambda fn, second: numbax.grad(fn, argnums=(0, 1)),
    "jvp": lambda fn, second: lambda x, v, on=None: numbax.jvp(fn, (x, v), _tangents(on)),
    "grad of grad": lambda fn, second: numbax.grad(second, argnums=(0, 1)),
}


@pytest.mark.parametrize("transform, fn, second", [
    ("grad", joined, None), ("jvp", joined, None), ("grad", diagonals, None), ("jvp", diagonals, None),
    ("grad of grad", diagonals, diagonals_gradient_norm)])
def test_derivatives_of_joins_and_diagonals_agree_with_the_cpu_backend(gpu, transform, fn, second):
    expected = TRANSFORMS[transform](fn, second)(X, V)
    on = {"on": gpu} if transform == "jvp" else {}
    agree_on_device(TRANSFORMS[transform](fn, second)(*numbax.device_put((X, V), gpu), **on), expected)


def flattened(x, v):
    return np.sum(np.concatenate((x, v), axis=None) ** 2)


@pytest.mark.parametrize("fn, transform, line", [
    (flattened, numbax.jit, "np.concatenate((x, v), axis=None)"),
    (flattened, lambda f: numbax.grad(f, argnums=(0, 1)), "np.concatenate((x, v), axis=None)"),
    (joined_gradient_norm, lambda f: numbax.grad(f, argnums=(0, 1)), "np.stack([x, 2.0 * x, np.cos(x)], axis=1)")])
def test_what_stays_refused_is_refused_at_the_users_line(gpu, fn, transform, line):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        transform(fn)(*numbax.device_put((X, V), gpu))
    lines, first = inspect.getsourcelines(joined if fn is joined_gradient_norm else fn)
    assert info.value.origin.filename == inspect.getsourcefile(fn)
    assert info.value.origin.lineno == first + next(k for k, text in enumerate(lines) if line in text)
