"""``numbax.lax``'s elementwise functions against ``jax.lax`` (float64): values outside compiled code and inside
it (both backends), ``grad`` and ``jvp`` compiled, a Hessian (python backend) where the function is smooth, and
integer operands where ``jax.lax`` takes them (``div`` rounds toward zero, ``rem`` keeps the dividend's sign)."""
import os
import sys

import jax
import numpy as np
import pytest

import numbax
from numbax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

REAL = np.array([[-2.3, -0.7, 0.4], [1.1, 2.6, -1.6]])
UNIT = np.array([[-0.8, -0.3, 0.2], [0.45, 0.7, -0.55]])
POS = np.array([[0.3, 1.2, 2.5], [4.0, 0.8, 1.7]])
GT1 = POS + 1.0
WIDE = np.array([[-2.5, -1.5, -0.5], [0.5, 1.5, 2.7]])  # halves: where the rounding methods differ
SMALL = np.array([[1.3, -0.9, 2.2], [-1.7, 0.6, 1.9]])  # divisors with |x / y| above and below 1

UNARY = {"exp": REAL, "exp2": REAL, "log": POS, "log1p": POS, "expm1": REAL, "sin": REAL, "cos": REAL, "tan": UNIT,
         "asin": UNIT, "acos": UNIT, "atan": REAL, "sinh": REAL, "cosh": REAL, "tanh": REAL, "asinh": REAL,
         "acosh": GT1, "atanh": UNIT, "sqrt": POS, "rsqrt": POS, "cbrt": REAL, "abs": REAL, "neg": REAL,
         "sign": REAL, "floor": WIDE, "ceil": WIDE, "round": WIDE, "square": REAL, "logistic": REAL, "erf": REAL,
         "erfc": REAL, "lgamma": POS, "digamma": POS}
BINARY = {"atan2": (REAL, SMALL), "pow": (POS, REAL), "add": (REAL, SMALL), "sub": (REAL, SMALL),
          "mul": (REAL, SMALL), "div": (REAL, SMALL), "rem": (REAL * 3, SMALL), "max": (REAL, SMALL),
          "min": (REAL, SMALL)}
# no second derivative rule: digamma's is trigamma's first (refused, as numbax.scipy's)
NO_HESSIAN = {"digamma"}


def _close(got, want, rtol=1e-12, atol=1e-14):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


