"""Collectives in ``pmap`` over GPUs, in Numba's CUDA simulator: the values of the CPU's ``pmap`` (the same
program on the python backend, which runs the CPU pmap's generated code uncompiled) and of NumPy by hand; the
data-parallel step's averaged gradient as JAX's full-batch gradient; refusals of what is not built, and the
errors of shards that do not reach the same collectives.

The simulator has one GPU (``numba.cuda.gpus`` lists one device, and its ``select_device`` refuses any other).
So the two-shard tests list that GPU twice (``two_gpus``): each shard runs on its own thread, with its own slot
in the exchange and its own host driver, through the same code as on two GPUs; what they do not exercise is
two CUDA contexts (each shard's ``numba.cuda.gpus[k]`` is the same device here) and concurrent kernels (the
simulator runs one kernel at a time, so the shards take turns between collectives).
"""
import numpy as np
import pytest

import numbax
from numbax import lax
from numbax.errors import NumbaxCollectiveError, NumbaxDeviceError, NumbaxShapeError
from numbax.transforms.pmap import gpu_shards

X = np.array([[0.3, -1.2, 2.0, 0.5], [1.0, 0.25, -0.5, 3.0]])


def collectives(x):
    return (lax.psum(x, "i") * 2.0, lax.pmean(x * x, "i"), lax.pmax(x, "i"), lax.pmin(x, "i"),
            lax.all_gather(x, "i"), lax.all_gather(x, "i", axis=1), lax.all_gather(x, "i", tiled=True),
            lax.ppermute(x, "i", [(0, 1), (1, 0)]), lax.ppermute(x, "i", [(0, 1)]), lax.axis_index("i") + 0 * x,
            lax.psum_scatter(x.reshape((2, 2)), "i"), lax.psum(np.sum(x), "i"), lax.psum(1, "i"))


