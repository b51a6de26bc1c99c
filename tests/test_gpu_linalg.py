"""Products of stacks of matrices on the GPU backend, in Numba's CUDA simulator: ``a @ b`` of operands at least
2-d with more than 2 dimensions between them (their leading axes broadcast as NumPy's) runs as ``gr.matmul``
(cuBLAS through CuPy, the simulator's kernel once per matrix), under ``jit``, ``grad``, ``jvp`` and ``grad`` of
``grad``; each agrees with the CPU backend (values at rtol 1e-12, shapes, dtypes) and leaves its results on the
device. A vector times a stack of matrices is refused at the user's line."""
import inspect

import numpy as np
import pytest

import numbax
from numbax import tree_util

RNG = np.random.default_rng(7)
A = RNG.normal(size=(2, 3, 4))
B = RNG.normal(size=(4, 2))
C = RNG.normal(size=(3, 1, 4, 2))


def stacked(a, b):
    return np.sum(np.matmul(a, b) ** 2)


def broadcast(a, c):
    return np.sum(np.sin(a @ c) * np.arange(2.0))


def products(a, c):
    return a @ c, np.matmul(a.astype(np.float32), c[0, 0].astype(np.float32)), (a > 0).astype(np.int64) @ c


def second(a, b):
    return np.sum(numbax.grad(stacked, argnums=1)(a, b) ** 2)


def _check(got, expected):
    for leaf in tree_util.tree_leaves(got):
        assert not isinstance(leaf, np.ndarray) or leaf.ndim == 0, f"a result on the host: {leaf!r}"
    got = numbax.device_get(got)
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected)
    for e, g in zip(tree_util.tree_leaves(expected), tree_util.tree_leaves(got)):
        e, g = np.asarray(e), np.asarray(g)
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(g, e, rtol=1e-5 if e.dtype == np.float32 else 1e-12)


def _jvp(fn, on):
    def run(*primals):
        tangents = tuple(np.linspace(-1.0, 1.0, np.size(p)).reshape(np.shape(p)) for p in (A, B if fn is stacked
                                                                                               else C))
        return numbax.jvp(fn, primals, numbax.device_put(tangents, on) if on else tangents)
    return run


TRANSFORMS = {"jit": lambda fn, on: numbax.jit(fn), "grad": lambda fn, on: numbax.grad(fn, argnums=(0, 1)),
              "jvp": _jvp}


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("fn, args", [(stacked, (A, B)), (broadcast, (A, C))], ids=["stacked", "broadcast"])
def test_products_of_stacks_of_matrices_agree_with_the_cpu_backend(gpu, transform, fn, args):
    expected = TRANSFORMS[transform](fn, None)(*args)
    _check(TRANSFORMS[transform](fn, gpu)(*numbax.device_put(args, gpu)), expected)


@pytest.mark.parametrize("fn, args, transform", [(products, (A, C), numbax.jit),
                                                 (second, (A, B), lambda f: numbax.grad(f, argnums=(0, 1)))],
                         ids=["dtypes", "second-order"])
def test_dtypes_and_second_derivatives_of_stacks_agree_with_the_cpu_backend(gpu, fn, args, transform):
    _check(transform(fn)(*numbax.device_put(args, gpu)), transform(fn)(*args))


def vector_times_stack(v, c):
    return np.sum(v @ c)


def test_a_vector_times_a_stack_of_matrices_is_refused_at_the_users_line(gpu):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.jit(vector_times_stack, backend="gpu")(np.ones(4), C)
    lines, first = inspect.getsourcelines(vector_times_stack)
    assert info.value.origin.filename == inspect.getsourcefile(vector_times_stack)
    assert info.value.origin.lineno == first + 1 and "`v @ c`" in str(info.value)