def _check(loss, jax_loss, args, hessian=True):
    nums = tuple(range(len(args)))
    _close(loss(*args), jax_loss(*args))
    tangents = tuple(np.cos(a) for a in args)
    for backend in ("python", "cpu"):
        _close(numbax.jit(loss, backend=backend)(*args), jax_loss(*args))
    grads, want = numbax.grad(loss, argnums=nums)(*args), jax.grad(jax_loss, nums)(*args)
    for got, expected in zip(grads, want):
        _close(got, expected, rtol=1e-11, atol=1e-13)
    _close(numbax.jvp(loss, args, tangents)[1], jax.jvp(jax_loss, args, tangents)[1], rtol=1e-11, atol=1e-13)
    if hessian:
        got = numbax.hessian(loss, argnums=nums, backend="python")(*args)
        want = jax.hessian(jax_loss, nums)(*args)
        for i in nums:
            for j in nums:
                _close(got[i][j], want[i][j], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_follows_jax_lax(name):
    def loss(x):
        return np.sum(getattr(lax, name)(x) * REAL)

    def jax_loss(x):
        return jax.numpy.sum(getattr(jax.lax, name)(x) * REAL)

    _close(getattr(lax, name)(UNARY[name]), getattr(jax.lax, name)(UNARY[name]))
    _check(loss, jax_loss, (UNARY[name],), hessian=name not in NO_HESSIAN)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_follows_jax_lax(name):
    def loss(x, y):
        return np.sum(getattr(lax, name)(x, y) ** 2 * REAL)

    def jax_loss(x, y):
        return jax.numpy.sum(getattr(jax.lax, name)(x, y) ** 2 * REAL)

    _close(getattr(lax, name)(*BINARY[name]), getattr(jax.lax, name)(*BINARY[name]))
    _check(loss, jax_loss, BINARY[name])


def integer_pow_cubed(x):
    return np.sum(lax.integer_pow(x, 3) * REAL) + np.sum(lax.integer_pow(x, 0)) + np.sum(lax.integer_pow(x, -2))


def clamped(lo, x, hi):
    return np.sum(lax.clamp(lo, x, hi) ** 2 * REAL)


def test_integer_pow_and_clamp_follow_jax_lax():
    _check(integer_pow_cubed, to_jax_integer_pow, (REAL,))
    x = np.array([[-2.0, -1.0, 0.5], [1.0, 2.0, -0.3]])  # ties with both bounds
    lo, hi = np.full((2, 3), -1.0), np.full((2, 3), 1.0)
    _close(lax.clamp(lo, x, hi), jax.lax.clamp(lo, x, hi))

    def jax_clamped(lo, x, hi):
        return jax.numpy.sum(jax.lax.clamp(lo, x, hi) ** 2 * REAL)

    _check(clamped, jax_clamped, (lo, x, hi), hessian=False)
    _close(numbax.jit(clamped)(-1.0, x, 1.0), jax_clamped(-1.0, x, 1.0))
    _close(numbax.grad(clamped, argnums=1)(-1.0, x, 1.0), jax.grad(jax_clamped, 1)(-1.0, x, 1.0))


def to_jax_integer_pow(x):
    return jax.numpy.sum(jax.lax.integer_pow(x, 3) * REAL) + jax.numpy.sum(jax.lax.integer_pow(x, 0)) + \
        jax.numpy.sum(jax.lax.integer_pow(x, -2))


def rounded(x):
    return lax.round(x), lax.round(x, 1), lax.round(x, rounding_method=jax.lax.RoundingMethod.TO_NEAREST_EVEN)


def test_round_takes_jaxs_rounding_methods():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999999999999994, -3.7])
    want = (jax.lax.round(x), jax.lax.round(x, 1), jax.lax.round(x, 1))
    for got in (rounded(x), numbax.jit(rounded)(x), numbax.jit(rounded, backend="python")(x)):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def integer_ops(x, y):
    return (lax.div(x, y), lax.rem(x, y), lax.sign(x), lax.abs(x), lax.neg(x), lax.max(x, y), lax.min(x, y),
            lax.add(x, y), lax.sub(x, y), lax.mul(x, y), lax.integer_pow(x, 2), lax.clamp(-3, x, 4))


def test_integers_follow_jax_lax():
    x, y = np.array([7, -7, 7, -7, 0, 5]), np.array([2, 2, -2, -2, 3, 5])
    jax_ops = (jax.lax.div, jax.lax.rem, jax.lax.sign, jax.lax.abs, jax.lax.neg, jax.lax.max, jax.lax.min,
               jax.lax.add, jax.lax.sub, jax.lax.mul)
    want = [f(x, y) if f.__name__ not in ("sign", "abs", "neg") else f(x) for f in jax_ops]
    want += [jax.lax.integer_pow(x, 2), jax.lax.clamp(-3, x, 4)]
    for got in (integer_ops(x, y), numbax.jit(integer_ops)(x, y)):
        for g, w in zip(got, want):
            assert np.asarray(g).dtype.kind == "i"
            np.testing.assert_array_equal(g, w)


def fmods(x, y):
    return np.fmod(x, y), np.fmod(x, 2), np.fmod(-x, y)


def test_np_fmod_of_integers_compiled_is_numpys():
    """Numba's own ``np.fmod`` of integer arrays gave ``fmod(7, -2) == 7`` and ``fmod(-7, 2) == 1``."""
    x, y = np.array([7, -7, 7, -7, 0, 5]), np.array([2, 2, -2, -2, 3, 5])
    for got, want in zip(numbax.jit(fmods)(x, y), fmods(x, y)):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(numbax.jit(fmods)(x * 1.5, y), fmods(x * 1.5, y)):
        np.testing.assert_array_equal(got, want)


def row_ops(x, y):
    return lax.clamp(-1.0, x, 1.0) + lax.round(x) + lax.rsqrt(y) + lax.rem(x, y) + lax.logistic(x)


def test_vmap_stacks_the_rows():
    x, y = REAL * 1.3, POS
    np.testing.assert_allclose(numbax.vmap(row_ops)(x, y), np.stack([row_ops(a, b) for a, b in zip(x, y)]),
                               rtol=1e-14)
