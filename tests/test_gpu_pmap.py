"""``pmap`` over GPUs in Numba's CUDA simulator (one GPU): one shard per GPU, each shard's program compiled by
the GPU backend, results stacked on the first GPU as device arrays, the same values as ``pmap`` over CPU
devices, collectives among them (tests/test_gpu_pmap_collectives.py has two shards); what is not built (a
pmap over GPUs inside jit) is refused at the user's line, and devices and axis sizes that do not fit are
refused as JAX refuses them."""
import numpy as np
import pytest

import numbax
from numbax import lax
from numbax.backends.cuda import placement
from numbax.errors import NumbaxDeviceError

X = np.array([[0.3, -1.2, 2.0, 0.5]])  # one shard: the simulator's one GPU


def scaled(x, w, power):
    y = np.sin(x) * w + x ** power
    return {"y": y, "total": np.sum(y * y)}


def loss(x, w):
    return np.sum(np.tanh(x * w) ** 2)


def total(x):
    return lax.psum(x, "i") * 2.0 + lax.axis_index("i") - lax.pmean(x * x, "i")


on_gpus = numbax.pmap(scaled, "i", in_axes=(0, None, None), out_axes={"y": 1, "total": 0},
                      static_broadcasted_argnums=2, backend="gpu")
on_cpus = numbax.pmap(scaled, "i", in_axes=(0, None, None), out_axes={"y": 1, "total": 0},
                      static_broadcasted_argnums=2)


def test_values_as_pmap_over_cpu_devices_as_device_arrays_on_the_first_gpu(gpu):
    got = on_gpus(X, 0.75, 2)
    assert all(placement.is_device_array(leaf) for leaf in numbax.tree_util.tree_leaves(got))
    got = numbax.device_get(got)
    want = on_cpus(X, 0.75, 2)
    assert got["y"].shape == (4, 1) and got["total"].shape == (1,)
    for key in ("y", "total"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-12)
    np.testing.assert_allclose(got["y"][:, 0], np.sin(X[0]) * 0.75 + X[0] ** 2, rtol=1e-12)
    on_device = numbax.device_put(X, gpu)  # device arrays, no devices passed: pmap runs over the GPUs
    np.testing.assert_allclose(numbax.device_get(numbax.pmap(scaled, in_axes=(0, None, None),
                                                             static_broadcasted_argnums=2)(on_device, 0.75, 2))["y"],
                               want["y"].T, rtol=1e-12)


def test_grad_per_shard_as_over_cpu_devices_and_by_hand(gpu):
    grads = numbax.pmap(numbax.grad(loss, argnums=(0, 1)), in_axes=(0, None), devices=[gpu])(X, 1.5)
    dx, dw = numbax.device_get(grads)
    want_dx, want_dw = numbax.pmap(numbax.grad(loss, argnums=(0, 1)), in_axes=(0, None))(X, 1.5)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-12)
    np.testing.assert_allclose(dw, want_dw, rtol=1e-12)
    t = np.tanh(X[0] * 1.5)
    np.testing.assert_allclose(dx[0], 2 * t * (1 - t * t) * 1.5, rtol=1e-12)
    np.testing.assert_allclose(dw[0], np.sum(2 * t * (1 - t * t) * X[0]), rtol=1e-12)


def test_collectives_over_the_gpu_as_over_cpu_devices(gpu):
    got = numbax.device_get(numbax.pmap(total, "i", devices=[gpu])(X))
    np.testing.assert_allclose(got, numbax.pmap(total, "i")(X), rtol=1e-12)
    np.testing.assert_allclose(got, 2 * X - X * X, rtol=1e-12)


def test_devices_and_sizes_that_do_not_fit_are_refused(gpu):
    with pytest.raises(ValueError, match=r"requires 2 logical devices, but only 1 XLA devices are available"):
        on_gpus(np.ones((2, 4)), 0.75, 2)
    with pytest.raises(ValueError, match=r"must equal the number of local devices passed to pmap. Got "
                                         r"axis_size=2, num_local_devices=1"):
        numbax.pmap(np.sin, devices=[gpu])(np.ones((2, 4)))
    cpu = numbax.devices("cpu")[0]
    with pytest.raises(NumbaxDeviceError, match="pmap's devices mix GPUs and CPU devices"):
        numbax.pmap(np.sin, devices=[gpu, cpu])
    with pytest.raises(NumbaxDeviceError, match=r"pmap's backend='cpu' with devices \[CudaDevice\(id=0\)\]"):
        numbax.pmap(np.sin, backend="cpu", devices=[gpu])
    with pytest.raises(NumbaxDeviceError, match=r"pmap's backend='gpu' with devices \[CpuDevice\(id=0\)\]"):
        numbax.pmap(np.sin, backend="gpu", devices=[cpu])
    with pytest.raises(NumbaxDeviceError, match=r"test_gpu_pmap\.py:\d+: pmap over CPU devices was called with "
                                                r"device arrays"):
        numbax.pmap(scaled, in_axes=(0, None, None), static_broadcasted_argnums=2, devices=[cpu])(
            numbax.device_put(X, gpu), 0.75, 2)


def test_a_pmap_over_gpus_inside_jit_is_refused(gpu):
    inner = numbax.pmap(loss, in_axes=(0, None), backend="gpu")

    def outer(x):
        return inner(x, 1.5)

    with pytest.raises(NumbaxDeviceError, match=r"test_gpu_pmap\.py:\d+: pmap over GPUs inside another "
                                                r"transformation or a jit is not built yet"):
        numbax.jit(outer)(X)
