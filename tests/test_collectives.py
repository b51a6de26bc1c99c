"""Collectives under ``numbax.vmap(..., axis_name=...)`` against ``jax.vmap`` with the same axis names
(float64): values of each collective, gradients (reverse and forward mode, and against central differences),
a second derivative, two nested named axes, the data-parallel pattern (``pmean`` of per-example gradients),
collectives in a ``fori_loop``, and the refusals: an unbound name, a collective in a ``while`` loop or under a
derivative inside the vmap, ``pmax``
differentiated (JAX has no rule either)."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax import lax
from numbax.errors import NumbaxAxisNameError, NumbaxBatchingError, NumbaxDifferentiationError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

RNG = np.random.default_rng(16)
X = RNG.normal(size=(4, 3))
W = RNG.normal(size=3)
PERM = [(0, 1), (1, 2), (2, 3), (3, 0)]


def linear(x, w, L, m):
    """Every differentiable collective, once each; ``w`` is not mapped."""
    s = L.psum(x, "i")
    mean = L.pmean(x * x, "i")
    gathered = L.all_gather(x, "i", axis=1)
    tiled = L.all_gather(x, "i", tiled=True)
    shifted = L.ppermute(x, "i", PERM)
    scattered = L.psum_scatter(m.outer(x, w)[:, :1] * m.ones(4), "i", scatter_dimension=1)
    block = L.psum_scatter(m.concatenate([x, x[:1]]), "i", tiled=True)
    k = L.axis_index("i")
    total = m.tanh(x) * s + mean * L.psum(w, "i") + shifted * k + m.sum(gathered * gathered, axis=1)
    return total * scattered[0] + m.sum(tiled) + m.sum(block) * L.psum(1, "i")


def extrema(x, L, m):
    return L.pmax(x, "i") - 2.0 * L.pmin(m.sin(x), "i")


def nested(x, L, m):
    """Inner axis ``j``, outer ``i``: over each, over both, and a gather over the outer one inside the inner."""
    a, b, c = L.psum(x, "i"), L.psum(x, "j"), L.psum(x, ("i", "j"))
    g = L.all_gather(x * x, "i")
    return m.sin(x) * a + b * c + L.axis_index(("i", "j")) + m.sum(g, axis=0)


def numbax_fn(f):
    def one(x):
        return f(x, lax, np)

    return one


def jax_fn(f):
    return lambda x: f(x, jax.lax, jnp)


def linear_numbax(x, w):
    return linear(x, w, lax, np)


MAPPED = numbax.vmap(linear_numbax, in_axes=(0, None), axis_name="i")
JAX_MAPPED = jax.vmap(lambda x, w: linear(x, w, jax.lax, jnp), in_axes=(0, None), axis_name="i")


def loss(x, w):
    return np.sum(MAPPED(x, w) ** 2)


def jax_loss(x, w):
    return jnp.sum(JAX_MAPPED(x, w) ** 2)


def test_values_against_jax():
    np.testing.assert_allclose(MAPPED(X, W), JAX_MAPPED(X, W), rtol=1e-12, atol=1e-12)


def test_every_output_of_each_collective():
    def outputs(x, L):
        return (L.all_gather(x, "i"), L.all_gather(x, "i", axis=-1), L.all_gather(x[None], "i", axis=1, tiled=True),
                L.ppermute(x, "i", PERM[::-1]), L.axis_index("i"), L.pmean(x, "i"))

    got = numbax.vmap(lambda x: outputs(x, lax), axis_name="i")(X)
    want = jax.vmap(lambda x: outputs(x, jax.lax), axis_name="i")(X)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)


def test_ppermute_fills_zeros_where_no_pair_sends():
    """JAX's documented semantics (its vmap asserts a full permutation; its pmap fills zeros)."""
    got = numbax.vmap(lambda x: lax.ppermute(x, "i", [(0, 2), (3, 1)]), axis_name="i")(X)
    np.testing.assert_array_equal(got, np.stack([np.zeros(3), X[3], X[0], np.zeros(3)]))


def narrow_outputs(x):
    return np.int32(lax.axis_index("i")) + x, np.float32(lax.psum(np.float64(x), "i"))


def test_outputs_keep_their_examples_dtypes():
    x = np.arange(3, dtype=np.int32)
    index, total = numbax.vmap(narrow_outputs, axis_name="i")(x)
    assert index.dtype == np.int32 and total.dtype == np.float32
    np.testing.assert_array_equal(index, 2 * x)
    np.testing.assert_array_equal(total, np.full(3, 3.0, np.float32))


