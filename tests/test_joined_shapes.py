"""Abstract values and symbolic shapes of arrays joined (``np.concatenate``, ``np.stack``) and made of
numbers (``np.zeros(1)``), and of numbers in loops: forward mode then knows a tangent's shape and adds no
zeros to it (``+ rt.zeros_like(y)``), which Numba compiled as one more array operation per statement.
Derivatives against JAX (float64) in both modes and to second order; the rules' refusals where NumPy's
result is not known from the operands."""
import gast
import numpy as np
import pytest

import numbax
from grad_corpus.oracles import to_jax
import jax  # noqa: E402  (after the oracles, which turn on float64)
from numbax.ast_passes.analyses import avals, shapes


def chain(u):
    padded = np.concatenate([np.zeros(1), u, np.zeros(1)])
    stretch = padded[1:] - padded[:-1]
    return np.sum(stretch ** 4) + np.sum(np.stack((stretch, 2.0 * stretch), axis=-1) ** 2)


def stepped(theta, z):
    for _ in range(3):
        a, b = z[0], z[1]
        z = z + 0.1 * np.stack((theta[0] * a - a * b, a * b - theta[1] * b))
    return z


U = np.array([0.3, -0.7, 1.1, 0.2])
THETA, Z = np.array([1.1, 0.4]), np.array([1.5, 0.5])
CHAIN_JVP = numbax.jit(lambda u, t: numbax.jvp(chain, (u,), (t,)))
CHAIN_HESSIAN = numbax.jit(numbax.jacfwd(numbax.grad(chain)))
STEPPED_JACOBIAN = numbax.jit(numbax.jacfwd(stepped, argnums=(0, 1)))


def test_forward_mode_of_a_join_matches_jax_and_pads_nothing():
    t = np.array([1.0, -2.0, 0.5, 0.25])
    value, tangent = CHAIN_JVP(U, t)
    want_value, want_tangent = jax.jvp(to_jax(chain), (U,), (t,))
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(tangent, want_tangent, rtol=1e-12)
    assert "+ rt.zeros_like(" not in numbax.source(CHAIN_JVP, U, t)  # (zeros_like(np.zeros(1)) is a tangent)


def test_second_order_and_reverse_mode_of_a_join_match_jax():
    np.testing.assert_allclose(CHAIN_HESSIAN(U), jax.hessian(to_jax(chain))(U), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(numbax.grad(chain)(U), jax.grad(to_jax(chain))(U), rtol=1e-12)


def test_numbers_in_a_loop_need_no_padding_where_the_vector_does():
    got, want = STEPPED_JACOBIAN(THETA, Z), jax.jacfwd(to_jax(stepped), argnums=(0, 1))(THETA, Z)
    for part, wanted in zip(got, want):
        np.testing.assert_allclose(part, wanted, rtol=1e-12)
    source = numbax.source(STEPPED_JACOBIAN, THETA, Z)
    # z's length is not known to be 2, but the tangent of z + the stack of 2 numbers reads both operands'
    # tangents, so it has the sum's shape: nothing is padded
    assert "+ rt.zeros_like(" not in source


def _infer(body: str, params):
    fdef = gast.parse("def f(" + ", ".join(params) + "):\n" + body + "\n    return 0").body[0]
    found = avals.infer(fdef, params)
    return found, shapes.infer(fdef, {p: a[1] for p, a in params.items()}, found)


@pytest.mark.parametrize("line, aval, shape", [
    ("y = np.concatenate((np.zeros(2), u, np.ones(1)))", ("f", 1), (("u.0", 3),)),
    ("y = np.concatenate([m, m], axis=-1)", ("f", 2), None),  # m.1 + m.1: two symbols
    ("y = np.concatenate([m, np.ones((2, 1))], 1)", ("f", 2), None),  # m.0 and 2: not known equal
    ("y = np.concatenate([np.ones((2, 1)), np.ones((2, 3))], axis=-1)", ("f", 2), (("", 2), ("", 4))),
    ("y = np.concatenate((m, np.zeros((2, 3))), 0)", ("f", 2), None),  # other dims not the same symbols
    ("y = np.stack((u, u), axis=-1)", ("f", 2), (("u.0", 0), ("", 2))),
    ("y = np.stack((n, n, n))", ("f", 1), (("", 3),)),
    ("y = np.stack((n, i))", ("f", 1), (("", 2),)),
    ("y = np.concatenate((u, u), axis=None)", None, None),  # flattened: not worked out
    ("y = np.concatenate((u, u), dtype=np.float32)", None, None),
    ("y = np.concatenate((n, n))", None, None),  # NumPy's error for numbers
    ("y = np.stack((u, m))", None, None),  # items of different ndims
    ("y = np.stack((u, np.zeros(3)))", ("f", 2), None),  # u.0 and 3: not known equal
    ("y = np.concatenate(s)", None, None),  # a sequence not written out
])
def test_rules_of_joins(line, aval, shape):
    params = {"u": ("f", 1), "m": ("f", 2), "n": ("f", 0), "i": ("i", 0), "s": ("f", 2)}
    found, known = _infer("    " + line, params)
    assert found.get("y") == aval
    fresh = tuple((f"y.{k}", 0) for k in range((aval or (None, 0))[1]))  # its own symbols: not worked out
    assert known.get("y") == (shape if shape is not None else fresh or None)


def test_a_number_in_a_loop_has_the_shape_of_one():
    found, known = _infer("    for k in range(3):\n        z = z + u\n        y = z[0]", {"z": ("f", 1), "u": ("f", 1)})
    assert found["y"] == ("f", 0) and known["y"] == () and "z" not in known