def loss(params, x, y):
    (w1, b1), (w2, b2) = params
    return np.mean((np.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)


def step(params, x, y):
    """The data-parallel MLP step: each shard's gradient, averaged over the shards."""
    grads = lax.pmean(numbax.grad(loss)(params, x, y), "batch")
    return [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(params, grads)], lax.pmean(loss(params, x, y),
                                                                                                   "batch")


on_gpus = numbax.pmap(collectives, "i", backend="gpu")
on_cpus = numbax.pmap(collectives, "i", backend="python")
step_on_gpus = numbax.pmap(step, "batch", in_axes=(None, 0, 0), backend="gpu")
step_on_cpus = numbax.pmap(step, "batch", in_axes=(None, 0, 0), backend="python")


@pytest.fixture(scope="module")
def two_gpus(gpu):
    """Two shards over the simulator's GPU listed twice (see the module docstring); 2 CPU devices for the CPU's
    pmap."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gpu_shards, "gpus", lambda devices: ((gpu, gpu), False))
        numbax.config.update("cpu_device_count", 2)
        try:
            yield
        finally:
            numbax.config.update("cpu_device_count", 1)


def test_collectives_over_two_shards_as_the_cpu_pmap_and_by_hand(two_gpus):
    got = numbax.device_get(on_gpus(X))
    want = on_cpus(X)
    for a, b in zip(got, want):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    total, mean_square, largest, smallest, gathered, gathered_1, tiled, swapped, sent, index, scattered, sums, \
        count = got
    np.testing.assert_allclose(total, [2 * X.sum(0)] * 2, rtol=1e-12)
    np.testing.assert_allclose(mean_square, [(X * X).mean(0)] * 2, rtol=1e-12)
    np.testing.assert_array_equal(largest, [X.max(0)] * 2)
    np.testing.assert_array_equal(smallest, [X.min(0)] * 2)
    np.testing.assert_array_equal(gathered, [X] * 2)
    np.testing.assert_array_equal(gathered_1, [X.T] * 2)
    np.testing.assert_array_equal(tiled, [X.reshape(-1)] * 2)
    np.testing.assert_array_equal(swapped, X[::-1])
    np.testing.assert_array_equal(sent, [np.zeros(4), X[0]])
    np.testing.assert_array_equal(index, [[0.0] * 4, [1.0] * 4])
    np.testing.assert_allclose(scattered, X.reshape(2, 2, 2).sum(0), rtol=1e-12)
    np.testing.assert_allclose(sums, [X.sum()] * 2, rtol=1e-12)
    np.testing.assert_array_equal(count, [2, 2])


def scaled_by_count(x):
    return x * lax.psum(1, "i")


def test_one_shard_after_two_is_compiled_for_one(two_gpus):
    """The number of shards is part of the program's key: ``psum(1, 'i')`` is 2, then 1."""
    counted = numbax.pmap(scaled_by_count, "i", backend="gpu")
    np.testing.assert_array_equal(numbax.device_get(counted(X)), 2 * X)
    np.testing.assert_array_equal(numbax.device_get(counted(X[:1])), X[:1])


def test_data_parallel_step_averages_the_shards_gradients(two_gpus):
    import jax
    import jax.numpy as jnp
    from grad_corpus.oracles import to_jax  # noqa: F401  (float64 in JAX)

    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(3, 4)), rng.normal(size=4)), (rng.normal(size=(4, 1)), rng.normal(size=1))]
    x, y = rng.normal(size=(2, 3, 3)), rng.normal(size=(2, 3, 1))
    got = numbax.device_get(step_on_gpus(params, x, y))
    want = step_on_cpus(params, x, y)
    for a, b in zip(numbax.tree_util.tree_leaves(got), numbax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)

    def jax_loss(params, x, y):
        (w1, b1), (w2, b2) = params
        return jnp.mean((jnp.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)

    full = jax.grad(jax_loss)(params, x.reshape(6, 3), y.reshape(6, 1))  # equal shards: the mean of theirs
    for (w, b), (dw, db), (new_w, new_b) in zip(params, full, got[0]):
        np.testing.assert_allclose(new_w, [w - 0.1 * np.asarray(dw)] * 2, rtol=1e-12)
        np.testing.assert_allclose(new_b, [b - 0.1 * np.asarray(db)] * 2, rtol=1e-12)
    np.testing.assert_allclose(got[1], [jax_loss(params, x.reshape(6, 3), y.reshape(6, 1))] * 2, rtol=1e-12)


def different_collectives(x):
    if lax.axis_index("i") == 0:
        return lax.psum(x, "i")
    return lax.pmean(x, "i")


def one_collective_more(x):
    for _ in range(lax.axis_index("i") + 1):
        x = lax.psum(x, "i")
    return x


def uneven(x):
    return lax.psum(x[:lax.axis_index("i") + 1], "i")


def test_shards_that_do_not_reach_the_same_collectives_raise(two_gpus):
    with pytest.raises(NumbaxCollectiveError, match=r"test_gpu_pmap_collectives\.py:\d+: pmap's shards over GPUs "
                                                    r"reached different collectives: shard \d numbax\.lax\.p"):
        numbax.pmap(different_collectives, "i", backend="gpu")(X)
    with pytest.raises(NumbaxCollectiveError, match=r"pmap's shard 0 over GPUs returned before reaching this "
                                                    r"numbax\.lax\.psum, which shard 1 reached"):
        numbax.pmap(one_collective_more, "i", backend="gpu")(X)
    with pytest.raises(NumbaxShapeError, match=r"test_gpu_pmap_collectives\.py:\d+: pmap's shards passed operands "
                                               r"of different shapes to a collective"):
        numbax.pmap(uneven, "i", backend="gpu")(X)


def inside_vmap(x):
    return numbax.vmap(lambda r: r / lax.psum(r, "i"))(x)


def two_axes(x):
    return numbax.vmap(lambda r: lax.psum(r, ("i", "j")), axis_name="j")(x)


def over_the_vmap(x):
    return numbax.vmap(lambda r: lax.psum(r, "j"), axis_name="j")(x)


def squares(v):
    return lax.psum(np.sum(v * v), "i")


def through_psum(x):
    return numbax.grad(squares)(x)


@pytest.mark.parametrize("fun, error, message", [
    (inside_vmap, NumbaxDeviceError, r"a collective over the axis of a pmap over GPUs \('i'\) inside a vmap is not "
                                     r"built yet"),
    (two_axes, NumbaxDeviceError, r"a collective over the axis of a pmap over GPUs and another axis at once "
                                  r"\(\('i', 'j'\)\) is not built yet"),
    (over_the_vmap, NumbaxDeviceError, r"collectives over the axis of a vmap on the GPU backend \('j'\) are not "
                                       r"built yet"),
    (through_psum, numbax.NumbaxDifferentiationError, r"numbax\.lax\.psum over the GPUs of a pmap, differentiated "
                                                      r"inside the pmapped function"),
])
def test_what_is_not_built_is_refused_at_its_line(gpu, fun, error, message):
    with pytest.raises(error, match=r"test_gpu_pmap_collectives\.py:\d+: (.|\n)*" + message):
        numbax.pmap(fun, "i", backend="gpu")(X[:1, :2].reshape(1, 1, 2))
