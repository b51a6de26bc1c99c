"""``np.sort`` on the GPU backend, in Numba's CUDA simulator: of 1-d and 2-d arrays along either axis or
flattened, integers and float32 kept, NaN sorted last as NumPy sorts it; and its derivatives (the stable order's
permutation, as the CPU backend's and JAX's: reverse mode scatters the cotangent back, forward mode gathers the
tangent), in both modes and to second order. Each agrees with the CPU backend (values at rtol 1e-12, shapes,
dtypes) and leaves its results on the device; a sort along an axis known only at run time is refused at the
user's line."""
import inspect

import numpy as np
import pytest

import numbax
from gpu_agreement import agree_on_device

X = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 7.0], [2.0, 2.0, -4.0], [1.0, 0.0, -3.0]])  # a tie in row 2
WEIGHTS = np.arange(12.0).reshape(4, 3) - 5.0


def sorts(x, v, n):
    return (np.sort(x), np.sort(x, axis=0), np.sort(x, axis=None), np.sort(v, axis=0, kind="stable"), np.sort(n),
            np.sort(x.astype(np.float32), 0), np.sort(x.T))


def loss(x):
    return np.sum(np.sort(x, axis=0) * WEIGHTS) + np.sum(np.sin(np.sort(x)) * WEIGHTS[::-1]) + \
        np.sum(np.sort(x[1]) ** 3)


def test_sorts_agree_with_numpy_and_the_cpu_backend(gpu):
    v = np.array([2.0, np.nan, -1.0, 0.0, np.nan, -0.5])
    n = np.array([[5, -2, 9], [0, 0, -7]])
    got = numbax.jit(sorts)(*numbax.device_put((X, v, n), gpu))
    agree_on_device(got, numbax.jit(sorts)(X, v, n))
    agree_on_device(got, sorts(X, v, n))


def _tangent(on):
    t = np.linspace(-1.0, 2.0, X.size).reshape(X.shape)
    return numbax.device_put(t, on) if on else t


def hessian_vector(x, t):
    return numbax.jvp(numbax.grad(loss), (x,), (t,))


def gradient_norm(x):
    return np.sum(numbax.grad(loss)(x) ** 2)


TRANSFORMS = {
    "grad": lambda on: numbax.grad(loss)(numbax.device_put(X, on) if on else X),
    "jvp": lambda on: numbax.jvp(loss, (numbax.device_put(X, on) if on else X,), (_tangent(on),)),
    "jvp of grad": lambda on: hessian_vector(numbax.device_put(X, on) if on else X, _tangent(on)),
    "grad of grad": lambda on: numbax.grad(gradient_norm)(numbax.device_put(X, on) if on else X),
}


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_derivatives_of_sorts_agree_with_the_cpu_backend(gpu, transform):
    agree_on_device(TRANSFORMS[transform](gpu), TRANSFORMS[transform](None))


def sort_along(x, axis):
    return np.sort(x, axis=axis)


def test_a_sort_along_an_axis_known_at_run_time_is_refused_at_the_users_line(gpu):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.jit(sort_along, backend="gpu")(X, 1)
    lines, first = inspect.getsourcelines(sort_along)
    assert info.value.origin.lineno == first + 1 and "axis" in str(info.value)
