"""vmap's loop as array code over blocks of rows (``ast_passes.optimizations.vectorize``), against stacking.

Programs are generated (a seeded random chain of matrix products and elementwise functions of values shared
by the rows and values of each row), mapped over 150 examples (two full blocks of 64, the first made before
the loop in place of vmap's first example, and a partial one; or, where a ufunc writes every block's rows
into the outputs, vmap's first example and blocks from the second), and compared with the same NumPy function
applied to each example in turn.
"""
import os
import sys

import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures.source_modules import load_source  # noqa: E402

N_IN, N_H, BATCH = 4, 3, 150
RNG = np.random.default_rng(7)
X = RNG.normal(size=(BATCH, N_IN))
V = RNG.normal(size=(BATCH, N_H))
W = RNG.normal(size=(N_IN, N_H)) * 0.5
M = RNG.normal(size=(N_H, N_H)) * 0.5
S = RNG.normal(size=N_H)
BLOCKS = ", batch, 64):"  # the loop over blocks (from the first block's end, or vmap's second example)

_STEPS = [
    "{new} = np.tanh({old})",
    "{new} = {old} * s",
    "{new} = {old} + v",
    "{new} = np.exp(-{old} * {old})",
    "{new} = {old} @ m",
    "{new} = m @ {old}",
    "{new} = {old} * (x @ x)",  # a number a row, against a vector a row
    "{new} = ({old} - s) / (1.0 + v * v)",
    "{new} = np.zeros_like({old}) + {old} ** 2",
]


def _program(seed: int) -> str:
    rng = np.random.default_rng(seed)
    body = ["t0 = x @ w"]
    for k in range(1, int(rng.integers(2, 6))):
        body.append(_STEPS[int(rng.integers(len(_STEPS)))].format(new=f"t{k}", old=f"t{k - 1}"))
    body.append(f"return t{len(body) - 1}")
    return "\n".join(["def prog(x, w, s, m, v):"] + ["    " + line for line in body])


def _load(source: str):
    return load_source("import numpy as np\n\n\n" + source + "\n", "vectorize")


def _stacked(fun, in_axes, *args):
    rows = [fun(*(a if axis is None else a[i] for a, axis in zip(args, in_axes))) for i in range(BATCH)]
    return np.stack(rows)


@pytest.mark.parametrize("seed", range(12))
def test_generated_programs_against_stacking(seed):
    source = _program(seed)
    prog = _load(source).prog
    in_axes = (0, None, None, None, 0)
    mapped = numbax.vmap(prog, in_axes=in_axes)
    got = mapped(X, W, S, M, V)
    np.testing.assert_allclose(got, _stacked(prog, in_axes, X, W, S, M, V), rtol=1e-12, atol=1e-12,
                               err_msg=source)
    assert BLOCKS in numbax.source(mapped, X, W, S, M, V), source


def test_shared_matrix_times_each_row_and_rows_dotted():
    module = _load("def left(w, x):\n    return np.tanh(w.T @ x)\n\n\n"
                   "def inner(a, b):\n    return np.exp(a @ b) * a\n")
    left = numbax.vmap(module.left, in_axes=(None, 0))
    np.testing.assert_allclose(left(W, X), np.tanh(X @ W), rtol=1e-13)
    assert BLOCKS in numbax.source(left, W, X)
    inner = numbax.vmap(module.inner)
    np.testing.assert_allclose(inner(X, X), np.exp(np.sum(X * X, axis=1))[:, None] * X, rtol=1e-13)
    assert BLOCKS in numbax.source(inner, X, X)


def test_scalar_code_and_values_assigned_twice_stay_loops():
    module = _load("def scalar(a, b):\n    return np.sin(a) * b + 1.0\n\n\n"
                   "def repeated(x, m):\n    t = x\n    for j in range(3):\n        t = np.tanh(m @ t)\n    return t\n")
    repeated = numbax.vmap(module.repeated, in_axes=(0, None))
    np.testing.assert_allclose(repeated(V, M), _stacked(module.repeated, (0, None), V, M), rtol=1e-13)
    assert BLOCKS not in numbax.source(repeated, V, M)
    scalar = numbax.vmap(module.scalar)
    a, b = RNG.normal(size=BATCH), RNG.normal(size=BATCH)
    np.testing.assert_allclose(scalar(a, b), module.scalar(a, b), rtol=1e-14)
    text = numbax.source(scalar, a, b)
    assert BLOCKS not in text and "for i in range(0, batch):" in text


