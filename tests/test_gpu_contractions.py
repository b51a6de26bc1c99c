"""``np.einsum`` and ``np.tensordot`` on the GPU backend, in Numba's CUDA simulator (``backends.cuda.lower
.contractions``: a kernel generated for each contraction and for each operand's cotangent): products, traces,
diagonals, sums, batch letters, an ellipsis and implicit output, integers and float32 kept, and the derivatives
of each in both modes and to second order. Each agrees with NumPy and the CPU backend (values at rtol 1e-12, 1e-5
for float32; shapes, dtypes) and leaves its results on the device; axes of other sizes are NumPy's error at the user's line
(einsum's axes of 1 broadcast, tensordot's do not), and a contraction of booleans is refused there."""
import inspect

import numpy as np
import pytest

import numbax
from gpu_agreement import agree_on_device

RNG = np.random.default_rng(3)
A = RNG.normal(size=(3, 4))
B = RNG.normal(size=(4, 3))
T = RNG.normal(size=(2, 3, 4))
S = RNG.normal(size=(3, 3))


def contractions(a, b, t, s):
    return (np.einsum("ij,jk->ik", a, b), np.einsum("ij,ji->", a, b), np.einsum("ii->i", s), np.einsum("ii", s),
            np.einsum("ij->", a), np.einsum("bij,jk->bik", t, b),
            np.einsum("...ij,...jk", t, b), np.einsum("i,j->ij", a[0], b[:, 1]), np.einsum("ij->ji", a),
            np.tensordot(t, a.T, axes=([1, 2], [1, 0])), np.tensordot(a, b.T), np.tensordot(a, b, axes=1),
            np.tensordot(a[0], s, axes=0), np.einsum("ij,jk->ik", a.astype(np.float32), b.astype(np.float32)),
            np.einsum("ij,jk->ik", (a > 0).astype(np.int64), np.ones((4, 2), np.int64)),
            np.einsum("ij,ij->ij", a[:1], a), np.einsum("ij,jk->ik", a[:, :1], b[:1]))  # axes of 1 broadcast


def loss(a, b, t, s):
    return (np.sum(np.einsum("ij,jk->ik", a, b) * s) + np.einsum("ij,ji->", a, b) ** 2 +
            np.sum(np.sin(np.einsum("ii->i", s))) + np.sum(np.tensordot(t, a.T, axes=([1, 2], [1, 0])) ** 2) +
            np.sum(np.einsum("bij,jk->bik", t, b) * np.einsum("ii", s)) + np.sum(np.tensordot(a, s, axes=0) ** 2) +
            np.sum(np.einsum("ij,ij->ij", a[:1], a) ** 2) + np.sum(np.einsum("i,ij->j", a[0], b) ** 2))


def gradient_norm(a, b, t, s):
    return np.sum(numbax.grad(loss, argnums=(0, 1, 2, 3))(a, b, t, s)[0] ** 2)


def test_contractions_agree_with_numpy_and_the_cpu_backend(gpu):
    got = numbax.jit(contractions)(*numbax.device_put((A, B, T, S), gpu))
    agree_on_device(got, numbax.jit(contractions)(A, B, T, S))
    agree_on_device(got, contractions(A, B, T, S))


def _jvp(on):
    tangents = tuple(np.linspace(-1.0, 1.0, x.size).reshape(x.shape) for x in (A, B, T, S))
    args = numbax.device_put((A, B, T, S), on) if on else (A, B, T, S)
    return numbax.jvp(loss, args, numbax.device_put(tangents, on) if on else tangents)


TRANSFORMS = {
    "grad": lambda on: numbax.grad(loss, argnums=(0, 1, 2, 3))(*(numbax.device_put((A, B, T, S), on) if on
                                                                  else (A, B, T, S))),
    "jvp": _jvp,
    "grad of grad": lambda on: numbax.grad(gradient_norm, argnums=(0, 1, 2, 3))(
        *(numbax.device_put((A, B, T, S), on) if on else (A, B, T, S))),
}


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_derivatives_of_contractions_agree_with_the_cpu_backend(gpu, transform):
    agree_on_device(TRANSFORMS[transform](gpu), TRANSFORMS[transform](None))


def mismatched(a, b):
    return np.tensordot(a, b)


def test_a_tensordot_of_axes_of_other_sizes_is_numpys_error_at_the_users_line(gpu):
    with pytest.raises(numbax.NumbaxShapeError, match="shape-mismatch for sum") as info:
        numbax.jit(mismatched, backend="gpu")(A, B)
    lines, first = inspect.getsourcelines(mismatched)
    assert info.value.origin.lineno == first + 1 and isinstance(info.value, ValueError)


def of_booleans(a, b):
    return np.einsum("ij,jk->ik", a > 0, b > 0)


def test_a_contraction_of_booleans_is_refused_at_the_users_line(gpu):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.jit(of_booleans, backend="gpu")(A, B)
    lines, first = inspect.getsourcelines(of_booleans)
    assert info.value.origin.lineno == first + 1 and "of other than arrays of integers or floats" in str(info.value)


def contracted_once(a, b):
    return np.tensordot(a, b, axes=1)


def test_the_cpu_backends_tensordot_of_an_axis_of_1_against_a_longer_one_is_numpys_error():
    with pytest.raises(ValueError, match="shape-mismatch for sum"):
        numbax.jit(contracted_once)(np.ones((3, 1)), np.ones((4, 3)))
