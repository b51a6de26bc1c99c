"""The fusion pass: elementwise runs of generated code become one loop nest, and mean the same.

Three kinds of check. Golden: the pass on a hand-written function gives the expected loop (the
views it no longer reads are left for dead-code elimination), and applying it twice changes
nothing more. Meaning: for snippets built to tempt a wrong fusion
(a read of an array the loop writes, a view taken between writes, a loop-carried array, a name
read before the loop redefines it), the fused function returns what the original returns, run
by Python on NumPy. Gradients: programs whose adjoints the pass fuses agree with JAX in float64
on both backends, and float32 programs are left unfused (their dtype stays float32).
"""
import os
import sys
import textwrap

import gast
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax import runtime as rt
from numbax.ast_passes.optimizations import fusion
from numbax.ast_passes.unparse import unparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
jax.config.update("jax_enable_x64", True)


def _fuse(source: str, avals):
    fdef = gast.parse(textwrap.dedent(source)).body[0]
    fdef, changed = fusion.transform(fdef, avals)
    return fdef, changed


def run_tree(fdef, *args):
    """Run a function's tree by Python on NumPy (array arguments copied), as the tests of passes do."""
    namespace = {"np": np, "rt": rt}
    exec(compile(unparse(gast.Module(body=[fdef], type_ignores=[])), "<fused>", "exec"), namespace)
    return namespace[fdef.name](*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])


GOLDEN_INPUT = """
def f(x):
    d = rt.zeros_like(x)
    a = x[1:] - x[:-1] ** 2
    b = 1.0 - x[:-1]
    view = d[:-1]
    view += -2.0 * b
    s = np.sum(a * a)
    d_view = d[1:]
    d_view += 200.0 * a
    return d, s
"""

GOLDEN_OUTPUT = """
def f(x):
    d = rt.zeros_like(x)
    view = d[:-1]
    d_view = d[1:]
    s = 0.0
    for j in range(x.shape[0] - 1):
        a_j = x[j + 1] - x[j] ** 2
        b_j = 1.0 - x[j]
        d[j] += -2.0 * b_j
        s = rt.add_unordered(s, a_j * a_j)
        d[j + 1] += 200.0 * a_j
    return (d, s)
"""


def test_golden_loop_and_idempotence():
    fdef, changed = _fuse(GOLDEN_INPUT, {"x": ("f", 1)})
    assert changed
    assert unparse(fdef).strip() == textwrap.dedent(GOLDEN_OUTPUT).strip()
    again, changed_again = fusion.transform(fdef, {"x": ("f", 1)})
    assert not changed_again
    assert unparse(again).strip() == textwrap.dedent(GOLDEN_OUTPUT).strip()


