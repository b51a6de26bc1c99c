"""Second derivatives of complex programs, against JAX (complex128): forward over reverse (``jvp`` of ``grad``)
and reverse over reverse (``grad`` of a real function of ``grad``), and casts between real and complex values
(``.astype``) in both modes to second order. Reverse mode's own helpers are linear in the cotangent
(``rt.unbroadcast``, ``rt.unreduce``, ``rt.match_kind``, ``rt.stored_cotangent``), so their rules hold for
complex values; ``rt.abs_slope`` (``z / |z|`` in ``np.abs``'s gradient) is constant on the reals only, and a
derivative through it of a complex value is refused at the user's line in both modes."""
import inspect
import os
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from test_grad_complex import X, Z, _bind, c_abs, c_angle, c_angle_degrees, c_divide, c_exp, c_imag, c_log, \
    c_real, c_sum, r_imag_and_angle_of_reals, r_phase  # noqa: E402  (also turns on jax_enable_x64)

TZ = np.array([0.2 - 0.5j, -1 + 0.3j, 0.7 + 0.1j])
TX = np.array([1.0, 0.5, -2.0])


def f_to_c(x, m):
    y = (x * x).astype(m.complex128)
    v = y * (1 + 2j) + 1j
    return m.sum(m.real(v * m.conj(v)))


def c_to_c(z, m):
    w = (z * z).astype(m.complex128)
    v = w + 1j * z
    return m.sum(m.real(v * m.conj(v)))


def c_to_f(z, m):
    r = _to_real(z * (2 - 1j), m)
    return m.sum(r * r * m.real(z))


def _to_real(v, m):
    """NumPy's cast to a real dtype keeps the real part (with a ComplexWarning); JAX's is deprecated: its twin
    takes the real part."""
    return v.astype(np.float64) if m is np else m.real(v)


SECOND_ORDER = [c_real, c_imag, c_angle, c_angle_degrees, c_divide, c_exp, c_log, r_phase, r_imag_and_angle_of_reals,
                f_to_c, c_to_c, c_to_f]


def _point(fn):
    return (X, TX) if fn.__name__.startswith(("r_", "f_")) else (Z, TZ)


def _squared_gradient(grad, m):
    """A real function of a (complex) gradient, for reverse mode over it."""
    def outer(p):
        q = grad(p)
        return m.sum(m.real(q * m.conj(q)) + 0.5 * m.real(q))

    return outer


def _assert_jaxs(got, want):
    want = np.asarray(want)
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def _in_both_orders(fn, backend):
    """numbax's and JAX's forward over reverse and reverse over reverse of ``fn``."""
    a, t = _point(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        grad = numbax.grad(_bind(fn, np), backend=backend)
        forward = numbax.jvp(grad, (a,), (t,), backend=backend)[1]
        reverse = numbax.grad(_squared_gradient(grad, np), backend=backend)(a)
    jax_grad = jax.grad(_bind(fn, jnp))
    return [(forward, jax.jvp(jax_grad, (a,), (t,))[1]), (reverse, jax.grad(_squared_gradient(jax_grad, jnp))(a))]


@pytest.mark.parametrize("fn", SECOND_ORDER, ids=lambda f: f.__name__)
def test_second_derivatives_follow_jax(fn):
    for got, want in _in_both_orders(fn, "python"):
        _assert_jaxs(got, want)


@pytest.mark.parametrize("fn", [c_log, r_phase, f_to_c], ids=lambda f: f.__name__)
def test_compiled_second_derivatives_follow_jax(fn):
    for got, want in _in_both_orders(fn, "cpu"):
        _assert_jaxs(got, want)


@pytest.mark.parametrize("fn", [f_to_c, c_to_c, c_to_f], ids=lambda f: f.__name__)
def test_casts_follow_jax_in_forward_mode_to_second_order(fn):
    """A cast to a real dtype keeps the real part of the tangent; to complex, the tangent as it is."""
    a, t = _point(fn)
    f = _bind(fn, np)

    def inner_tangent(p):
        return numbax.jvp(f, (p,), (t,), backend="python")[1]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        _assert_jaxs(numbax.jvp(f, (a,), (t,), backend="python")[1], jax.jvp(_bind(fn, jnp), (a,), (t,))[1])
        _assert_jaxs(numbax.grad(f, backend="python")(a), jax.grad(_bind(fn, jnp))(a))
        _assert_jaxs(numbax.jvp(inner_tangent, (a,), (t,), backend="python")[1],
                     jax.jvp(lambda p: jax.jvp(_bind(fn, jnp), (p,), (t,))[1], (a,), (t,))[1])


def _abs_line(fn):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, source in enumerate(lines) if "m.abs(" in source)


@pytest.mark.parametrize("fn", [c_abs, c_sum], ids=lambda f: f.__name__)
def test_a_second_derivative_through_abs_of_a_complex_value_is_refused_in_both_modes(fn):
    grad = numbax.grad(_bind(fn, np), backend="python")
    for mode, second in [("forward derivative", lambda: numbax.jvp(grad, (Z,), (TZ,), backend="python")),
                         ("derivative", lambda: numbax.grad(_squared_gradient(grad, np), backend="python")(Z))]:
        with pytest.raises(numbax.NumbaxDifferentiationError,
                           match=f"no {mode} of rt.abs_slope for complex numbers") as info:
            second()
        assert info.value.origin.lineno == _abs_line(fn)


def test_a_value_of_an_unknown_kind_made_without_a_derivative_from_a_complex_one_is_refused():
    """``constants_of_complex``, which both modes run: a primitive carrying no derivative, not checked for
    complex operands, whose result's kind was not inferred (``np.fix``: none is) is refused where it reads a
    known complex value, not taken as zero; one known to give integers (``np.argmax``) is not."""
    import gast

    from numbax.transforms.grad.complex_checks import constants_of_complex

    fdef = gast.parse("def f(z):\n    s = np.fix(z)\n    k = np.argmax(z)\n    return s\n").body[0]
    kinds = {"z": "c", "k": "i"}
    with pytest.raises(numbax.NumbaxDifferentiationError, match="no derivative of np.fix for complex numbers"):
        constants_of_complex(fdef, {"z"}, kinds.get)
    fdef.body.pop(0)
    assert constants_of_complex(fdef, {"z"}, {"z": "c"}.get) == {}  # np.argmax's integers, even not inferred


def test_a_value_of_an_unknown_kind_into_a_primitive_of_an_unknown_kind_is_checked_when_running():
    """Neither the operand's kind nor the result's inferred (``np.fix`` of ``z``, a value no rule gave an abstract
    value): the generated code checks the operand after the statement (``rt.check_real``), as it does where the
    result is known to be a float."""
    import gast

    from numbax.transforms.grad.complex_checks import constants_of_complex

    fdef = gast.parse("def f(z):\n    s = np.fix(z)\n    return s\n").body[0]
    checks = constants_of_complex(fdef, {"z"}, {}.get)
    assert [gast.unparse(c) for c in checks[id(fdef.body[0])]] == [
        "rt.check_real(z, \"numbax has no derivative of np.fix for complex numbers checked against JAX's convention\","
        " '')"]