# the gradient in both arguments of every collective, for the tests against JAX and against central differences:
# on the python backend (the same generated code; Numba took over 100 s to compile it on a loaded machine); the
# cpu backend compiles reverse mode of collectives in test_gradient_of_a_sum_and_a_gather_on_the_cpu_backend
GRAD = numbax.grad(loss, argnums=(0, 1), backend="python")


def test_reverse_and_forward_mode_against_jax():
    g = GRAD(X, W)
    want = jax.grad(jax_loss, argnums=(0, 1))(X, W)
    for a, b in zip(g, want):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-11)
    t = (RNG.normal(size=X.shape), RNG.normal(size=W.shape))
    _, tangent = numbax.jvp(loss, (X, W), t)
    _, jax_tangent = jax.jvp(jax_loss, (X, W), t)
    np.testing.assert_allclose(tangent, jax_tangent, rtol=1e-11)


def gathered_sum(x, L, m):
    return m.tanh(x) * L.psum(x * x, "i") + m.sum(L.all_gather(x, "i") ** 2, axis=0) * L.pmean(x, "i")


def test_gradient_of_a_sum_and_a_gather_on_the_cpu_backend():
    mapped = numbax.vmap(numbax_fn(gathered_sum), axis_name="i")
    jax_mapped = jax.vmap(jax_fn(gathered_sum), axis_name="i")
    g = numbax.grad(lambda x: np.sum(mapped(x) ** 2))(X)
    np.testing.assert_allclose(g, jax.grad(lambda x: jnp.sum(jax_mapped(x) ** 2))(X), rtol=1e-11, atol=1e-11)


def test_gradient_against_central_differences():
    g, g_w = GRAD(X, W)
    h = 1e-6
    for index in [(0, 0), (1, 2), (3, 1)]:
        e = np.zeros_like(X)
        e[index] = h
        assert abs((loss(X + e, W) - loss(X - e, W)) / (2 * h) - g[index]) < 1e-5 * max(1.0, abs(g[index]))
    for index in range(3):
        e = np.zeros_like(W)
        e[index] = h
        assert abs((loss(X, W + e) - loss(X, W - e)) / (2 * h) - g_w[index]) < 1e-5 * max(1.0, abs(g_w[index]))


