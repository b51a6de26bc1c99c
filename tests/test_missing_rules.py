"""The rules of issue 14 against ``jax.numpy`` (float64) and central differences: ``np.vdot``, ``np.polyval``,
``np.interp``, ``np.convolve`` (every mode) and reversed cumulative sums. Values outside compiled code (NumPy)
and inside it (the python backend and Numba), gradients and forward derivatives in both backends, Hessians
(forward over reverse) and gradients of gradients (reverse over reverse), ``vmap`` against stacking, and the
refusals: complex ``vdot``, a differentiated ``xp`` of ``interp``, its ``left``/``right``/``period``."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax.errors import NumbaxDifferentiationError, NumbaxError, NumbaxSpecializationError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import fd_grad, jit_or_eager, to_jax  # noqa: E402  (to_jax turns on jax_enable_x64)

M23 = np.array([[0.3, -1.2, 2.0], [0.7, -0.4, 1.1]])
M32 = np.array([[1.0, 0.5], [-0.7, 0.2], [0.9, -1.3]])
P4 = np.array([0.5, -1.0, 2.0, 0.3])
XP = np.array([-2.0, 0.0, 1.0, 3.0])
FP = np.array([1.0, 2.0, 0.0, 5.0])
AT_KNOTS = np.array([-3.0, -2.0, -0.5, 0.0, 0.4, 1.0, 2.5, 3.0, 4.0])  # outside, at every knot, between
A5 = np.array([0.3, -1.2, 2.0, 0.7, -0.4])
V3 = np.array([1.0, 0.5, -0.7])
W9 = np.linspace(-1.0, 2.0, 9)
FILE = os.path.basename(__file__)


def vdot_matrices(a, b):
    return np.vdot(a, b) * np.vdot(a, a)


def polyval_matrix(p, x):
    return np.sum(np.polyval(p, x) ** 2 * M23)


def polyval_number(p, x):
    return np.polyval(p, x) ** 2


def polyval_list(a, x):
    return np.sum(np.polyval([a[0], 2.0, a[1] * a[0]], x) ** 2)


def interp_knots(x, fp):
    return np.sum(np.interp(x, XP, fp) ** 2 * W9)


def interp_number(x, fp):
    return np.interp(x, XP, fp) * np.sum(fp)


def convolve_full(a, v):
    return np.sum(np.convolve(a, v) ** 2 * np.cos(np.arange(7.0)))


def convolve_same(a, v):
    return np.sum(np.convolve(a, v, mode="same") ** 2 * np.cos(np.arange(5.0)))


def convolve_same_longer_v(v, a):
    return np.sum(np.convolve(v, a, "same") ** 2 * np.cos(np.arange(5.0)))


def convolve_valid(a, v):
    return np.sum(np.convolve(a, v, mode="valid") ** 2 * np.cos(np.arange(3.0)))


def cumsum_reversed(x, w):
    return np.sum(np.cumsum(x[::-1])[::-1] ** 2 * w)


def cumsum_reversed_axes(m, w):
    return np.sum(np.cumsum(m[::-1], axis=0) ** 2 * w) + np.sum(np.cumsum(m[:, ::-1], axis=1)[:, ::-1] * w)


CASES = [(vdot_matrices, M23, M32), (polyval_matrix, P4, M23), (polyval_number, P4, 0.7),
         (interp_knots, AT_KNOTS, FP), (interp_number, 0.4, FP),
         (convolve_full, A5, V3), (convolve_same, A5, V3), (convolve_same_longer_v, V3, A5),
         (convolve_valid, A5, V3), (cumsum_reversed, A5, V3[[0, 1, 2, 0, 1]]), (cumsum_reversed_axes, M23, M23.T.T)]
IDS = [case[0].__name__ for case in CASES]
# The cases whose derivatives meet the kinks of interp: central differences cannot read them at the knots
AT_A_KINK = {"interp_knots"}


def _close(got, want, rtol=1e-12, atol=1e-13):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


@pytest.mark.parametrize("fn, a, b", CASES, ids=IDS)
def test_values_and_derivatives_follow_jax(fn, a, b):
    """The value outside and inside compiled code, and grad and jvp in both backends, against JAX."""
    fj = to_jax(fn)
    _close(fn(a, b), fj(a, b))
    tangents = (np.cos(np.asarray(a) + 0.5), np.sin(np.asarray(b) + 0.25))
    tangents = tuple(float(t) if np.ndim(t) == 0 else t for t in tangents)
    want_grad = jax.grad(fj, (0, 1))(a, b)
    want_tangent = jax.jvp(fj, (a, b), tangents)[1]
    for backend in ("python", "cpu"):
        _close(numbax.jit(fn, backend=backend)(a, b), fj(a, b))
        _close(numbax.grad(fn, argnums=(0, 1), backend=backend)(a, b), want_grad, rtol=1e-11)
        _close(numbax.jvp(fn, (a, b), tangents, backend=backend)[1], want_tangent, rtol=1e-11)
    if fn.__name__ not in AT_A_KINK:
        _close(numbax.grad(fn, argnums=(0, 1), backend="python")(a, b), fd_grad(fn, (a, b), (0, 1)), rtol=1e-6,
               atol=1e-7)


@pytest.mark.parametrize("fn, a, b", CASES, ids=IDS)
def test_second_derivatives_follow_jax(fn, a, b):
    """Forward over reverse (hessian) and reverse over reverse (the gradient of a gradient's projection)."""
    fj = to_jax(fn)
    _close(numbax.hessian(fn, argnums=(0, 1), backend="python")(a, b), jit_or_eager(jax.hessian(fj, (0, 1)))(a, b),
           rtol=1e-10, atol=1e-12)
    directions = (np.cos(np.asarray(a)), np.sin(np.asarray(b)))

    def projected(x, y):
        ga, gb = numbax.grad(fn, argnums=(0, 1))(x, y)
        return np.sum(ga * directions[0]) + np.sum(gb * directions[1])

    def projected_jax(x, y):
        ga, gb = jax.grad(fj, (0, 1))(x, y)
        return jnp.sum(ga * directions[0]) + jnp.sum(gb * directions[1])

    _close(numbax.grad(projected, argnums=(0, 1), backend="python")(a, b),
           jit_or_eager(jax.grad(projected_jax, (0, 1)))(a, b), rtol=1e-10, atol=1e-12)


def test_second_derivatives_compiled():
    """A Hessian of each new primitive compiled by Numba."""
    for fn, a, b in (CASES[1], CASES[4], CASES[7]):
        _close(numbax.hessian(fn, argnums=(0, 1))(a, b), jax.hessian(to_jax(fn), (0, 1))(a, b), rtol=1e-10,
               atol=1e-12)


def vdot_rows(a, b):
    return np.vdot(a, b)


def polyval_rows(p, x):
    return np.polyval(p, x)


def interp_rows(x, fp):
    return np.interp(x, XP, fp)


def convolve_rows(a, v):
    return np.convolve(a, v, "same")


@pytest.mark.parametrize("fn, a, b", [(vdot_rows, M23, M23[::-1]), (polyval_rows, M23, A5[:2]),
                                      (interp_rows, np.stack([AT_KNOTS, -AT_KNOTS]), np.stack([FP, FP[::-1]])),
                                      (convolve_rows, M23, np.stack([V3[:2], V3[1:]]))],
                         ids=["vdot", "polyval", "interp", "convolve"])
def test_vmap_and_its_gradient_stack_the_rows(fn, a, b):
    stacked = np.stack([fn(a[i], b[i]) for i in range(len(a))])
    np.testing.assert_allclose(numbax.vmap(fn)(a, b), stacked, rtol=1e-13)
    rows = numbax.vmap(numbax.grad(lambda x, y: np.sum(fn(x, y) ** 2), argnums=(0, 1)))(a, b)
    want = [jax.grad(lambda x, y: jnp.sum(to_jax(fn)(x, y) ** 2), (0, 1))(a[i], b[i]) for i in range(len(a))]
    for k in range(2):
        _close(rows[k], np.stack([w[k] for w in want]), rtol=1e-11)


def test_a_list_of_coefficients_is_an_array():
    """NumPy takes a list display of coefficients (JAX refuses one): numbax makes it an array, whose elements
    may be differentiated."""
    a = np.array([1.5, -0.5])
    np.testing.assert_allclose(numbax.jit(polyval_list)(a, A5), polyval_list(a, A5), rtol=1e-14)
    for backend in ("python", "cpu"):
        _close(numbax.grad(polyval_list, backend=backend)(a, A5), fd_grad(polyval_list, (a, A5)), rtol=1e-6)


def test_a_list_of_differentiated_coefficients_in_forward_mode():
    """The tangent of ``np.array([a, 2.0, a * b])`` is the array of the elements' tangents."""
    a = np.array([1.5, -0.5])
    tangent = numbax.jvp(polyval_list, (a, A5), (np.ones(2), np.zeros(5)))[1]
    np.testing.assert_allclose(tangent, np.sum(fd_grad(polyval_list, (a, A5))), rtol=1e-6)


def test_values_of_integers_and_scalars():
    """``np.polyval`` of integers stays integer; lists of numbers are arrays; a number ``x`` gives a number."""
    ints = numbax.jit(polyval_rows)(np.array([1, 2, 3]), np.array([2, 3]))
    assert ints.dtype == np.int64 and ints.tolist() == [11, 18]
    assert numbax.jit(polyval_rows)(np.array([1, 2, 3]), 0.5) == 4.25
    assert numbax.jit(vdot_rows)(np.arange(6).reshape(2, 3), np.arange(6).reshape(3, 2)) == 55
    z = np.array([1 + 2j, 3 - 1j])
    assert numbax.jit(vdot_rows)(z, z[::-1]) == np.vdot(z, z[::-1])  # the first operand conjugated
    np.testing.assert_allclose(numbax.jit(interp_rows)(AT_KNOTS, FP), np.interp(AT_KNOTS, XP, FP), rtol=1e-15)
    for mode in ("full", "same", "valid"):
        for a, v in ((A5, V3), (V3, A5), (np.array([1, 2, 3]), np.array([4, 5]))):
            np.testing.assert_allclose(numbax.jit(convolve_mode, static_argnums=2)(a, v, mode),
                                       np.convolve(a, v, mode), rtol=1e-15)


def convolve_mode(a, v, mode):
    return np.convolve(a, v, mode)


def vdot_complex(a, b):
    return np.real(np.vdot(a, b))


def interp_xp(x, xp):
    return np.sum(np.interp(x, xp, FP))


def interp_left(x, fp):
    return np.sum(np.interp(x, XP, fp, left=0.0))


def interp_right_positional(x, fp):
    return np.sum(np.interp(x, XP, fp, 0.0, 1.0))


def interp_period(x, fp):
    return np.sum(np.interp(x, XP, fp, period=4.0))


def _line(fn):
    return f"{FILE}:{fn.__code__.co_firstlineno + 1}"


def test_refusals_name_the_users_line():
    z = np.array([1 + 2j, 3 - 1j])
    with pytest.raises(NumbaxDifferentiationError, match=_line(vdot_complex)):
        numbax.grad(vdot_complex)(z, z)
    with pytest.raises(NumbaxDifferentiationError, match=f"(?s){_line(vdot_complex)}.*np.vdot for complex"):
        numbax.jvp(vdot_complex, (z, z), (z, z))
    with pytest.raises(NumbaxDifferentiationError, match=f"(?s){_line(interp_xp)}.*argument `xp`"):
        numbax.grad(interp_xp, argnums=1)(AT_KNOTS, XP)
    with pytest.raises(NumbaxDifferentiationError, match=f"(?s){_line(interp_xp)}.*argument `xp`"):
        numbax.jvp(interp_xp, (AT_KNOTS, XP), (AT_KNOTS, XP))
    for fn in (interp_left, interp_period):
        for call in (lambda: numbax.grad(fn)(AT_KNOTS, FP), lambda: numbax.jit(fn)(AT_KNOTS, FP)):
            with pytest.raises(NumbaxSpecializationError, match=f"(?s){_line(fn)}.*keyword argument"):
                call()
    with pytest.raises(NumbaxDifferentiationError, match=f"(?s){_line(interp_right_positional)}.*too many"):
        numbax.grad(interp_right_positional)(AT_KNOTS, FP)
    with pytest.raises(NumbaxError, match=_line(interp_right_positional)):
        numbax.jit(interp_right_positional)(AT_KNOTS, FP)


CUMULATIVE = [(name, axis, reverse) for name in ("cumsum", "cumprod", "cumlogsumexp") for axis in (0, -1)
              for reverse in (False, True)]


@pytest.mark.parametrize("name, axis, reverse", CUMULATIVE, ids=[f"{n}-{a}-{r}" for n, a, r in CUMULATIVE])
def test_lax_cumulative_reductions_follow_jax(name, axis, reverse):
    """``numbax.lax.cumsum/cumprod/cumlogsumexp(operand, axis, reverse)`` against ``jax.lax``: values outside and
    inside compiled code, grad and jvp compiled, the Hessian (python backend)."""
    def loss(x):
        return np.sum(getattr(numbax.lax, name)(x, axis=axis, reverse=reverse) ** 2 * M23)

    def jax_loss(x):
        return jnp.sum(getattr(jax.lax, name)(x, axis=axis % 2, reverse=reverse) ** 2 * M23)

    x = M23[::-1] * 0.9
    _close(getattr(numbax.lax, name)(x, axis=axis, reverse=reverse),
           getattr(jax.lax, name)(x, axis=axis % 2, reverse=reverse))
    _close(numbax.jit(loss)(x), jax_loss(x))
    _close(numbax.grad(loss)(x), jit_or_eager(jax.grad(jax_loss))(x))
    _close(numbax.jvp(loss, (x,), (M23,))[1], jit_or_eager(lambda x: jax.jvp(jax_loss, (x,), (M23,))[1])(x),
           rtol=1e-11)
    _close(numbax.hessian(loss, backend="python")(x), jit_or_eager(jax.hessian(jax_loss))(x), rtol=1e-10,
           atol=1e-12)


def cumlogsumexp_far(x):
    return np.sum(numbax.lax.cumlogsumexp(x, reverse=True) * np.arange(4.0))


def test_cumlogsumexp_does_not_overflow():
    x = np.array([-1000.0, 0.0, 800.0, 3.0])
    want = jax.lax.cumlogsumexp(x, reverse=True)
    _close(numbax.lax.cumlogsumexp(x, reverse=True), want)
    _close(numbax.jit(cumlogsumexp_far)(x), jnp.sum(want * jnp.arange(4.0)))
    _close(numbax.grad(cumlogsumexp_far)(x),
           jax.grad(lambda v: jnp.sum(jax.lax.cumlogsumexp(v, reverse=True) * jnp.arange(4.0)))(x))


def test_lax_cumsum_under_vmap_stacks_the_rows():
    def rows(x):
        return numbax.lax.cumsum(x, reverse=True)

    np.testing.assert_allclose(numbax.vmap(rows)(M23), np.stack([rows(r) for r in M23]), rtol=1e-14)


def polyval_of_a_matrix(p, x):
    return np.sum(np.polyval(p, x))


def test_operands_that_must_be_vectors_are_refused_at_the_users_line():
    """``np.polyval``'s coefficients, ``np.interp``'s ``xp``/``fp`` and ``np.convolve``'s operands are vectors."""
    for call in (lambda: numbax.jit(polyval_of_a_matrix)(np.ones((2, 2)), A5),
                 lambda: numbax.grad(polyval_of_a_matrix)(np.ones((2, 2)), A5),
                 lambda: numbax.jvp(polyval_of_a_matrix, (np.ones((2, 2)), A5), (np.ones((2, 2)), A5))):
        with pytest.raises(NumbaxSpecializationError, match=f"(?s){_line(polyval_of_a_matrix)}.*1-D array"):
            call()
    with pytest.raises(NumbaxSpecializationError, match=f"(?s){_line(convolve_rows)}.*operand 2"):
        numbax.grad(lambda a, v: np.sum(convolve_rows(a, v)), argnums=1)(A5, M23)
