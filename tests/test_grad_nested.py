"""grad and value_and_grad called inside a jit-compiled function: generated in place, same values as eagerly."""
from __future__ import annotations

import numpy as np
import pytest

import numbax

BACKENDS = ("python", "cpu")


def forward(params, x):
    for w, b in params[:-1]:
        x = np.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    return np.mean((forward(params, x) - y) ** 2)


loss_grad = numbax.grad(loss)


def sgd_step(params, x, y):
    grads = loss_grad(params, x, y)
    return [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(params, grads)]


def train(params, x, y, epochs):
    value = 0.0
    for _ in range(epochs):
        value, grads = numbax.value_and_grad(loss)(params, x, y)
        params = [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(params, grads)]
    return params, value


def scaled_loss(w, scale):
    return np.sum(np.sin(w) * scale), np.max(w)


def aux_and_argnums(w, scale):
    (g, top) = numbax.grad(scaled_loss, has_aux=True)(w, scale)
    gw, gs = numbax.grad(lambda_free_loss, argnums=(0, 1))(w, scale)
    return g, top, gw, gs


def lambda_free_loss(w, scale):
    return np.sum(w * w) * scale


def mlp(seed=0, sizes=(3, 4, 1), batch=5):
    rng = np.random.default_rng(seed)
    params = [(rng.normal(size=(m, n)), rng.normal(size=n)) for m, n in zip(sizes[:-1], sizes[1:])]
    return params, rng.normal(size=(batch, sizes[0])), rng.normal(size=(batch, sizes[-1]))


