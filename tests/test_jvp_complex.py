"""Complex numbers in forward mode, against ``jax.jvp`` (complex128 primals and tangents).

Forward mode differentiates a complex value only through primitives whose rules are checked against JAX
for complex operands (the registry's ``complex_verified``, the same entries reverse mode takes; the
non-holomorphic ones, ``np.abs``, ``np.real``, ``np.var``, ``np.std``, ``np.linalg.norm``, have forward
rules written for complex operands that read as the real ones on reals). Any other primitive meeting a
complex value is refused at the user's line. Programs: reverse mode's complex table
(``test_grad_complex``) and linear algebra, reductions and shape functions.
"""
from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from test_grad_complex import GRADS, VJPS, X, Z, _bind, c_abs, c_conj, c_divide, c_exp, c_imag, c_log, c_real, \
    v_holomorphic, v_sqrt_log  # noqa: E402  (also turns on jax_enable_x64)

TZ = np.array([0.2 - 0.5j, -1 + 0.3j, 0.7 + 0.1j])
TX = np.array([0.2, -1.0, 0.7])
A = np.array([[2 + 1j, 0.5, -1j], [0.3 - 0.2j, 1.5 + 0.5j, 0.1], [1j, -0.4, 3 - 1j]])


def l_matmul(z, m):
    return A @ z * z[1]


def l_inverse(z, m):
    return m.linalg.inv(A * z[0] + m.diag(z)) @ z


def l_solve(z, m):
    return m.linalg.solve(A + m.diag(z * z), z)


def l_einsum(z, m):
    return m.einsum("ij,j->i", A, z) + m.dot(z, z)


def r_shapes(z, m):
    w = m.concatenate([m.reshape(z, (3, 1)), m.tile(z[:1], (3, 1))[::-1]], axis=1)
    return m.sum(m.cumprod(w, axis=0) * m.flip(m.transpose(m.stack([w[:, 0], z])), 0))


def r_reductions(z, m):
    return m.prod(z) + m.mean(z ** 2.5) + m.cumsum(z)[-1] * m.where(m.real(z) > 0, z, 1j * z)


def r_power_and_division(z, m):
    return (z + 2.0) ** z / (1.0 + z * z)


LINEAR = [l_matmul, l_inverse, l_solve, l_einsum, r_shapes, r_reductions, r_power_and_division]
REAL_INPUTS = {"r_through_complex", "r_phase", "v_real_to_complex", "v_phase"}


def _primal_and_tangent(fn):
    return (X, TX) if fn.__name__ in REAL_INPUTS else (Z, TZ)


def _assert_jaxs(got, want):
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn", GRADS + VJPS + LINEAR, ids=lambda f: f.__name__)
def test_jvp_follows_jax(fn):
    a, t = _primal_and_tangent(fn)
    got = numbax.jvp(_bind(fn, np), (a,), (t,), backend="python")
    _assert_jaxs(got, jax.jvp(_bind(fn, jnp), (a,), (t,)))


def _numbax_tangent(fn, t):
    f = _bind(fn, np)

    def tangent(p):
        return numbax.jvp(f, (p,), (t,))[1]

    return tangent


# jvp of jvp of a complex-valued function differentiates the cast of the inner tangent to the output's dtype
# (``.astype``)
SECOND_ORDER = [c_real, c_imag, c_divide, c_exp, c_log, v_holomorphic, v_sqrt_log]


@pytest.mark.parametrize("fn", SECOND_ORDER, ids=lambda f: getattr(f, "__name__", None))
def test_second_order_follows_jax(fn):
    """``jvp`` of ``jvp``: the tangent code of tangent code, complex throughout."""
    a, t = _primal_and_tangent(fn)
    got = numbax.jvp(_numbax_tangent(fn, t), (a,), (t,), backend="python")
    _assert_jaxs(got, jax.jvp(lambda p: jax.jvp(_bind(fn, jnp), (p,), (t,))[1], (a,), (t,)))


def compiled_jvp(z, t):
    return numbax.jvp(lambda p: np.sum(np.abs(np.sqrt(p) * A @ p) ** 2) + np.var(p), (z,), (t,))


def test_compiled():
    want = jax.jvp(lambda p: jnp.sum(jnp.abs(jnp.sqrt(p) * A @ p) ** 2) + jnp.var(p), (Z,), (TZ,))
    _assert_jaxs(numbax.jit(compiled_jvp)(Z, TZ), want)


def unchecked(z):
    return np.sum(np.abs(np.linalg.det(A * z[0])))


def test_a_rule_not_checked_for_complex_numbers_is_refused_at_the_line():
    with pytest.raises(numbax.NumbaxDifferentiationError, match="no forward derivative of np.linalg.det for "
                       "complex numbers") as info:
        numbax.jvp(unchecked, (Z,), (TZ,), backend="python")
    assert info.value.origin.filename == __file__


@pytest.mark.parametrize("fn", [c_abs, c_conj], ids=lambda f: f.__name__)
def test_a_second_derivative_of_abs_of_a_complex_value_is_refused(fn):
    """``np.abs``'s forward rule reads ``rt.abs_slope``, constant on the reals only: differentiating it again
    for complex operands is refused, not taken as zero (a wrong second derivative otherwise)."""
    a, t = _primal_and_tangent(fn)
    with pytest.raises(numbax.NumbaxDifferentiationError, match="no forward derivative of rt.abs_slope for "
                       "complex numbers"):
        numbax.jvp(_numbax_tangent(fn, t), (a,), (t,), backend="python")
