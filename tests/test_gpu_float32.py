"""Derivatives of float32 programs on the GPU backend, in Numba's CUDA simulator: ``grad`` and
``value_and_grad`` return a float32 parameter's gradient in float32 (``rt.primal_dtype``, which the GPU lowering
rewrites into a cast; found refused by the differential tester on the GPU backend), ``jvp`` keeps float32, and
each agrees with the CPU backend (shapes, dtypes, values at rtol 1e-5)."""
import numpy as np
import pytest

import numbax
from gpu_agreement import agree_on_device

X = np.linspace(-1.0, 2.0, 6).astype(np.float32)
S = np.float32(1.5)


def loss(x, s):
    return np.sum(np.sin(x) * s + x * x) / s


TRANSFORMS = {
    "grad of the array": lambda backend: numbax.grad(loss, backend=backend),
    "grad of the number": lambda backend: numbax.grad(loss, argnums=1, backend=backend),
    "grad of both": lambda backend: numbax.grad(loss, argnums=(0, 1), backend=backend),
    "value_and_grad": lambda backend: numbax.value_and_grad(loss, argnums=(0, 1), backend=backend),
    "jvp": lambda backend: lambda x, s: numbax.jvp(loss, (x, s), (x * 0 + 1, s * 0 + np.float32(0.5)),
                                                   backend=backend),
}


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_float32_derivatives_agree_with_the_cpu_backend(gpu, transform):
    expected = TRANSFORMS[transform]("cpu")(X, S)
    got = TRANSFORMS[transform]("gpu")(*numbax.device_put((X, S), gpu))
    agree_on_device(got, expected)
    dtypes = {np.asarray(leaf).dtype for leaf in numbax.tree_util.tree_leaves(numbax.device_get(got))}
    assert dtypes == {np.dtype(np.float32)}, dtypes