SNIPPETS = {
    # the loop writes d through a view; a later statement reads d elementwise: not in the same loop
    "read_after_write": ("""
        def f(x):
            d = rt.zeros_like(x)
            v = d[:-1]
            v += x[1:] * 2.0
            w = d[1:] * 3.0 + x[1:]
            u = w * w
            return d, u
        """, {"x": ("f", 1)}, (np.linspace(-1.0, 2.0, 7),)),
    # an array carried around a loop and read at the top of the next iteration
    "loop_carried": ("""
        def f(x, n):
            h = x * 1.0
            acc = rt.zeros_like(x)
            for i in range(n):
                acc += h
                g = np.tanh(h * 1.5 + 0.1)
                h = g * 0.5 + x
            return h, acc
        """, {"x": ("f", 1), "n": ("i", 0)}, (np.linspace(-1.0, 1.0, 5), 3)),
    # a name read (as the array from before) and then redefined by the loop, and read after it
    "read_then_redefined": ("""
        def f(x):
            z = x * 2.0
            z2 = z + np.sin(x)
            z = z2 * z
            t = z - x
            return z, t, z2
        """, {"x": ("f", 1)}, (np.arange(4.0),)),
    # two dimensions, a scalar broadcast, and a sum
    "matrix": ("""
        def f(w, c):
            a = w * c - 1.0
            b = np.exp(a) * a
            s = np.sum(b)
            return b, s
        """, {"w": ("f", 2), "c": ("f", 0)}, (np.arange(6.0).reshape(2, 3) / 5.0, 0.7)),
    # the adjoint of a max with ties, shared equally
    "ties": ("""
        def f(x, g):
            m = np.max(x)
            d = rt.zeros_like(x)
            w = rt.unreduce(g, x, None, False) * rt.chooser_weights(x, m, None, False)
            d += w
            d += x * 0.0
            return d
        """, {"x": ("f", 1), "g": ("f", 0)}, (np.array([1.0, 3.0, 3.0, 2.0]), 2.0)),
    # a statement between fused ones that reads the loop's array: it runs after the loop
    "tape": ("""
        def f(x):
            tape = []
            z = x - 1.0
            e = np.exp(z)
            tape.append(e)
            s = np.sum(e)
            return tape.pop(), s, z
        """, {"x": ("f", 1)}, (np.linspace(0.0, 1.0, 4),)),
    # an array updated in the loop; a name summed twice
    "updates": ("""
        def f(x, g):
            a = x * 0.0 + g
            a += x * 2.0
            s = np.sum(a)
            s = np.sum(a * x)
            b = a * g
            return a, b, s, g
        """, {"x": ("f", 1), "g": ("f", 0)}, (np.linspace(0.5, 2.0, 5), 3.0)),
    # a scalar read after the loop and a second loop read the first loop's z: computed again, not kept
    "recompute": ("""
        def f(x, k):
            z = x - 1.0
            e = z * z
            r = z[k] * 2.0
            s = np.sum(e)
            w = s * x + z
            t = w * 2.0
            return t, r + s
        """, {"x": ("f", 1), "k": ("i", 0)}, (np.linspace(0.0, 3.0, 6), 4)),
    # one-hot cotangents (an index's adjoint) become elementwise: a negative index wraps, -= subtracts
    "one_hot": ("""
        def f(x, k, g):
            d = rt.zeros_like(x)
            d[k] += g
            d -= x * g
            s = np.sum(d * x)
            return d * 2.0, s
        """, {"x": ("f", 1), "k": ("i", 0), "g": ("f", 0)}, (np.linspace(0.5, 2.0, 5), -2, 3.0)),
    # another name for the array sees the update: no element of its own
    "one_hot_alias": ("""
        def f(x, k, g):
            d = rt.zeros_like(x)
            e = d
            d[k] += g
            h = e * 2.0 + d
            return h
        """, {"x": ("f", 1), "k": ("i", 0), "g": ("f", 0)}, (np.linspace(0.5, 2.0, 4), 1, 3.0)),
    "one_hot_matrix": ("""
        def f(w, i, k, g):
            d = rt.zeros_like(w)
            d[i, k] -= g
            d[i, k] += g * 3.0
            e = d + w * g
            return e * e
        """, {"w": ("f", 2), "i": ("i", 0), "k": ("i", 0), "g": ("f", 0)}, (np.arange(6.0).reshape(2, 3), 1, 2, 0.5)),
}


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_fused_means_the_same(name):
    source, avals, args = SNIPPETS[name]
    original = gast.parse(textwrap.dedent(source)).body[0]
    fused, changed = _fuse(source, avals)
    assert changed, unparse(fused)
    expected, got = run_tree(original, *args), run_tree(fused, *args)
    for e, g in zip(expected if isinstance(expected, tuple) else (expected,), got if isinstance(got, tuple) else (got,)):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=0)


def test_a_one_hot_cotangent_is_no_array():
    source, avals, _ = SNIPPETS["one_hot"]
    text = unparse(_fuse(source, avals)[0])
    assert "k_at = k % x.shape[0]" in text and "g if j == k_at else 0.0" in text
    assert "rt.zeros_like" not in text


def test_read_after_write_keeps_its_own_loop():
    source, avals, _ = SNIPPETS["read_after_write"]
    fused, _ = _fuse(source, avals)
    loops = [n for n in gast.walk(fused) if isinstance(n, gast.For)]
    assert len(loops) == 1  # only w and u are fused; v += ... stays an array statement before them
    assert "v += x[1:] * 2.0" in unparse(fused)