def assert_trees_close(a, b):
    leaves_a, leaves_b = numbax.tree_util.tree_leaves(a), numbax.tree_util.tree_leaves(b)
    assert numbax.tree_util.tree_structure(a) == numbax.tree_util.tree_structure(b)
    for u, v in zip(leaves_a, leaves_b):
        assert np.allclose(u, v, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_step_calling_grad_matches_eager(backend):
    params, x, y = mlp()
    assert_trees_close(numbax.jit(sgd_step, backend=backend)(params, x, y), sgd_step(params, x, y))


@pytest.mark.parametrize("backend", BACKENDS)
def test_value_and_grad_built_inside_a_compiled_loop(backend):
    params, x, y = mlp(1)
    got = numbax.jit(train, backend=backend)(params, x, y, 3)
    assert_trees_close(got, train(params, x, y, 3))
    assert got[1] < loss(params, x, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_has_aux_and_argnums_inside_jit(backend):
    w = np.array([0.3, -1.2, 2.0])
    got = numbax.jit(aux_and_argnums, backend=backend)(w, 1.5)
    assert np.allclose(got[0], np.cos(w) * 1.5) and got[1] == 2.0
    assert np.allclose(got[2], 2 * w * 1.5) and got[3] == pytest.approx(np.sum(w * w))


def test_generated_step_holds_the_adjoint_with_comments():
    params, x, y = mlp()
    source = numbax.source(numbax.jit(sgd_step), params, x, y)
    assert "# grad of: return np.mean((forward(params, x) - y) ** 2)" in source
    assert "loss_grad" not in source


def step_of_step(w):
    return np.sum(numbax.grad(lambda_free_loss)(w, 2.0))


def test_grad_of_a_function_calling_grad_differentiates_the_inner_gradient():
    w = np.array([0.3, -1.2, 2.0])
    assert np.allclose(numbax.grad(step_of_step)(w), np.full(3, 4.0))  # sum(2 * w * 2.0) (test_grad_higher_order)


def test_grad_of_a_local_function_inside_jit():
    """It was refused ("define the function at module level"); it is lifted now (test_local_functions)."""
    def f(w):
        inner = lambda v: np.sum(v * v * w[0])  # noqa: E731
        return numbax.grad(inner)(w)

    w = np.array([2.0, 3.0])
    np.testing.assert_allclose(numbax.jit(f, backend="python")(w), 2 * w * w[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_vjp_pullback_made_outside_is_called_inside_jit(backend):
    pull = numbax.vjp(lambda_free_loss, np.ones(2), 1.0)[1]

    def f(w):
        return pull(w)

    gw, gs = numbax.jit(f, backend=backend)(1.5)
    assert np.allclose(gw, [3.0, 3.0]) and gs == pytest.approx(3.0)


def vjp_inside(w, ct):
    out, pull = numbax.vjp(lambda_free_loss, w, 2.0)
    gw, gs = pull(ct)
    return out, gw, gs


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_called_inside_jit(backend):
    w = np.array([0.3, -1.2])
    out, gw, gs = numbax.jit(vjp_inside, backend=backend)(w, 0.5)
    assert out == pytest.approx(np.sum(w * w) * 2.0)
    assert np.allclose(gw, 2 * w * 2.0 * 0.5) and gs == pytest.approx(np.sum(w * w) * 0.5)


def sine(x):
    return np.sin(x)


def pull_sine(x, ct):
    _, pull = numbax.vjp(sine, x)
    return pull(ct)[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cotangent_of_another_shape_is_jaxs_value_error(backend):
    """Inside compiled code and out: a (1,) cotangent of a (3,) output is not broadcast (a wrong number)."""
    x = np.array([0.1, 0.2, 0.3])
    pull = numbax.jit(pull_sine, backend=backend)
    np.testing.assert_allclose(pull(x, np.ones(3)), np.cos(x), rtol=1e-12)
    for wrong in (np.ones(1), np.ones(4)):
        with pytest.raises(ValueError, match="unexpected JAX type"):
            pull(x, wrong)
    with pytest.raises(numbax.NumbaxError, match="a cotangent of rank 0 for an output of rank 1"):
        pull(x, 1.0)
    _, python_pull = numbax.vjp(sine, x)
    with pytest.raises(ValueError, match=r"got float64\[1\], but expected float64\[3\]"):
        python_pull(np.ones(1))
    with pytest.raises(ValueError, match=r"got float64\[\], but expected float64\[3\]"):
        python_pull(1.0)


def pull_sum(x, ct):
    _, pull = numbax.vjp(np.sum, x)
    return pull(ct)[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cotangent_of_another_dtype_is_jaxs_value_error(backend):
    """As jax.vjp's pullback: a float64 output takes a float64 cotangent (a Python float counts), and a
    float32, integer, boolean or complex one is refused rather than cast, inside compiled code and out."""
    x = np.array([0.1, 0.2, 0.3])
    pull = numbax.jit(pull_sine, backend=backend)
    with pytest.raises(numbax.NumbaxError, match="a cotangent of dtype float32 for an output of dtype float64"):
        pull(x, np.ones(3, np.float32))
    np.testing.assert_allclose(numbax.jit(pull_sum, backend=backend)(x, 2.0), 2.0 * np.ones(3))
    with pytest.raises(numbax.NumbaxError, match="a cotangent of dtype int64 for an output of dtype float64"):
        numbax.jit(pull_sum, backend=backend)(x, 2)
    _, python_pull = numbax.vjp(sine, x)
    for wrong, name in ((np.ones(3, np.float32), "float32"), (np.ones(3, np.int64), "int64"),
                        (np.ones(3, bool), "bool"), (np.ones(3, complex), "complex128")):
        with pytest.raises(ValueError, match=rf"got {name}\[3\], but expected float64\[3\]"):
            python_pull(wrong)
    _, scalar_pull = numbax.vjp(np.sum, x)
    np.testing.assert_allclose(scalar_pull(2.0)[0], 2.0 * np.ones(3))
    with pytest.raises(ValueError, match=r"got int64\[\], but expected float64\[\]"):
        scalar_pull(2)


def _sum_of_sines(w):
    return np.sum(np.sin(w))


def _eigenvalue_gradient(a):
    w, v = np.linalg.eigh(a)
    return numbax.grad(_sum_of_sines)(w) + 0.0 * v[0]


def _log_determinant_gradient(a):
    return numbax.grad(_sum_of_sines)(np.linalg.slogdet(a)[1])


def _of_two_dtypes(w, flag):
    if flag > 0:
        return w
    return w.astype(np.float32)


def test_grad_of_a_value_unpacked_from_a_numpy_functions_tuple_result_inside_jit():
    # ``w, v = np.linalg.eigh(a)`` gave names of unknown dtype and rank, which grad refused
    a = np.array([[2.0, 0.5], [0.5, 1.0]])
    np.testing.assert_allclose(numbax.jit(_eigenvalue_gradient)(a), np.cos(np.linalg.eigh(a)[0]), rtol=1e-14)
    np.testing.assert_allclose(numbax.jit(_log_determinant_gradient)(a), np.cos(np.linalg.slogdet(a)[1]),
                               rtol=1e-14)


def test_grad_of_a_value_whose_dtype_depends_on_the_path_is_still_refused():
    with pytest.raises(numbax.NumbaxSpecializationError, match="cannot tell the dtype and rank of argument `w`"):
        numbax.jit(lambda w, flag: numbax.grad(_sum_of_sines)(_of_two_dtypes(w, flag)))(np.ones(2), 1.0)


def per_example_gradients(ws, scale):
    return numbax.vmap(numbax.grad(lambda_free_loss), in_axes=(0, None))(ws, scale)


def gradients_of_two_dtypes(w, w32):
    g = numbax.grad(lambda_free_loss)
    return g(w, 2.0), g(w32, 2.0), g(w, 3.0)


def test_a_nested_transformation_called_alike_is_generated_once(monkeypatch, tmp_path):
    """A vmap's first example and its loop call the gradient alike: its code is generated once per compiled
    function; a call with another dtype gets its own, and calls that differ in run-time values alone share it."""
    inner = numbax.grad(lambda_free_loss)
    runs = []
    original = type(inner)._run_pipeline

    def counted(self, bound, *args, **kwargs):
        if self is inner:
            runs.append([leaf.aval.dtype for leaf in numbax.tree_util.tree_leaves(bound)])
        return original(self, bound, *args, **kwargs)

    monkeypatch.setattr(type(inner), "_run_pipeline", counted)
    old = numbax.config.read("cache_dir")
    numbax.config.update("cache_dir", str(tmp_path / "cache"))  # generated here, not loaded from an earlier run
    try:
        ws = np.arange(6.0).reshape(3, 2)
        np.testing.assert_allclose(numbax.jit(per_example_gradients, backend="python")(ws, 1.5), 2 * ws * 1.5)
        assert len(runs) == 1
        w = np.array([0.5, -2.0])
        g64, g32, g3 = numbax.jit(gradients_of_two_dtypes, backend="python")(w, w.astype(np.float32))
        assert [g.dtype for g in (g64, g32, g3)] == [np.float64, np.float32, np.float64]
        np.testing.assert_allclose(g64, 4 * w)
        np.testing.assert_allclose(g32, 4 * w, rtol=1e-6)
        np.testing.assert_allclose(g3, 6 * w)
        assert len(runs) == 3 and runs[1] != runs[2]
    finally:
        numbax.config.update("cache_dir", old)


def test_static_values_equal_but_spelled_apart_key_their_own_code():
    # ``0.0 == -0.0``, but code generated for a static -0.0 may divide by it: each gets its own entry
    from numbax.transforms import nesting

    assert nesting._static_key(0.0) != nesting._static_key(-0.0)
    assert nesting._static_key(np.float64(-0.0)) != nesting._static_key(np.float64(0.0))
    assert nesting._static_key(2) == nesting._static_key(2) != nesting._static_key(2.0)
