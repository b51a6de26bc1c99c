"""The GPU backend's devices and data placement, in Numba's CUDA simulator: computation follows data, results
stay on the device, mixing devices is refused with the arguments named, and a machine without numba-cuda or a
GPU gets one clear error."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numbax
from numbax.backends.cuda import placement

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(numbax.__file__)))


def scale_and_sum(x, s):
    y = x * s
    return y, y.sum()


def test_devices_lists_the_gpu(gpu):
    assert numbax.devices("gpu") == [gpu] and numbax.devices("cuda") == [gpu]
    assert gpu.platform == "gpu" and repr(gpu) == "CudaDevice(id=0)" and numbax.local_device_count("gpu") == 1


def test_device_put_and_get_round_trip_a_pytree(gpu):
    tree = {"w": np.arange(6.0).reshape(2, 3), "b": (np.ones(2, np.float32), None), "n": 3.0}
    put = numbax.device_put(tree, gpu)
    assert placement.is_device_array(put["w"]) and placement.is_device_array(put["b"][0]) and put["b"][1] is None
    assert numbax.device_put(put["w"], gpu) is put["w"]  # already there: not copied
    back = numbax.device_get(put)
    np.testing.assert_array_equal(back["w"], tree["w"])
    assert back["b"][0].dtype == np.float32 and float(back["n"]) == 3.0


def test_computation_follows_data(gpu):
    x = np.linspace(0.5, 2.0, 7)
    f = numbax.jit(scale_and_sum)
    on_host = f(x, 2.0)
    assert isinstance(on_host[0], np.ndarray)  # NumPy in, the CPU backend
    on_gpu = f(numbax.device_put(x, gpu), 2.0)
    assert all(placement.is_device_array(leaf) for leaf in on_gpu)  # the number too: a 0-d device array
    got = numbax.device_get(on_gpu)
    np.testing.assert_allclose(got[0], on_host[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], on_host[1], rtol=1e-12)


def test_backend_gpu_moves_host_inputs_there(gpu):
    x = np.arange(5.0)
    out = numbax.jit(scale_and_sum, backend="gpu")(x, 0.5)
    assert placement.is_device_array(out[0])
    np.testing.assert_allclose(numbax.device_get(out[0]), x * 0.5, rtol=1e-12)
    np.testing.assert_array_equal(x, np.arange(5.0))  # the host array itself is left alone


def test_a_zero_d_device_array_is_a_number_there(gpu):
    out = numbax.jit(scale_and_sum)(numbax.device_put(np.ones(3), gpu), numbax.device_put(np.array(4.0), gpu))
    assert float(numbax.device_get(out[1])) == 12.0


def test_mixing_host_and_device_arrays_names_the_arguments(gpu):
    def add(x, y):
        return x + y

    with pytest.raises(numbax.NumbaxDeviceError, match=r"`x` are on the GPU and `y` on the host") as info:
        numbax.jit(add)(numbax.device_put(np.ones(2), gpu), np.ones(2))
    assert "device_put" in str(info.value)


class _ForeignGpuArray:
    """What CuPy and PyTorch arrays show numbax: ``__cuda_array_interface__`` and a device with an id."""

    def __init__(self, device_id):
        self.__cuda_array_interface__ = {"shape": (2,), "typestr": "<f8", "data": (0, False), "version": 3}
        self.device = type("Device", (), {"id": device_id})()


def test_anything_with_the_cuda_array_interface_counts_as_on_the_gpu():
    assert placement.is_device_array(_ForeignGpuArray(0)) and not placement.is_device_array(np.ones(2))
    assert placement.target("cpu", [("x", _ForeignGpuArray(0)), ("s", 2.0)]) == "gpu"
    assert placement.target("gpu", [("x", np.ones(2))]) == "gpu"
    assert placement.target("cpu", [("x", np.ones(2))]) == "cpu"
    with pytest.raises(numbax.NumbaxDeviceError, match=r"different GPUs \(GPU 0: a; GPU 1: b\)"):
        placement.target("cpu", [("a", _ForeignGpuArray(0)), ("b", _ForeignGpuArray(1))])


def _run(tmp_path, script: str, env_update: dict) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(env_update, PYTHONPATH=os.pathsep.join([ROOT] + sys.path))
    path = tmp_path / "gpu_request.py"
    path.write_text(textwrap.dedent(script))
    out = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


_EVERY_GPU_REQUEST = """
    import sys
    {block}
    import numpy as np, numbax
    def add_one(x):
        return x + 1.0
    for request in (lambda: numbax.devices("gpu"), lambda: numbax.jit(add_one, backend="gpu")(np.ones(2))):
        try:
            request()
        except numbax.NumbaxDeviceError as e:
            print(type(e).__name__, "|", e.message)
        else:
            print("no error")
"""


def test_no_gpu_gives_one_clear_error(tmp_path):
    out = _run(tmp_path, _EVERY_GPU_REQUEST.format(block=""), {"NUMBA_ENABLE_CUDASIM": "0"}).splitlines()
    assert out == ["NumbaxDeviceError | no CUDA GPU is available: numba.cuda found no CUDA GPU"] * 2, out


def test_no_numba_cuda_gives_one_clear_error(tmp_path):
    block = "sys.modules['numba.cuda'] = None  # as if numba-cuda were not installed"
    out = _run(tmp_path, _EVERY_GPU_REQUEST.format(block=block), {}).splitlines()
    assert len(out) == 2 and all(line.startswith("NumbaxDeviceError | no CUDA GPU is available: numba.cuda cannot "
                                                 "be imported") for line in out), out
