"""Complex numbers on the GPU backend, in Numba's CUDA simulator: the elementwise operations whose kernel templates
compute NumPy's results of complex operands too (arithmetic, ``abs``, ``np.real``, ``np.conj``:
``Elementwise.complex_numbers``) run as kernels and agree with NumPy and the CPU backend, in ``jit`` and ``jvp``;
every other operation of a complex operand (``math``'s functions, ``gr``'s device functions for real numbers,
casts) is refused at the user's line, as is a complex number in one example's body of a ``vmap``
(each was a silent real-valued result before)."""
import inspect

import numpy as np
import pytest

import numbax
from gpu_agreement import agree_on_device

Z = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j, 0j])


def magnitude(z):
    return np.abs(z) + np.real(z * np.conj(z)), np.conjugate(z) / (z + 2.0) - z.conj()


def energy(z):
    return np.sum(np.real(z * np.conj(z)) * np.arange(4.0))


def test_complex_arithmetic_agrees_with_numpy_and_the_cpu_backend(gpu):
    got = numbax.jit(magnitude)(numbax.device_put(Z, gpu))
    agree_on_device(got, numbax.jit(magnitude)(Z))
    agree_on_device(got, magnitude(Z))


def test_the_tangent_of_complex_arithmetic_agrees_with_the_cpu_backend(gpu):
    tangent = np.array([0.5 - 1j, 2j, -1.0 + 0j, 1 + 1j])
    expected = numbax.jvp(energy, (Z,), (tangent,))
    agree_on_device(numbax.jvp(energy, (numbax.device_put(Z, gpu),), (numbax.device_put(tangent, gpu),)), expected)


def exponential(z):
    return np.exp(z) * 2.0


def signs(z):
    return np.sign(z)


def magnitudes(z):
    return np.sum(np.abs(z))


@pytest.mark.parametrize("fn, transform, construct", [
    (exponential, numbax.jit, "`np.exp` of complex numbers"),
    (signs, numbax.jit, "`np.sign` of complex numbers"),
    (exponential, numbax.vmap, "complex numbers in one example's body"),
    (magnitudes, lambda f: (lambda z: numbax.jvp(f, (z,), (z,))), "`rt.abs_slope` of complex numbers")])
def test_operations_for_real_numbers_of_complex_operands_are_refused_at_the_users_line(gpu, fn, transform,
                                                                                      construct):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        transform(fn)(numbax.device_put(Z, gpu))
    lines, first = inspect.getsourcelines(fn)
    assert info.value.origin.lineno == first + 1 and construct in str(info.value)
