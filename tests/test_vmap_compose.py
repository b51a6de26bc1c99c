"""numbax.vmap composed with jit, grad, itself, numbax.debug and numbax.random, on both backends.

The batched code is an ordinary loop of core-subset code, so every composition is the same
pipeline seeing a loop: per-example gradients (``vmap(grad(f))``), reverse mode through the batch
loop (``grad`` of a function that calls a vmapped one), a vmap inside a jit-compiled step. JAX in
float64 is the oracle. Each transformed function is built once per backend and shared.
"""
from __future__ import annotations

import functools
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax import debug, generated_cache, random

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures.fresh_process import run_child  # noqa: E402
from grad_corpus.oracles import to_jax  # noqa: E402  (also turns on jax_enable_x64)

BACKENDS = ("python", "cpu")
RNG = np.random.RandomState(1)
XS = RNG.randn(5, 3)
YS = RNG.randn(5)
W = RNG.randn(3)


def loss(w, x, y):
    return (np.tanh(x @ w) - y) ** 2


def total_loss(w, xs, ys):
    return numbax.vmap(loss, in_axes=(None, 0, 0))(w, xs, ys).sum()


def jax_total_loss(w, xs, ys):
    return jax.vmap(to_jax(loss), in_axes=(None, 0, 0))(w, xs, ys).sum()


def once(fn):
    """Build a transformed function once per backend (one Numba compile), shared by the tests."""
    return functools.lru_cache(maxsize=None)(fn)


@once
def per_example_grads(backend):
    return numbax.vmap(numbax.grad(loss), in_axes=(None, 0, 0), backend=backend)


