"""Complex numbers in reverse mode, against JAX (float64 and complex128): JAX's convention for grad and vjp."""
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax.errors import NumbaxDifferentiationError

jax.config.update("jax_enable_x64", True)

Z = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j])
X = np.array([.3, -.7, 1.1])
CT = np.array([0.5 - 1j, 2 + 0.5j, -1 + 1j])


def c_abs(z, m):
    return m.sum(m.abs(z))


def c_real(z, m):
    return m.sum(m.real(z) ** 2)


def c_imag(z, m):
    return m.sum(m.imag(z) ** 3)


def c_conj(z, m):
    return m.sum(m.abs(m.conj(z) * z[0]))


def c_angle(z, m):
    return m.sum(m.angle(z))


def c_angle_degrees(z, m):
    return m.sum(m.angle(z, True))


def c_multiply(z, m):
    return m.sum(m.abs(z * z * (2 - 1j)))


def c_divide(z, m):
    return m.sum(m.real(1.0 / z))


def c_exp(z, m):
    return m.sum(m.imag(m.exp(z)))


def c_log(z, m):
    return m.sum(m.real(m.log(z)) + m.imag(m.log(z)))


def c_sqrt(z, m):
    return m.sum(m.abs(m.sqrt(z)) ** 2 + m.real(m.sqrt(z)))


def c_sum(z, m):
    return m.abs(m.sum(z)) ** 2


def c_norm(z, m):
    return m.linalg.norm(z)


def c_var(z, m):
    return m.var(z)


def c_std(z, m):
    return m.std(z)


def c_attributes(z, m):
    return m.sum(z.real * z.imag + m.abs(z.conj()))


def r_through_complex(x, m):
    return m.sum(m.abs(x + 1j * x) ** 2)


def r_phase(x, m):
    return m.sum(m.real(m.exp(1j * x)) * m.imag(x * (1 - 2j)))


def r_imag_and_angle_of_reals(x, m):
    # no complex value in the program, but the rules of np.imag and np.angle bring 1j into the cotangents: the
    # gradient of a real input was complex (0 - 1j where JAX's is 0; found by the wide grammar)
    return m.sum(m.imag(x) * m.real(x) + m.angle(x) * x + m.angle(-x, True))


GRADS = [c_abs, c_real, c_imag, c_conj, c_angle, c_angle_degrees, c_multiply, c_divide, c_exp, c_log, c_sqrt, c_sum,
         c_norm, c_var, c_std, c_attributes, r_through_complex, r_phase, r_imag_and_angle_of_reals]


def _bind(fn, m):
    return lambda a: fn(a, m)


@pytest.mark.parametrize("fn", GRADS, ids=lambda f: f.__name__)
def test_grad_follows_jax(fn):
    a = X if fn.__name__.startswith("r_") else Z
    got = numbax.grad(_bind(fn, np))(a)
    want = np.asarray(jax.grad(_bind(fn, jnp))(a))
    assert got.dtype == want.dtype  # a real input's gradient is real
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_imag_and_angle_of_reals_are_jax_in_both_modes_to_second_order(backend):
    fn, v = _bind(r_imag_and_angle_of_reals, np), np.array([0.5, -1.0, 2.0])
    want = np.asarray(jax.grad(_bind(r_imag_and_angle_of_reals, jnp))(X))
    got = numbax.grad(fn, backend=backend)(X)
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    _, tangent = numbax.jvp(fn, (X,), (v,), backend=backend)
    assert np.isrealobj(tangent)
    np.testing.assert_allclose(tangent, jax.jvp(_bind(r_imag_and_angle_of_reals, jnp), (X,), (v,))[1], rtol=1e-12)
    hessian = numbax.hessian(fn, backend=backend)(X)
    assert hessian.dtype == np.float64
    np.testing.assert_allclose(hessian, jax.hessian(_bind(r_imag_and_angle_of_reals, jnp))(X), atol=1e-14)


def test_grad_of_abs_is_the_conjugate_direction():
    got = numbax.grad(_bind(c_abs, np))(np.array([1 + 2j, 3 - 1j]))
    np.testing.assert_allclose(got, np.conj([1 + 2j, 3 - 1j]) / np.abs([1 + 2j, 3 - 1j]), rtol=1e-15)


def v_holomorphic(z, m):
    return m.exp(z) * z


def v_real_to_complex(x, m):
    return x * (1 + 2j) + m.sin(x)


def v_abs(z, m):
    return m.abs(z) + 0j * z


def v_conj_quotient(z, m):
    return m.conj(z) / (z + 3.0)


def v_sqrt_log(z, m):
    return m.sqrt(z) * m.log(z)


def v_phase(x, m):
    return m.exp(1j * x)


def v_shapes(z, m):
    rows = m.repeat(m.squeeze(m.expand_dims(m.atleast_2d(z), 0), axis=0), 2, axis=0)
    return m.sum(rows * m.squeeze(m.atleast_3d(z[0] * z), axis=(0, 2)), axis=0) + m.repeat(m.atleast_1d(z[1]), 3, axis=0) * z


VJPS = [v_holomorphic, v_real_to_complex, v_abs, v_conj_quotient, v_sqrt_log, v_phase, v_shapes]


@pytest.mark.parametrize("fn", VJPS, ids=lambda f: f.__name__)
def test_vjp_with_complex_cotangents_follows_jax(fn):
    a = X if fn in (v_real_to_complex, v_phase) else Z
    _, pull = numbax.vjp(_bind(fn, np), a)
    _, jax_pull = jax.vjp(_bind(fn, jnp), a)
    got, want = pull(CT)[0], np.asarray(jax_pull(CT)[0])
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def complex_output(x):
    return np.sum(x * 1j)


def bool_output(x):
    return np.allclose(x, x)


def int_output(x):
    return np.sum(x > 0)


@pytest.mark.parametrize("fn, dtype, text", [(complex_output, "complex128", "x * 1j"),
                                             (bool_output, "bool", "allclose"), (int_output, "int64", "x > 0")])
def test_grad_requires_real_outputs_as_jax(fn, dtype, text):
    with pytest.raises(TypeError, match=f"grad requires real-valued outputs .* but got {dtype}") as info:
        numbax.grad(fn)(X)
    assert isinstance(info.value, NumbaxDifferentiationError)
    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, source in enumerate(lines) if text in source)
    assert f":{line}:" in str(info.value)


def test_jax_raises_the_same_for_complex_outputs():
    with pytest.raises(TypeError, match="grad requires real-valued outputs .* but got complex128"):
        jax.grad(lambda x: jnp.sum(x * 1j))(X)


def test_holomorphic_is_refused():
    with pytest.raises(NotImplementedError, match="holomorphic"):
        numbax.grad(complex_output, holomorphic=True)
    with pytest.raises(NotImplementedError, match="holomorphic"):
        numbax.value_and_grad(complex_output, holomorphic=True)


def complex_det(a):
    return np.abs(np.linalg.det(a))


def complex_maximum(z):
    return np.sum(np.abs(np.maximum(z, z)))


def test_rules_not_checked_for_complex_numbers_are_refused_at_the_line():
    a = np.array([[1 + 0.5j, 0.2 - 0.1j], [0.3 + 0.2j, 0.9 - 0.4j]])
    with pytest.raises(NumbaxDifferentiationError, match="np.linalg.det for complex numbers") as info:
        numbax.grad(complex_det)(a)
    lines, first = inspect.getsourcelines(complex_det)
    assert f":{first + 1}:" in str(info.value)
    with pytest.raises(numbax.errors.NumbaxDtypeError, match="np.maximum` of complex"):
        numbax.grad(complex_maximum)(Z)
