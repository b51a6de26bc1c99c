"""Devices as JAX lists them: the CPU always, CUDA GPUs through ``numba.cuda`` when one is present.

Values stay NumPy arrays on the CPU; ``device_put`` to a GPU gives ``numba.cuda``
device arrays (from NumPy arrays, or from anything with ``__cuda_array_interface__``)
and ``device_get`` brings any pytree back. A ``jit`` function called with device
arrays runs on the GPU backend (``numbax.backends.cuda``). Where no GPU (or simulator)
is usable, every GPU request raises the same ``NumbaxDeviceError``
(``backends.cuda.availability``).

After ``numbax.distributed.initialize`` under ``mpiexec -n N``, ``devices()`` lists the CPU devices of every
process (each with its ``process_index``, ids numbered across processes) and ``local_devices()`` this
process's, as in JAX.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, List, Optional

import numpy as np

from numbax import tree_util
from numbax.backends.cuda import availability, placement
from numbax.backends.cuda.placement import is_device_array
from numbax.distributed import processes
from numbax.errors import NumbaxDeviceError

_GPU_NAMES = ("gpu", "cuda")


@dataclasses.dataclass(frozen=True)
class Device:
    """One device: its platform (``"cpu"`` or ``"gpu"``), index, kind and the process it belongs to."""

    platform: str
    id: int = 0
    device_kind: str = "cpu"
    process_index: int = 0

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})" if self.platform == "cpu" else f"CudaDevice(id={self.id})"


def _cpus(process: int) -> List[Device]:
    """The CPU devices of process ``process``: ``cpu_device_count()`` of them, numbered across the processes."""
    count = cpu_device_count()
    return [Device("cpu", process * count + k, "cpu", process) for k in range(count)]


def _kind(gpu: Any) -> str:
    name = getattr(gpu, "name", "GPU")
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)


@functools.lru_cache(maxsize=None)
def _gpus(process: int) -> tuple:
    """The GPUs of this process, which is process ``process``."""
    cuda = availability.cuda()
    return tuple(Device("gpu", i, _kind(gpu), process) for i, gpu in enumerate(cuda.gpus))


def cpu_device_count() -> int:
    """How many CPU devices there are: ``config.update("cpu_device_count", n)`` or the environment variable
    ``NUMBAX_CPU_DEVICE_COUNT`` (default 1, as in JAX).

    Raises:
        ValueError: the setting is not a positive integer.
    """
    from numbax import config

    value = config.read("cpu_device_count")
    try:
        count = int(value)
    except (TypeError, ValueError):
        count = 0
    if count < 1 or (not isinstance(value, str) and count != value):
        raise ValueError(f"cpu_device_count (NUMBAX_CPU_DEVICE_COUNT) must be a positive integer, got {value!r}")
    return count


def devices(backend: Optional[str] = None) -> List[Device]:
    """The devices of ``backend`` (``"cpu"``, ``"gpu"``/``"cuda"``) in every process; by default the CPU, where
    compiled code runs: ``cpu_device_count()`` of them per process (``pmap`` runs one shard on each).

    Raises:
        RuntimeError: ``backend`` is unknown; ``NumbaxDeviceError`` (a ``RuntimeError``) where ``"gpu"`` is
            asked for and numba.cuda finds no GPU (nor its simulator), or of several processes (numbax does
            not know other processes' GPUs: ``local_devices("gpu")`` lists this process's).
    """
    if backend is None or backend == "cpu":
        return [device for process in range(processes.process_count()) for device in _cpus(process)]
    if backend in _GPU_NAMES:
        if processes.process_count() > 1:
            raise NumbaxDeviceError(f"devices({backend!r}) of {processes.process_count()} processes: numbax "
                                    "lists only this process's GPUs",
                                    hint=f"use numbax.local_devices(backend={backend!r}).")
        return list(_gpus(processes.process_index()))
    raise RuntimeError(f"Unknown backend {backend!r}; numbax knows 'cpu' and 'gpu' (alias 'cuda')")


def local_devices(process_index: Optional[int] = None, backend: Optional[str] = None,
                  host_id: Optional[int] = None) -> List[Device]:
    """The devices of ``backend`` in process ``process_index`` (``host_id``, its old name; by default this
    process), as ``jax.local_devices``.

    Raises:
        RuntimeError: as ``devices``; ``ValueError`` where ``process_index`` is no process's.
    """
    index = _process(process_index if host_id is None else host_id)
    if backend in _GPU_NAMES:
        if index != processes.process_index():
            raise NumbaxDeviceError(f"local_devices({index}, {backend!r}): numbax knows only this process's GPUs",
                                    hint=f"ask for local_devices(backend={backend!r}) in process {index}.")
        return list(_gpus(processes.process_index()))
    return [device for device in devices(backend) if device.process_index == index]


def _process(index: Optional[int]) -> int:
    if index is None:
        return processes.process_index()
    if not 0 <= index < processes.process_count():
        raise ValueError(f"Process index {index} is not in range(process_count()) = range({processes.process_count()})")
    return index


def local_device_count(backend: Optional[str] = None) -> int:
    """How many devices ``backend`` has in this process (see ``local_devices``)."""
    return len(local_devices(backend=backend))


def _to_host(leaf: Any) -> Any:
    return placement.on_host(leaf)


def device_put(x: Any, device: Optional[Device] = None) -> Any:
    """``x`` (a pytree) on ``device``: NumPy arrays on the CPU (the default), ``numba.cuda`` arrays on a GPU.

    Raises:
        NumbaxDeviceError: ``device`` belongs to another process.
    """
    device = device or local_devices()[0]
    if device.process_index != processes.process_index():
        raise NumbaxDeviceError(f"device_put to {device!r} of process {device.process_index}, from process "
                                f"{processes.process_index()}: a process holds only its own arrays",
                                hint="put arrays on numbax.local_devices(); exchange values with collectives.")
    if device.platform == "cpu":
        return tree_util.tree_map(lambda leaf: np.asarray(_to_host(leaf)), x)
    cuda = availability.cuda()
    from numbax import api  # above this module: jit's C dispatch must stop serving host-array signatures

    api.note_arrays_on_gpu()

    def put(leaf: Any) -> Any:
        if is_device_array(leaf):  # numba.cuda arrays stay; CuPy, PyTorch: numba.cuda views of their memory
            return leaf if hasattr(leaf, "copy_to_host") else cuda.as_cuda_array(leaf)
        return cuda.to_device(np.asarray(leaf))

    with cuda.gpus[device.id]:
        return tree_util.tree_map(put, x)


def device_get(x: Any) -> Any:
    """``x`` (a pytree) with every device array copied back to a NumPy array; other leaves unchanged."""
    return tree_util.tree_map(_to_host, x)


def block_until_ready(x: Any) -> Any:
    """``x`` (a pytree), once the work computing it is done, as ``jax.block_until_ready``: compiled CPU code
    returns finished arrays; for ``numba.cuda`` device arrays the device is synchronized first. Inside
    compiled code it is ``x``."""
    if any(is_device_array(leaf) for leaf in tree_util.tree_leaves(x)):
        availability.cuda().synchronize()
    return x


# inside compiled code (where values are finished when computed) a call of it is its argument
block_until_ready._numbax_specialize = lambda spec, node, args, kwargs: args[0] if len(args) == 1 and not kwargs \
    else spec.fail(node, "block_until_ready takes one argument")

Array = np.ndarray  # the type of numbax's arrays, as ``jax.Array`` is JAX's: for ``isinstance``