def test_second_derivative_against_jax():
    """The Hessian (forward over reverse) through a vmap loop with a collective: the loop's gradient keeps its
    values in tables, and inlining the primal renames the staged loop's outputs with its code."""
    def f(x):
        return np.sum(numbax.vmap(lambda v: np.tanh(v) * lax.psum(v * v, "i"), axis_name="i")(x))

    def jf(x):
        return jnp.sum(jax.vmap(lambda v: jnp.tanh(v) * jax.lax.psum(v * v, "i"), axis_name="i")(x))

    x = X[:3, 0]
    hessian = numbax.hessian(f)(x)
    np.testing.assert_allclose(hessian, jax.hessian(jf)(x), rtol=1e-11, atol=1e-12)
    h, grad = 1e-6, numbax.grad(f)
    central = np.array([(grad(x + h * e) - grad(x - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(hessian, central, rtol=1e-6, atol=1e-8)


def test_pmax_pmin_values_and_refused_derivative():
    mapped = numbax.vmap(numbax_fn(extrema), axis_name="i")
    np.testing.assert_allclose(mapped(X), jax.vmap(jax_fn(extrema), axis_name="i")(X), rtol=1e-12)
    with pytest.raises(NotImplementedError):  # JAX's own refusal, which numbax follows
        jax.grad(lambda x: jnp.sum(jax.vmap(jax_fn(extrema), axis_name="i")(x)))(X)
    with pytest.raises(NumbaxDifferentiationError, match="numbax.lax.pmax"):
        numbax.grad(lambda x: np.sum(mapped(x)))(X)


def test_two_nested_names_values_and_gradient():
    x = RNG.normal(size=(3, 2, 4))
    mapped = numbax.vmap(numbax.vmap(numbax_fn(nested), axis_name="j"), axis_name="i")
    jax_mapped = jax.vmap(jax.vmap(jax_fn(nested), axis_name="j"), axis_name="i")
    np.testing.assert_allclose(mapped(x), jax_mapped(x), rtol=1e-12, atol=1e-12)
    # reverse mode of the two loops is 1,568 lines that Numba compiles in 45 s: checked on the python backend
    # (the cpu backend compiles reverse mode of collectives in test_gradient_of_a_sum_and_a_gather_on_...)
    g = numbax.grad(lambda v: np.sum(mapped(v) ** 2), backend="python")(x)
    np.testing.assert_allclose(g, jax.grad(lambda v: jnp.sum(jax_mapped(v) ** 2))(x), rtol=1e-11, atol=1e-11)


def test_mean_of_per_example_gradients():
    """The data-parallel pattern: each example's gradient, averaged over the axis with ``pmean``."""
    x, y = RNG.normal(size=(5, 3)), RNG.normal(size=5)

    def step(w, x, y, L, m, grad):
        return L.pmean(grad(lambda w: (m.dot(w, x) - y) ** 2)(w), "b")

    got = numbax.vmap(lambda w, x, y: step(w, x, y, lax, np, numbax.grad), in_axes=(None, 0, 0), axis_name="b")
    want = jax.vmap(lambda w, x, y: step(w, x, y, jax.lax, jnp, jax.grad), in_axes=(None, 0, 0), axis_name="b")
    np.testing.assert_allclose(got(W, x, y), want(W, x, y), rtol=1e-12)


def unbound(x):
    return lax.psum(x, "k")


def in_a_while_loop(x):
    return lax.while_loop(lambda v: v[0] < 10.0, lambda v: lax.psum(v, "i"), x)


def iterated(x, L):
    """Collectives in a loop of a known trip count: every example reaches each one together."""
    return L.fori_loop(0, 3, lambda k, v: v / L.psum(v * v, "i") + k * L.pmean(v, "i"), x)


def iterated_numbax(x):
    return iterated(x, lax)


def test_collectives_in_a_fori_loop_against_jax():
    mapped = numbax.vmap(iterated_numbax, axis_name="i")
    jax_mapped = jax.vmap(lambda x: iterated(x, jax.lax), axis_name="i")
    np.testing.assert_allclose(mapped(X), jax_mapped(X), rtol=1e-12)
    g = numbax.grad(lambda x: np.sum(mapped(x) ** 2), backend="python")(X)  # 25 s of Numba: see above
    np.testing.assert_allclose(g, jax.grad(lambda x: jnp.sum(jax_mapped(x) ** 2))(X), rtol=1e-10)


def differentiated_inside(x):
    return numbax.grad(lambda v: np.sum(lax.psum(v, "i") * v))(x)


def test_refusals_at_the_users_line():
    with pytest.raises(NumbaxAxisNameError, match="unbound axis name: k") as error:
        numbax.vmap(unbound, axis_name="i")(X)
    assert isinstance(error.value, NameError) and "test_collectives.py" in str(error.value)
    with pytest.raises(NumbaxBatchingError, match="inside a branch or a loop"):
        numbax.vmap(in_a_while_loop, axis_name="i")(X)
    with pytest.raises(NumbaxDifferentiationError, match="differentiated inside the vmap"):
        numbax.vmap(differentiated_inside, axis_name="i")(X)
    with pytest.raises(NumbaxBatchingError, match="out_axes=None for an output of a vmap whose function calls"):
        numbax.vmap(iterated_numbax, axis_name="i", out_axes=None)(X)
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(X, "i")  # plain Python: no axis is bound, as in JAX


@pytest.mark.parametrize("call, match", [
    (lambda x: lax.psum(x, "i", axis_index_groups=[[0, 1], [2, 3]]), "axis_index_groups"),
    (lambda x: lax.ppermute(x, "i", [(0, 1), (0, 2)]), "unique"),
    (lambda x: lax.all_gather(x, "i", axis=3), "out of bounds"),
    (lambda x: lax.psum_scatter(x, "i"), "scattered dimension has length 3, not the axis size 4"),
    (lambda x: lax.psum(x.astype(np.int32), "i"), "psum of int32 values is not supported yet"),
    (lambda x: lax.all_gather(x, "i", tiled=1), "all_gather's tiled must be a bool, got 1"),
    (lambda x: lax.psum_scatter(x, "i", tiled="yes"), "psum_scatter's tiled must be a bool, got 'yes'"),
])
def test_argument_errors(call, match):
    with pytest.raises((NumbaxBatchingError, numbax.errors.NumbaxSpecializationError, ValueError), match=match):
        numbax.vmap(call, axis_name="i")(X)
