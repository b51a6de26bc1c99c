"""Tests of ``numbax.test_util``: ``check_grads`` passes correct derivatives and catches wrong ones.

``numbax.jvp``/``numbax.vjp`` are monkeypatched with JAX's, run on the same NumPy source through
``grad_corpus.oracles.to_jax`` (so these tests need no numbax transform), and with deliberately
wrong versions, which ``check_grads`` must reject with an ``AssertionError``. The last tests run
``check_grads`` on numbax's own reverse mode.
"""
import collections
import os
import sys

import jax
import numpy as np
import pytest

import numbax
from numbax import test_util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402  (also turns on JAX's float64 mode)

Pair = collections.namedtuple("Pair", ["a", "b"])


def scalar_fn(x, y):
    return np.sum(np.sin(x) * y ** 2) + np.prod(np.tanh(x))


def vector_fn(x):
    return np.tanh(x) * x[0] + np.exp(0.5 * x)


def tuple_fn(x, y):
    return x * y, np.sum(x ** 3)


def pytree_fn(params, x):
    pair = params["pair"]
    return np.sum(np.tanh(x @ params["w"] + params["b"])) * params["scale"] + np.sum(pair.a * pair.b)


def python_scalar_fn(a, b):
    return a * np.sin(b) + a ** 3


X = np.array([0.3, -1.2, 0.7])
Y = np.array([1.1, 0.4, -0.6])
PARAMS = {"w": np.array([[0.5, -0.2], [0.1, 0.9], [-0.7, 0.3]]), "b": np.array([0.05, -0.1]), "scale": 1.3,
          "pair": Pair(np.array([1.0, 2.0]), np.array([-0.5, 0.25]))}
XS = np.array([[0.2, -0.4, 1.0], [0.6, 0.1, -0.3]])

CASES = [
    (scalar_fn, (X, Y)),
    (vector_fn, (X,)),
    (tuple_fn, (X, Y)),
    (pytree_fn, (PARAMS, XS)),
    (python_scalar_fn, (0.7, 1.3)),
]
CASE_IDS = [fn.__name__ for fn, _ in CASES]


def _to_numpy(tree):
    """JAX arrays to NumPy; tracers (inside an outer JAX transform, at order 2) stay as they are."""
    def convert(x):
        if isinstance(x, jax.core.Tracer) or not isinstance(x, jax.Array):
            return x
        return np.asarray(x)
    return jax.tree_util.tree_map(convert, tree)


def jax_vjp(f, *primals, scale=1.0, shift=0.0):
    out, pullback = jax.vjp(to_jax(f), *primals)

    def vjp_fun(cotangent):
        return jax.tree_util.tree_map(lambda c: c * scale, _to_numpy(pullback(cotangent)))

    return jax.tree_util.tree_map(lambda o: o + shift, _to_numpy(out)), vjp_fun


def jax_jvp(f, primals, tangents, scale=1.0):
    out, tangent_out = jax.jvp(to_jax(f), tuple(primals), tuple(tangents))
    return _to_numpy(out), jax.tree_util.tree_map(lambda t: t * scale, _to_numpy(tangent_out))


def jax_linearize(f, *primals):
    out, f_lin = jax.linearize(to_jax(f), *primals)
    return _to_numpy(out), lambda *tangents: _to_numpy(f_lin(*tangents))


@pytest.fixture
def jax_transforms(monkeypatch):
    monkeypatch.setattr(numbax, "vjp", jax_vjp, raising=False)
    monkeypatch.setattr(numbax, "jvp", jax_jvp, raising=False)
    monkeypatch.setattr(numbax, "linearize", jax_linearize, raising=False)


@pytest.mark.parametrize("fn, args", CASES, ids=CASE_IDS)
def test_correct_derivatives_pass(jax_transforms, fn, args):
    test_util.check_grads(fn, args, 1, modes=("fwd", "rev", "lin"))


# Second order runs JAX eagerly through nested transforms (seconds a case): a few cases suffice.
@pytest.mark.parametrize("fn, args", [CASES[0], CASES[2], CASES[4]], ids=[CASE_IDS[0], CASE_IDS[2], CASE_IDS[4]])
def test_correct_second_derivatives_pass(jax_transforms, fn, args):
    test_util.check_grads(fn, args, 2, modes=("fwd", "rev", "lin"))


@pytest.mark.parametrize("fn, args", CASES, ids=CASE_IDS)
def test_wrong_vjp_fails(monkeypatch, fn, args):
    monkeypatch.setattr(numbax, "vjp", lambda f, *p: jax_vjp(f, *p, scale=1.01), raising=False)
    with pytest.raises(AssertionError, match="cotangent projection"):
        test_util.check_grads(fn, args, 1, modes=("rev",))


@pytest.mark.parametrize("fn, args", CASES, ids=CASE_IDS)
def test_wrong_jvp_fails(monkeypatch, fn, args):
    monkeypatch.setattr(numbax, "jvp", lambda f, p, t: jax_jvp(f, p, t, scale=0.99), raising=False)
    with pytest.raises(AssertionError, match="tangent"):
        test_util.check_grads(fn, args, 1, modes=("fwd",))


def test_wrong_primal_fails(monkeypatch):
    monkeypatch.setattr(numbax, "vjp", lambda f, *p: jax_vjp(f, *p, shift=1e-3), raising=False)
    with pytest.raises(AssertionError, match="primal"):
        test_util.check_grads(scalar_fn, (X, Y), 1, modes=("rev",))


def test_wrong_second_order_fails(monkeypatch):
    """A vjp that is right at order 1 but whose own derivative is wrong fails at order 2 only."""
    def bent_vjp(f, *primals):
        out, vjp_fun = jax_vjp(f, *primals)
        # The cotangent gets a term that is tiny at the point but has a large derivative.
        return out, lambda ct: jax.tree_util.tree_map(
            lambda g, p: g + 0.5 * (p - jax.lax.stop_gradient(p)) if isinstance(p, jax.core.Tracer) else g,
            vjp_fun(ct), primals)
    monkeypatch.setattr(numbax, "vjp", bent_vjp, raising=False)
    test_util.check_grads(scalar_fn, (X, Y), 1, modes=("rev",))
    with pytest.raises(AssertionError):
        test_util.check_grads(scalar_fn, (X, Y), 2, modes=("rev",))


class _Without:
    """numbax as a version without one transformation would be (numbax imports its transformations on first
    use, so deleting the attribute would not remove it)."""

    def __init__(self, missing: str):
        self.missing = missing

    def __getattr__(self, name):
        if name == self.missing:
            raise AttributeError(name)
        return getattr(numbax, name)


def test_missing_jvp_raises_not_implemented(monkeypatch):
    monkeypatch.setattr(test_util, "numbax", _Without("jvp"))
    with pytest.raises(NotImplementedError, match="numbax.jvp"):
        test_util.check_grads(scalar_fn, (X, Y), 1)
    test_util.check_grads(scalar_fn, (X, Y), 1, modes=("rev",))


def test_missing_vjp_raises_not_implemented(monkeypatch):
    monkeypatch.setattr(test_util, "numbax", _Without("vjp"))
    with pytest.raises(NotImplementedError, match="numbax.vjp"):
        test_util.check_grads(scalar_fn, (X, Y), 1, modes=("rev",))


def test_check_grads_runs_both_modes_to_first_order():
    test_util.check_grads(scalar_fn, (X, Y), 1)  # JAX's default modes: numbax.jvp and numbax.vjp


def test_tolerances_follow_jax():
    assert test_util.tolerance(np.float64, test_util.DEFAULT_GRADIENT_TOLERANCE) == 1e-5
    assert test_util.tolerance(np.float32, test_util.DEFAULT_GRADIENT_TOLERANCE) == 2e-3
    assert test_util.tolerance(np.int64, test_util.DEFAULT_GRADIENT_TOLERANCE) == 0
    assert test_util.tolerance(np.float64, 0.1) == 0.1
    assert test_util.tolerance(np.float64, None) == 1e-15
    # Tolerances scale with the number of elements compared.
    test_util.check_close(np.zeros(100), np.full(100, 5e-7), atol=1e-8, rtol=1e-8)
    with pytest.raises(AssertionError):
        test_util.check_close(np.zeros(10), np.full(10, 5e-7), atol=1e-8, rtol=1e-8)
    with pytest.raises(AssertionError):
        test_util.check_close((1.0, 2.0), (1.0, 2.1))


def test_numerical_jvp_and_helpers_keep_types():
    primals = (0.5, np.array([1.0, 2.0], dtype=np.float32))
    tangents = (1.0, np.array([1.0, -1.0], dtype=np.float32))
    added = test_util.add(primals, tangents)
    assert isinstance(added[0], float) and added[1].dtype == np.float32
    t_out = test_util.numerical_jvp(lambda a, b: a * a + np.sum(b), primals, tangents)
    np.testing.assert_allclose(t_out, 2 * 0.5 * 1.0 + 0.0, atol=1e-3)
    rng = np.random.RandomState(0)
    assert isinstance(test_util.rand_like(rng, 1.0), float)
    assert test_util.rand_like(rng, np.zeros((2, 3), np.float32)).dtype == np.float32
    assert test_util.inner_prod((np.array([1.0, 2.0]), 3.0), (np.array([0.5, 0.5]), 2.0)) == pytest.approx(7.5)


def test_directions_are_deterministic(monkeypatch):
    seen = []

    def recording_vjp(f, *primals):
        out, vjp_fun = jax_vjp(f, *primals)
        return out, lambda ct: (seen.append(np.array(ct)), vjp_fun(ct))[1]
    monkeypatch.setattr(numbax, "vjp", recording_vjp, raising=False)
    for _ in range(2):
        test_util.check_grads(vector_fn, (X,), 1, modes=("rev",))
    np.testing.assert_array_equal(seen[0], seen[1])


# ---- numbax's own reverse mode (fails until numbax.vjp exists) ------------------------------

def tanh_loss(x, y):
    return np.sum(np.tanh(x * y) ** 2) + np.sum(np.exp(0.3 * x))


def test_check_grads_numbax_vjp_order_1():
    test_util.check_grads(tanh_loss, (X, Y), 1, modes=("rev",))


def test_check_grads_numbax_vjp_order_2():
    test_util.check_grads(tanh_loss, (X, Y), 2, modes=("rev",))


def test_check_grads_in_both_modes_to_second_order_and_forward_mode_to_third():
    """JAX's default modes: forward over forward, reverse over forward, forward over reverse (nested)."""
    test_util.check_grads(scalar_fn, (X, Y), 2)
    test_util.check_grads(vector_fn, (X,), 3, modes=("fwd",))