@once
def grad_through_batch_loop(backend):
    return numbax.grad(total_loss, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_per_example_gradients(backend):
    want = jax.vmap(jax.grad(to_jax(loss)), in_axes=(None, 0, 0))(W, XS, YS)
    np.testing.assert_allclose(per_example_grads(backend)(W, XS, YS), want, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_through_the_batch_loop(backend):
    np.testing.assert_allclose(grad_through_batch_loop(backend)(W, XS, YS), jax.grad(jax_total_loss)(W, XS, YS),
                               rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_value_and_grad_through_the_batch_loop(backend):
    value, g = numbax.value_and_grad(lambda w: numbax.vmap(loss, in_axes=(None, 0, 0))(w, XS, YS).sum(),
                                     backend=backend)(W)
    want_value, want_g = jax.value_and_grad(jax_total_loss)(W, XS, YS)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(g, want_g, rtol=1e-12)


def test_grad_through_a_loop_with_out_axes_1():
    g = numbax.grad(lambda w: np.sum(numbax.vmap(lambda x, w: np.outer(x, w), in_axes=(0, None), out_axes=1)(XS, w)
                                     * np.arange(3.0)[:, None, None]), backend="python")(W)
    want = jax.grad(lambda w: jnp.sum(jax.vmap(jnp.outer, in_axes=(0, None), out_axes=1)(XS, w)
                                      * jnp.arange(3.0)[:, None, None]))(W)
    np.testing.assert_allclose(g, want, rtol=1e-12)


def closure_loss(p, xs):
    """JAX's idiom: the vmapped function closes over the differentiated parameter."""
    return numbax.vmap(lambda x: np.sum(np.tanh(x * p) ** 2))(xs).sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_a_vmapped_closure_over_the_parameter(backend):
    want = jax.grad(lambda p: jax.vmap(lambda x: jnp.sum(jnp.tanh(x * p) ** 2))(XS).sum())(W)
    np.testing.assert_allclose(numbax.grad(closure_loss, backend=backend)(W, XS), want, rtol=1e-12)


def pairwise(a, b):
    return np.sum((a - b) ** 2)


@once
def distance_matrix(backend):
    return numbax.vmap(numbax.vmap(pairwise, in_axes=(None, 0)), in_axes=(0, None), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_vmap(backend):
    want = jax.vmap(jax.vmap(to_jax(pairwise), in_axes=(None, 0)), in_axes=(0, None))(XS, XS[:4])
    got = distance_matrix(backend)(XS, XS[:4])
    assert got.shape == (5, 4)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def distances_inside(xs, ys):
    return numbax.vmap(numbax.vmap(pairwise, (None, 0)), (0, None))(xs, ys)


def nested_lambdas_inside(s, xs):
    return numbax.vmap(lambda x: numbax.vmap(lambda y: s * np.dot(x, y))(xs))(xs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_vmap_made_inside_compiled_code(backend):
    """``vmap(vmap(f, ...), ...)`` written inside a jit-compiled function ("vmap expects a callable" before),
    and its gradient, as JAX's."""
    def jax_distances(xs, ys):
        return jax.vmap(jax.vmap(to_jax(pairwise), (None, 0)), (0, None))(xs, ys)

    got = numbax.jit(distances_inside, backend=backend)(XS, XS[:4])
    np.testing.assert_allclose(got, jax_distances(XS, XS[:4]), rtol=1e-12)
    grad = numbax.grad(lambda xs: np.sum(distances_inside(xs, xs[:4]) ** 2), backend=backend)(XS)
    np.testing.assert_allclose(grad, jax.grad(lambda xs: jnp.sum(jax_distances(xs, xs[:4]) ** 2))(XS), rtol=1e-12)
    np.testing.assert_allclose(numbax.jit(nested_lambdas_inside, backend=backend)(2.0, XS), 2.0 * XS @ XS.T,
                               rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_of_vmap_and_vmap_of_jit(backend):
    want = jax.vmap(to_jax(loss), in_axes=(None, 0, 0))(W, XS, YS)
    np.testing.assert_allclose(numbax.jit(numbax.vmap(loss, in_axes=(None, 0, 0)), backend=backend)(W, XS, YS),
                               want, rtol=1e-12)
    np.testing.assert_allclose(numbax.vmap(numbax.jit(loss), in_axes=(None, 0, 0), backend=backend)(W, XS, YS),
                               want, rtol=1e-12)


def power(x, n):
    out = x
    for _ in range(n - 1):  # a loop over a static range: unrolled
        out = out * x
    return out


def test_static_arguments_through_jit():
    f = numbax.jit(numbax.vmap(power, in_axes=(0, None)), static_argnums=1, backend="python")
    np.testing.assert_allclose(f(YS, 3), YS ** 3)
    g = numbax.vmap(numbax.jit(power, static_argnums=1), in_axes=(0, None), backend="python")
    np.testing.assert_allclose(g(YS, 4), YS ** 4)
    assert g.static_argnums == (1,)
    h = numbax.vmap(power, static_argnames="n", backend="python")  # static arguments are never mapped
    np.testing.assert_allclose(h(YS, 2), YS ** 2)
    np.testing.assert_allclose(h(YS, n=3), YS ** 3)


def step(w, xs, ys, lr):
    """A jit-compiled training step: per-example losses and their gradient, in one Numba function."""
    losses = numbax.vmap(loss, in_axes=(None, 0, 0))(w, xs, ys)
    grads = numbax.vmap(numbax.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    return w - lr * grads.mean(axis=0), losses.mean()


BATCHED_LOSS = numbax.vmap(loss, in_axes=(None, 0, 0))


def step_with_module_level_vmap(w, xs, ys):
    return BATCHED_LOSS(w, xs, ys).max()


def closure_over_a_row(xs, w):
    return numbax.vmap(lambda row: np.dot(row, w) + 1.0)(xs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_inside_a_jit_compiled_function(backend):
    new_w, mean_loss = numbax.jit(step, backend=backend)(W, XS, YS, 0.1)
    grads = jax.vmap(jax.grad(to_jax(loss)), in_axes=(None, 0, 0))(W, XS, YS)
    np.testing.assert_allclose(new_w, W - 0.1 * np.mean(grads, axis=0), rtol=1e-12)
    np.testing.assert_allclose(mean_loss, np.mean(loss(W, XS, YS)), rtol=1e-12)
    np.testing.assert_allclose(numbax.jit(step_with_module_level_vmap, backend=backend)(W, XS, YS),
                               np.max(loss(W, XS, YS)), rtol=1e-12)
    np.testing.assert_allclose(numbax.jit(closure_over_a_row, backend=backend)(XS, W), XS @ W + 1.0, rtol=1e-12)


def printing(x):
    debug.print("x = {:.1f}", x)
    return x * 2.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_debug_print_prints_once_per_example_in_order(backend, capsys):
    out = numbax.vmap(printing, backend=backend)(np.arange(3.0))
    np.testing.assert_allclose(out, [0.0, 2.0, 4.0])
    assert capsys.readouterr().out.splitlines() == ["x = 0.0", "x = 1.0", "x = 2.0"]


def only_prints(x, scale):
    debug.print("x * scale = {:.1f}", x * scale)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_function_run_for_its_effects_runs_once_per_example(backend, capsys):
    assert numbax.vmap(only_prints, in_axes=(0, None), backend=backend)(np.arange(3.0), 2.0) is None
    assert capsys.readouterr().out.splitlines() == ["x * scale = 0.0", "x * scale = 2.0", "x * scale = 4.0"]


def draw(k):
    return random.normal(k, (3,))


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_under_vmap_is_bit_identical_with_jax(backend):
    keys = random.split(random.PRNGKey(0), 5)
    got = numbax.vmap(draw, backend=backend)(keys)
    want = jax.vmap(lambda k: jax.random.normal(k, (3,)))(jax.random.split(jax.random.PRNGKey(0), 5))
    assert got.dtype == want.dtype and np.array_equal(got, np.asarray(want))


def test_disable_jit_runs_the_generated_python():
    with numbax.config.disable_jit():
        np.testing.assert_allclose(numbax.vmap(loss, in_axes=(None, 0, 0))(W, XS, YS), loss(W, XS, YS))


def _mean_of_losses(w, xs, ys):
    return np.mean(numbax.vmap(loss, in_axes=(None, 0, 0))(w, xs, ys))


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_vmap_and_vmap_of_a_pullback_follow_jax(backend):
    """``grad`` of a ``vmap``ped function (its batched loop generated for reverse mode to read), and JAX's
    cookbook idiom ``vmap(vjp_fun)`` over the rows of an identity: a Jacobian, row by row."""
    per_example = numbax.vmap(lambda w, x, y: loss(w, x, y), in_axes=(None, 0, 0), backend=backend)
    got = numbax.jacrev(per_example, backend=backend)(W, XS, YS)
    jax_loss = lambda w, x, y: (jnp.tanh(x @ w) - y) ** 2  # noqa: E731
    want = jax.jacrev(jax.vmap(jax_loss, in_axes=(None, 0, 0)))(W, XS, YS)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(_mean_of_losses, backend=backend)(W, XS, YS),
                               np.asarray(jax.grad(lambda w: jnp.mean(jax.vmap(jax_loss, in_axes=(None, 0, 0))(
                                   w, XS, YS)))(W)), rtol=1e-12)
    out, pullback = numbax.vjp(lambda w: np.tanh(XS @ w), W)
    rows = numbax.vmap(pullback, backend=backend)(np.eye(XS.shape[0]))
    want_rows = jax.vmap(jax.vjp(lambda w: jnp.tanh(XS @ w), W)[1])(np.eye(XS.shape[0]))
    np.testing.assert_allclose(rows[0], np.asarray(want_rows[0]), rtol=1e-12)


# --------------------------------------------------------------------------------------------
# Specializations, the caches, and the generated source.


def test_one_compile_per_specialization(capsys):
    f = numbax.vmap(loss, in_axes=(None, 0, 0), backend="python")
    with numbax.config.log_compiles():
        f(W, XS, YS)
        f(W, XS[:2], YS[:2])  # another batch size: the same code
        f(W, XS.astype(np.float32), YS)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and "in_axes=(None, 0, 0)" in lines[0]
    assert "x: float64[2-d] -> float32[2-d]" in lines[1]


def test_the_generated_source_cache_keys_on_the_mapping():
    def key(**options):
        return generated_cache.key_for(loss, numbax.vmap(loss, **options)._generated_cache_tag(), ("k",))

    assert key() is not None and key() == key()
    assert key(in_axes=(None, 0, 0)) != key() != key(out_axes=-1)
    assert key(axis_size=3) != key()
    grad_tags = {numbax.vmap(numbax.grad(loss, argnums=n))._generated_cache_tag() for n in (0, 1)}
    assert len(grad_tags) == 2  # the gradient's argnums is part of what is mapped


def test_lower_source_and_numbax_source():
    f = numbax.vmap(loss, in_axes=(None, 0, 0), backend="python")
    text = f.lower_source(W, XS, YS)
    assert text == numbax.source(f, W, XS, YS)
    assert "def vmap_loss(w, x, y):" in text and "for start in range(stop, batch, 64):" in text  # blocks of rows
    compile(text, "<generated>", "exec")


def _run_child(tmp_path, source):
    return run_child(tmp_path, source, "numbax.vmap(user_module.f, in_axes=(0, None))(np.ones((3, 2)), 2.0).sum()")


def test_a_new_process_reuses_the_generated_batched_source(tmp_path):
    module = "import numpy as np\n\n\ndef f(x, s):\n    return np.sum(x) * s\n"
    assert _run_child(tmp_path, module) == (12.0, 1)
    assert _run_child(tmp_path, module) == (12.0, 0)  # no passes: the batched source came from disk
    assert _run_child(tmp_path, module.replace("* s", "+ s")) == (12.0, 1)
