"""``numbax.pmap`` over 2 CPU devices against ``jax.pmap`` on 2 forced host devices (float64): the seed's
program, every collective's values, ``grad`` of a pmapped program, ``pmap(grad(f))`` with ``pmean`` (the
data-parallel pattern), and JAX's errors. JAX reads its device count only before its backend starts, and
other test files start it with one device, so the JAX programs run in a subprocess."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numbax
from numbax import lax
from numbax.errors import NumbaxAxisNameError, NumbaxDeviceError

X = np.array([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]])
W = np.array([0.5, -0.25, 1.0])

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pmap_programs import collectives, iterated, loss, nested, normalized  # noqa: E402

ORACLE = textwrap.dedent('''
    import json, sys
    import jax, jax.numpy as jnp
    from pmap_programs import collectives, iterated, loss, nested, normalized
    jax.config.update("jax_enable_x64", True)
    x, w = (jnp.array(v) for v in json.loads(sys.argv[1]))
    assert len(jax.devices()) == 2
    out = {"seed": jax.pmap(lambda v: v * 2, devices=jax.devices())(jnp.arange(len(jax.devices())))}
    out["collectives"] = jax.pmap(lambda v: collectives(v, jax.lax, jnp), axis_name="i")(x)
    f = jax.pmap(lambda v: normalized(v, w, jax.lax, jnp), axis_name="i")
    out["normalized"] = f(x)
    out["grad"] = jax.grad(lambda v: jnp.sum(f(v) ** 2))(x)
    xs, ys = x.reshape(2, 1, 3), jnp.sum(x, axis=1).reshape(2, 1)
    step = jax.pmap(lambda w, x, y: jax.lax.pmean(jax.grad(loss)(w, x, y, jnp), "b"), axis_name="b",
                    in_axes=(None, 0, 0))
    out["data_parallel"] = step(w, xs, ys)
    out["iterated"] = jax.pmap(lambda v: iterated(v, jax.lax, jnp), axis_name="i")(x)
    out["nested"] = jax.pmap(jax.vmap(lambda v: nested(v, jax.lax, jnp), axis_name="j"), axis_name="i")(x)
    print(json.dumps(jax.tree_util.tree_map(lambda a: jnp.asarray(a).tolist(), out)))
''')


@pytest.fixture(scope="module")
def jax_results():
    here = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", ORACLE, json.dumps([X.tolist(), W.tolist()])], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def two_devices():
    numbax.config.update("cpu_device_count", 2)
    yield numbax.devices("cpu")
    numbax.config.update("cpu_device_count", 1)


def numbax_collectives(x):
    return collectives(x, lax, np)


def test_devices_setting():
    assert numbax.devices("cpu") == numbax.devices()
    with pytest.raises(ValueError, match="positive integer"):
        numbax.config.update("cpu_device_count", 0)
        try:
            numbax.devices()
        finally:
            numbax.config.update("cpu_device_count", 1)


def test_seed_program(two_devices, jax_results):
    devices = numbax.devices
    assert [repr(d) for d in devices()] == ["CpuDevice(id=0)", "CpuDevice(id=1)"]
    got = numbax.pmap(lambda x: x * 2, devices=devices())(np.arange(len(devices())))
    np.testing.assert_array_equal(got, jax_results["seed"])


def test_collectives_against_jax(two_devices, jax_results):
    got = numbax.pmap(numbax_collectives, axis_name="i")(X)
    assert len(got) == len(jax_results["collectives"])
    for g, want in zip(got, jax_results["collectives"]):
        np.testing.assert_allclose(g, np.array(want), rtol=1e-12, atol=0)


def test_grad_of_a_pmapped_program(two_devices, jax_results):
    f = numbax.pmap(lambda v: normalized(v, W, lax, np), axis_name="i")
    np.testing.assert_allclose(f(X), jax_results["normalized"], rtol=1e-12)
    g = numbax.grad(lambda v: np.sum(f(v) ** 2))(X)
    np.testing.assert_allclose(g, jax_results["grad"], rtol=1e-11)
    t = np.ones_like(X)
    _, tangent = numbax.jvp(lambda v: np.sum(f(v) ** 2), (X,), (t,))
    np.testing.assert_allclose(tangent, np.sum(g * t), rtol=1e-11)


def test_data_parallel_gradients(two_devices, jax_results):
    xs, ys = X.reshape(2, 1, 3), np.sum(X, axis=1).reshape(2, 1)
    step = numbax.pmap(lambda w, x, y: lax.pmean(numbax.grad(lambda w: loss(w, x, y, np))(w), "b"),
                       axis_name="b", in_axes=(None, 0, 0))
    got = step(W, xs, ys)
    np.testing.assert_allclose(got, jax_results["data_parallel"], rtol=1e-12)
    whole_batch = numbax.grad(lambda w: loss(w, X, np.sum(X, axis=1), np))(W)
    np.testing.assert_allclose(got[0], whole_batch, rtol=1e-12)


def numbax_iterated(x):
    return iterated(x, lax, np)


def test_collectives_in_a_fori_loop_of_the_shard(two_devices, jax_results):
    np.testing.assert_allclose(numbax.pmap(numbax_iterated, axis_name="i")(X), jax_results["iterated"], rtol=1e-12)


def numbax_nested(x):
    return nested(x, lax, np)


def test_a_vmap_inside_a_pmap(two_devices, jax_results):
    got = numbax.pmap(numbax.vmap(numbax_nested, axis_name="j"), axis_name="i")(X)
    np.testing.assert_allclose(got, jax_results["nested"], rtol=1e-12)


def test_errors_as_jax_raises_them(two_devices):
    double = numbax.pmap(lambda x: x * 2.0)
    with pytest.raises(ValueError, match=r"requires 3 logical devices, but only 2 XLA devices are available"):
        double(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"must equal the number of local devices passed to pmap. Got axis_size=2, "
                                         r"num_local_devices=1"):
        numbax.pmap(lambda x: x, devices=two_devices[:1])(np.ones(2))
    with pytest.raises(ValueError, match="at least one argument with a mapped axis"):
        numbax.pmap(lambda: 1.0)()
    with pytest.raises(NumbaxDeviceError, match=r"pmap's backend='gpu' with devices \[CpuDevice"):
        numbax.pmap(lambda x: x, backend="gpu", devices=two_devices)
    with pytest.raises(NumbaxAxisNameError, match="unbound axis name: j"):
        numbax.pmap(lambda x: lax.psum(x, "j"), axis_name="i")(X)
    assert numbax.pmap(lambda x: x + 1.0, donate_argnums=0)(X[:1]).shape == (1, 3)  # a hint, accepted


def test_the_device_count_is_read_at_each_call(two_devices):
    add_one = numbax.pmap(lambda x: x + 1.0)
    np.testing.assert_array_equal(add_one(X), X + 1.0)
    numbax.config.update("cpu_device_count", 1)
    try:
        with pytest.raises(ValueError, match="requires 2 logical devices, but only 1"):
            add_one(X)
        np.testing.assert_array_equal(add_one(X[:1]), X[:1] + 1.0)
    finally:
        numbax.config.update("cpu_device_count", 2)
    np.testing.assert_array_equal(add_one(X), X + 1.0)