def test_a_check_made_row_by_row_raises_at_its_row():
    module = _load("def pick(x, i, w):\n    e = np.zeros(3)\n    e[i] = 1.0\n    return x @ w + e\n")
    pick = numbax.vmap(module.pick, in_axes=(0, 0, None))
    index = np.arange(BATCH) % 3
    expected = _stacked(module.pick, (0, 0, None), X, index, W)
    np.testing.assert_allclose(pick(X, index, W), expected, rtol=1e-13)
    assert BLOCKS in numbax.source(pick, X, index, W)
    index[100] = 7
    with pytest.raises(IndexError, match="7"):
        pick(X, index, W)


def test_hessian_and_jacobians_sweep_blocks():
    module = _load("def loss(x, a, y):\n    z = a @ x\n"
                   "    return np.mean(np.log1p(np.exp(-y * z))) + 0.05 * np.sum(x * x)\n\n\n"
                   "def layer(x, w):\n    return np.tanh(x @ w)\n")
    x, a, y = RNG.normal(size=20) * 0.3, RNG.normal(size=(60, 20)), np.sign(RNG.normal(size=60))
    s = 1.0 / (1.0 + np.exp(y * (a @ x)))
    expected = (a.T * (s * (1.0 - s))) @ a / 60 + 0.1 * np.eye(20)
    hessian = numbax.hessian(module.loss)
    np.testing.assert_allclose(hessian(x, a, y), expected, rtol=1e-12, atol=1e-14)
    assert BLOCKS in numbax.source(hessian, x, a, y)
    xs, w = RNG.normal(size=(5, 4)), RNG.normal(size=(4, 3))
    jac = numbax.jacrev(module.layer)(xs, w)
    d = 1.0 - np.tanh(xs @ w) ** 2
    expected = np.zeros((5, 3, 5, 4))  # row i of the output depends on row i of the input only
    for i in range(5):
        expected[i, :, i, :] = d[i][:, None] * w.T
    np.testing.assert_allclose(jac, expected, rtol=1e-12, atol=1e-14)


def _logistic_loss(w, x, y):
    return np.log1p(np.exp(-y * np.dot(x, w)))


PER_EXAMPLE = numbax.vmap(numbax.grad(_logistic_loss), in_axes=(None, 0, 0))


def test_per_example_gradients_write_each_block_into_the_output():
    y = np.sign(V[:, 0])
    expected = (-y / (1.0 + np.exp(y * (X @ W[:, 0]))))[:, None] * X
    np.testing.assert_allclose(PER_EXAMPLE(W[:, 0], X, y), expected, rtol=1e-13)
    text = numbax.source(PER_EXAMPLE, W[:, 0], X, y)
    assert "for start in range(1, batch, 64):" in text  # vmap's first example sizes the output
    assert "np.multiply(np.expand_dims(dt2_1, 1), x_2, out[start:stop])" in text  # no block copied
    assert "'j', x_2[0], w)" in text and "for k in range(" not in text  # a shape check: the first row's


def _layer(w, x):
    return np.tanh(x @ w)


SHARED_FIRST = numbax.vmap(_layer, in_axes=(None,))


def test_keyword_arguments_are_mapped_along_axis_0_and_never_served_as_positional_ones():
    y = np.sign(V[:, 0])
    for _ in range(2):  # the second call may be served by Numba's C dispatch
        np.testing.assert_allclose(SHARED_FIRST(W, x=X), np.tanh(X @ W), rtol=1e-13)  # x by keyword: axis 0
        with pytest.raises(ValueError, match=r"len\(in_axes\)=1, len\(args\)=2"):
            SHARED_FIRST(W, X)  # as JAX: in_axes names every positional argument
        with pytest.raises(ValueError, match=r"len\(in_axes\)=3, len\(args\)=2"):
            PER_EXAMPLE(W[:, 0], X, y=y)
        PER_EXAMPLE(W[:, 0], X, y)