def test_ties_share_the_adjoint():
    source, avals, args = SNIPPETS["ties"]
    fused, _ = _fuse(source, avals)
    np.testing.assert_allclose(run_tree(fused, *args), [0.0, 1.0, 1.0, 0.0])


def test_float32_programs_are_not_fused():
    from fixtures import grad_programs

    x = np.linspace(-1.0, 1.5, 5).astype(np.float32)
    source = numbax.grad(grad_programs.rosenbrock).lower_source(x)
    assert "for j" not in source
    assert numbax.grad(grad_programs.rosenbrock)(x).dtype == np.float32


def _softmax_xent(logits, labels):
    n = logits.shape[0]
    total = 0.0
    for i in range(n):
        z = logits[i] - np.max(logits[i])
        total = total + np.log(np.sum(np.exp(z))) - z[labels[i]]
    return total / n


def _rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _smooth(w, x):
    h = np.tanh(x @ w)
    for _ in range(2):
        h = np.sin(h) * 0.5 + h * h
    return np.mean((h - 0.25) ** 2)


def _carried_through_a_copy(w, xs):
    z = xs[4]
    for i in range(3):
        v = z
        z = v * w + xs[i]
    return np.sum(z)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_loop_carrying_a_copy_keeps_its_cotangent(backend):
    """The backward loop's ``dv = dz * w; ...; dz = dv`` fused: ``dz`` is read by the next iteration."""
    w, xs = np.array([0.3, -0.7, 0.5]), np.random.default_rng(0).normal(size=(5, 3))

    def jax_carried(w, xs):
        return jnp.sum(jax.lax.fori_loop(0, 3, lambda i, v: v * w + xs[i], xs[4]))

    np.testing.assert_allclose(numbax.grad(_carried_through_a_copy, backend=backend)(w, xs),
                               jax.grad(jax_carried)(w, jnp.asarray(xs)), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_fused_gradients_match_jax(backend):
    rng = np.random.default_rng(0)
    logits, labels = 2.0 * rng.normal(size=(6, 5)), rng.integers(0, 5, size=6)
    logits[2, 1] = logits[2, 3] = logits[2].max() + 1.0  # a tie at the maximum
    x = rng.uniform(-1.5, 1.5, size=9)
    w, xs = rng.normal(size=(3, 4)) * 0.5, rng.normal(size=(5, 3))

    def jax_softmax(logits, labels):
        z = logits - jnp.max(logits, axis=1, keepdims=True)
        return jnp.mean(jnp.log(jnp.sum(jnp.exp(z), axis=1)) - z[jnp.arange(z.shape[0]), labels])

    def jax_smooth(w, x):
        h = jnp.tanh(x @ w)
        for _ in range(2):
            h = jnp.sin(h) * 0.5 + h * h
        return jnp.mean((h - 0.25) ** 2)

    source = numbax.grad(_softmax_xent).lower_source(logits, labels)
    backward = source[source.index("# grad of: for i in range(n):"):]
    # the backward loop fused too: the one-hot cotangent and the maximum's ties are elements, not arrays
    # (grad's output check rt.scalar_output once hid every cotangent's dtype from fusion)
    assert "for j" in backward and "rt.tie_share" in backward
    assert "rt.chooser_weights" not in backward and "rt.zeros_like(t" not in backward
    np.testing.assert_allclose(numbax.grad(_softmax_xent, backend=backend)(logits, labels),
                               jax.grad(jax_softmax)(logits, labels), rtol=1e-12, atol=1e-14)
    value, g = numbax.value_and_grad(_rosen, backend=backend)(x)
    jvalue, jg = jax.value_and_grad(lambda v: jnp.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1.0 - v[:-1]) ** 2))(x)
    np.testing.assert_allclose(value, jvalue, rtol=1e-13)
    np.testing.assert_allclose(g, jg, rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(_smooth, backend=backend)(w, xs), jax.grad(jax_smooth)(w, xs),
                               rtol=1e-12, atol=1e-14)


def test_cheap_elements_are_computed_again_rather_than_kept():
    source, avals, _ = SNIPPETS["recompute"]
    text = unparse(_fuse(source, avals)[0])
    assert "z = np.empty" not in text and "e = np.empty" not in text  # neither is written out
    assert "r = (x[k] - 1.0) * 2.0" in text
