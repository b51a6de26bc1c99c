"""Products of stacks of matrices and Cholesky factors on the GPU backend, in Numba's CUDA simulator: ``a @ b`` of
operands at least 2-d with more than 2 dimensions between them (their leading axes broadcast as NumPy's) runs as
``gr.matmul`` (cuBLAS through CuPy, the simulator's kernel once per matrix); ``np.linalg.cholesky`` as
``gr.cholesky`` (cuSOLVER through CuPy, the simulator's one-thread kernel), with ``np.tril`` and ``np.triu``;
the 2-norm of matrices (the largest singular value: CuPy's SVD, the simulator's Jacobi kernel) under ``jit``;
under ``jit``, ``grad``, ``jvp`` and ``grad`` of ``grad`` each agrees with the CPU backend (values at rtol 1e-12,
shapes, dtypes) and leaves its results on the device. A vector times a stack of matrices is refused at the user's
line, as is the derivative of a 2-norm of matrices; a matrix that is not positive definite is NumPy's
``LinAlgError``, as on the CPU backend."""
import inspect

import numpy as np
import pytest

import numbax
from gpu_agreement import agree_on_device

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
    agree_on_device(TRANSFORMS[transform](fn, gpu)(*numbax.device_put(args, gpu)), expected)


@pytest.mark.parametrize("fn, args, transform", [(products, (A, C), numbax.jit),
                                                 (second, (A, B), lambda f: numbax.grad(f, argnums=(0, 1)))],
                         ids=["dtypes", "second-order"])
def test_dtypes_and_second_derivatives_of_stacks_agree_with_the_cpu_backend(gpu, fn, args, transform):
    agree_on_device(transform(fn)(*numbax.device_put(args, gpu)), transform(fn)(*args))


def vector_times_stack(v, c):
    return np.sum(v @ c)


def test_a_vector_times_a_stack_of_matrices_is_refused_at_the_users_line(gpu):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.jit(vector_times_stack, backend="gpu")(np.ones(4), C)
    lines, first = inspect.getsourcelines(vector_times_stack)
    assert info.value.origin.filename == inspect.getsourcefile(vector_times_stack)
    assert info.value.origin.lineno == first + 1 and "`v @ c`" in str(info.value)


P = np.array([[4.0, 1.0, -0.5], [1.0, 3.0, 0.25], [-0.5, 0.25, 2.0]])
Q = np.array([[0.3, -0.2, 0.1], [0.5, 0.1, -0.4], [0.2, 0.7, 0.3]])


def factors(p, q):
    return (np.linalg.cholesky(p), np.linalg.cholesky(p.astype(np.float32)), np.tril(q), np.triu(q, 1),
            np.tril(q, -1), np.triu(p, -1), np.linalg.cholesky(q @ q.T + np.eye(3)))


def log_det(p, q):
    factor = np.linalg.cholesky(p + q @ q.T)
    return 2.0 * np.sum(np.log(np.diag(factor))) + np.sum(factor * q) + np.sum(np.triu(q) ** 2)


def log_det_gradient_norm(p, q):
    return np.sum(numbax.grad(log_det, argnums=(0, 1))(p, q)[1] ** 2)


def test_cholesky_factors_and_triangles_agree_with_numpy_and_the_cpu_backend(gpu):
    got = numbax.jit(factors)(*numbax.device_put((P, Q), gpu))
    agree_on_device(got, numbax.jit(factors)(P, Q))
    agree_on_device(got, factors(P, Q))


def _cholesky_jvp(on):
    tangents = (np.linspace(-1.0, 1.0, 9).reshape(3, 3), np.linspace(0.5, -0.5, 9).reshape(3, 3))
    return lambda p, q: numbax.jvp(log_det, (p, q), numbax.device_put(tangents, on) if on else tangents)


@pytest.mark.parametrize("transform", ["grad", "jvp", "grad of grad"])
def test_derivatives_of_cholesky_factors_agree_with_the_cpu_backend(gpu, transform):
    made = {"grad": lambda on: numbax.grad(log_det, argnums=(0, 1)), "jvp": _cholesky_jvp,
            "grad of grad": lambda on: numbax.grad(log_det_gradient_norm, argnums=(0, 1))}[transform]
    agree_on_device(made(gpu)(*numbax.device_put((P, Q), gpu)), made(None)(P, Q))


def factor(p):
    return np.linalg.cholesky(p)


def test_a_matrix_that_is_not_positive_definite_is_numpys_error(gpu):
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        numbax.jit(factor)(-P)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        numbax.jit(factor)(numbax.device_put(-P, gpu))


T = RNG.normal(size=(2, 3, 4))


def spectral_norms(x):
    return (np.linalg.norm(x[0], ord=2), np.linalg.norm(x, 2, axis=(2, 0)), np.linalg.norm(x[1].T, 2, keepdims=True),
            np.linalg.norm(x.astype(np.float32), 2, (0, 1)), np.linalg.norm(x, ord=2, axis=(1, 2), keepdims=True),
            np.linalg.norm(x[:, :1], 2, axis=(1, 2)))


def test_two_norms_of_matrices_agree_with_numpy_and_the_cpu_backend(gpu):
    got = numbax.jit(spectral_norms)(numbax.device_put(T, gpu))
    agree_on_device(got, numbax.jit(spectral_norms)(T))
    agree_on_device(got, spectral_norms(T))


def spectral_norm(a):
    return np.linalg.norm(a, 2)


def test_the_derivative_of_a_two_norm_of_a_matrix_is_refused_at_the_users_line(gpu):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.grad(spectral_norm)(numbax.device_put(P, gpu))
    lines, first = inspect.getsourcelines(spectral_norm)
    assert info.value.origin.lineno == first + 1
