"""Where a call runs: computation follows data, as in JAX.

A call whose arguments hold device arrays (``numba.cuda`` arrays, or anything with
``__cuda_array_interface__``: CuPy, PyTorch CUDA tensors) runs on the GPU backend; so does every call of a
function jitted with ``backend="gpu"``, its host arrays copied to the GPU first. Host arrays and device arrays
in one call, or arrays of two GPUs, are refused with the arguments named: numbax never copies behind the
user's back. A host argument whose array the function writes, as the CPU backend writes it in place, gets its
device copy's values after a jitted call (``write_back``); under other transformations that is refused.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from numbax.backends.cuda.availability import cuda
from numbax.errors import NumbaxDeviceError, origin_at


# what most leaves of a call are, never on a GPU: answered without looking for an attribute (every call of a
# compiled function outside Numba's C dispatch asks about each leaf)
_HOST_TYPES = frozenset({np.ndarray, float, int, bool, complex, np.float64, np.float32, np.int64, np.int32,
                         np.bool_, np.complex128, type(None)})


def is_device_array(value: Any) -> bool:
    """Whether ``value`` lives on a GPU: it has ``__cuda_array_interface__`` or is the simulator's array."""
    kind = type(value)
    if kind in _HOST_TYPES:
        return False
    return hasattr(value, "__cuda_array_interface__") or kind.__name__ == "FakeCUDAArray"


def _device_id(value: Any) -> int:
    device = getattr(value, "device", None)  # CuPy's Device has .id, PyTorch's .index; numba's arrays: none
    found = getattr(device, "id", getattr(device, "index", None))
    return found if isinstance(found, int) else 0


def _is_host_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.ndim > 0


def target(backend: str, named_leaves: Sequence[Tuple[str, Any]]) -> str:
    """``"gpu"`` where the call runs on the GPU backend (a device array among the leaves, or ``backend``
    ``"gpu"``), else ``backend``.

    Raises:
        NumbaxDeviceError: host and device arrays, or arrays of two GPUs, in one call.
    """
    on_device = [(name, leaf) for name, leaf in named_leaves if is_device_array(leaf)]
    if not on_device:
        return "gpu" if backend in ("gpu", "cuda") else backend
    on_host = sorted({name for name, leaf in named_leaves if _is_host_array(leaf)})
    if on_host:
        device_names = ", ".join(sorted({f"`{name}`" for name, _ in on_device}))
        raise NumbaxDeviceError(
            f"argument(s) {device_names} are on the GPU and {', '.join(f'`{n}`' for n in on_host)} on the host "
            "(NumPy arrays): numbax does not copy between devices behind your back",
            hint="put them on one device first: numbax.device_put(x, numbax.devices('gpu')[0]) for all, or "
                 "numbax.device_get(...) for all.")
    ids = {}
    for name, leaf in on_device:
        ids.setdefault(_device_id(leaf), []).append(name)
    if len(ids) > 1:
        where = "; ".join(f"GPU {i}: {', '.join(names)}" for i, names in sorted(ids.items()))
        raise NumbaxDeviceError(f"the arguments are on different GPUs ({where})",
                                hint="put them on one GPU with numbax.device_put first.")
    return "gpu"


def to_gpu(leaves: List[Any]) -> List[Any]:
    """The leaves as the GPU backend's driver takes them: arrays as ``numba.cuda`` device arrays (host ones
    copied there), 0-d arrays and numbers as host numbers (the driver's scalar code runs on the host)."""
    module = cuda()
    return [_leaf_on_gpu(module, leaf) for leaf in leaves]


def _leaf_on_gpu(module, leaf: Any) -> Any:
    if is_device_array(leaf):
        array = leaf if hasattr(leaf, "copy_to_host") else module.as_cuda_array(leaf)  # CuPy, PyTorch: a view
        return array.copy_to_host()[()] if array.ndim == 0 else array
    if isinstance(leaf, np.ndarray):
        return leaf[()] if leaf.ndim == 0 else module.to_device(np.ascontiguousarray(leaf))
    return leaf


def stand_in(leaf: Any) -> Any:
    """A host value with ``leaf``'s dtype and ndim, for the compiler (which reads only those)."""
    if is_device_array(leaf):
        return np.empty((0,) * len(leaf.shape), np.dtype(leaf.dtype))
    return leaf


def on_host(value: Any) -> Optional[Any]:
    """A device array copied back to a NumPy array; anything else as it is."""
    return value.copy_to_host() if is_device_array(value) and hasattr(value, "copy_to_host") else value


def write_back(host: List[Any], device: List[Any], written: Dict[int, str]) -> None:
    """After a call of the GPU backend's driver that writes the arrays of the leaves at ``written`` (their
    positions, each with the user's line of its first write): each host array among them gets its device copy's
    values, as the CPU backend writes host arguments in place."""
    for k in written:
        if isinstance(host[k], np.ndarray) and device[k] is not host[k]:
            host[k][...] = device[k].copy_to_host()


def check_writes(host: List[Any], written: Dict[int, str], copied_back: bool = True) -> None:
    """Before such a call: refuse a host array written that shares memory with another leaf (the CPU backend
    writes the memory both read; their device copies are apart), or any host array written where the
    transformation does not copy it back (``copied_back`` False: ``grad``, ``jvp``)."""
    for k, where in written.items():
        if not isinstance(host[k], np.ndarray):
            continue
        if not copied_back:
            raise NumbaxDeviceError("writing into a host argument's array under a transformation other than jit "
                                    "is not supported by the GPU backend yet", origin_at(where),
                                    hint="write into a copy (y = x.copy()), or put the argument on the GPU first "
                                         "(numbax.device_put).")
        for j, other in enumerate(host):
            if j != k and isinstance(other, np.ndarray) and np.shares_memory(host[k], other):
                raise NumbaxDeviceError("writing into an argument that shares memory with another argument is not "
                                        "supported by the GPU backend yet", origin_at(where),
                                        hint="pass a copy of one of them (x.copy()), or run it on the CPU backend.")
