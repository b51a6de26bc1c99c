"""Devices: the CPU always; GPUs through numba.cuda (its simulator here); jit of device arrays runs there."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numbax

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(numbax.__file__)))  # the numbax under test

def test_cpu_device_and_counts():
    (cpu,) = numbax.devices()
    assert cpu.platform == "cpu" and repr(cpu) == "CpuDevice(id=0)"
    assert numbax.devices("cpu") == [cpu] and numbax.local_device_count() == 1
    with pytest.raises(RuntimeError, match="Unknown backend 'tpu'"):
        numbax.devices("tpu")


def test_device_put_and_get_on_the_cpu_keep_the_pytree():
    tree = {"w": [1.0, 2.0], "b": (np.ones(2), None)}
    put = numbax.device_put(tree)
    assert isinstance(put["w"][0], np.ndarray) and put["b"][1] is None
    got = numbax.device_get(put)
    assert np.allclose(got["b"][0], 1.0) and numbax.tree_util.tree_structure(got) == numbax.tree_util.tree_structure(tree)


def test_gpu_round_trip_and_jit_in_a_fresh_cuda_simulator_process(tmp_path):
    script = textwrap.dedent("""
        import numpy as np, numbax
        (gpu,) = numbax.devices("gpu")
        assert gpu.platform == "gpu" and repr(gpu) == "CudaDevice(id=0)", gpu
        assert numbax.local_device_count("cuda") == 1
        tree = numbax.device_put({"x": np.arange(3.0)}, gpu)
        assert not isinstance(tree["x"], np.ndarray)
        assert np.allclose(numbax.device_get(tree)["x"], [0.0, 1.0, 2.0])
        def f(x):
            return x * 2.0
        out = numbax.jit(f)(tree["x"])  # computation follows data: on the GPU, a device array back
        assert not isinstance(out, np.ndarray) and np.allclose(numbax.device_get(out), [0.0, 2.0, 4.0])
        print("ok")
    """)
    path = tmp_path / "on_gpu.py"
    path.write_text(script)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


def test_asking_for_a_gpu_without_one_says_so():
    script = "import numbax\ntry:\n    numbax.devices('gpu')\nexcept RuntimeError as e:\n    print(e)\n"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = ROOT
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert "no CUDA GPU" in out.stdout, out.stderr[-2000:]
