"""``pmap`` over GPUs: one shard per GPU, each shard's program compiled by the GPU backend and run on its GPU.

The host splits each mapped argument into its shards (``shards``: the entry of the mapped axis, the axis
dropped), runs ``jit(fun, backend="gpu")`` on each shard with that shard's GPU current (``numba.cuda.gpus[i]``:
the GPU backend's driver allocates and launches there, and copies the shard's host arrays there), and stacks
the shards' outputs along ``out_axes`` (``stacked``), on the first device, as device arrays: what the GPU
backend's ``jit`` gives. Device arrays among the arguments are split on the host too (JAX's ``pmap`` copies
its arguments to their devices likewise). Each shard's program is the same compiled code: the GPU backend
compiles it once, for the first shard's argument types. One host thread drives the GPUs in turn: a shard's
launches are asynchronous, but its driver waits for every number it reads back (a reduction to a number, a
branch on one), so GPUs overlap only between such reads.

Collectives are not built on GPUs: the GPU backend lowers a function to kernels and a host driver with no
exchange between the drivers of two GPUs. A collective (or ``axis_index``) over the axis of a ``pmap`` over
GPUs is refused at its line with ``NumbaxDeviceError`` (``lax.collective_lowering`` reads the axis's
transport, ``named_axes.ON_GPUS``), before anything runs.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from numbax import tree_util
from numbax.backends.cuda import placement
from numbax.backends.cuda.availability import cuda
from numbax.devices import Device, devices as all_devices
from numbax.errors import NumbaxDeviceError
from numbax.lax import named_axes
from numbax.runtime.checks import check_devices
from numbax.transforms.pmap import thread_shards
from numbax.transforms.vmap import axes


def gpus(devices: Optional[Tuple[Device, ...]]) -> Tuple[Tuple[Device, ...], bool]:
    """The GPUs a call may use and whether they were passed (then exactly that many): every GPU by default.

    Raises:
        NumbaxDeviceError: no GPU (nor its simulator) is available.
    """
    if devices is not None:
        cuda()
        return devices, True
    return tuple(all_devices("gpu")), False


def check_platform(devices: Tuple[Device, ...]) -> bool:
    """Whether ``devices`` are GPUs (all of them), refusing a mix of GPUs and CPU devices."""
    platforms = {device.platform for device in devices}
    if len(platforms) > 1:
        raise NumbaxDeviceError(f"pmap's devices mix GPUs and CPU devices: {list(devices)!r}",
                                hint="pass numbax.devices('gpu') or numbax.devices('cpu'), not both.")
    return platforms == {"gpu"}


def shards(leaves: Sequence[Any], in_axes: Sequence[Optional[int]], count: int) -> List[List[Any]]:
    """Each shard's leaves on the host: entry ``k`` of each mapped leaf's axis (the axis dropped), the unmapped
    leaves whole (device arrays copied to the host once)."""
    host = [placement.on_host(leaf) for leaf in leaves]
    return [[leaf if axis is None else np.take(leaf, k, axis=axis) for leaf, axis in zip(host, in_axes)]
            for k in range(count)]


def stacked(outputs: List[Any], out_axes: Any, device: Device, where: str) -> Any:
    """The shards' outputs (device arrays and numbers) on the host, each mapped leaf stacked along its axis of
    ``out_axes`` (the first shard's leaf where it is not mapped), as device arrays on ``device``;
    ``NumbaxShapeError`` at ``where`` where their shapes differ."""
    first = outputs[0]
    pairs = axes.broadcast_prefix("pmap out_axes", out_axes, first)
    leaves, treedef = tree_util.tree_flatten(first)
    per_shard = [[np.asarray(placement.on_host(leaf)) for leaf in tree_util.tree_leaves(out)] for out in outputs]
    thread_shards.check_shapes(per_shard, where)
    module = cuda()
    with module.gpus[device.id]:
        joined = [module.to_device(per_shard[0][k] if axis is None else
                                   np.stack([shard[k] for shard in per_shard], axis=axis))
                  for k, (_, axis) in enumerate(pairs)]
    return tree_util.tree_unflatten(treedef, joined)


def _bound(axis_name: Any, count: int):
    """The pmap's axis bound while a shard's program is specialized, so that its collectives are refused."""
    return contextlib.nullcontext() if axis_name is None else named_axes.bound(axis_name, count, named_axes.ON_GPUS)


def run(program: Callable, axis_name: Any, devices: Tuple[Device, ...], exact: bool,
        values_of: Callable[[List[Any]], Tuple[tuple, Dict[str, Any]]], leaves: List[Any],
        in_axes: Sequence[Optional[int]], out_axes: Any, where: str) -> Any:
    """``program`` (the shard's function, on the GPU backend) on each shard, shard ``k`` on ``devices[k]``;
    ``values_of`` turns a shard's leaves into the program's arguments. The outputs, stacked on the first GPU
    (``where``: the mapped function's line, for an error of their shapes).

    Raises:
        ValueError: JAX's, where the mapped axis does not fit the devices.
        NumbaxDeviceError: a collective over ``axis_name`` in the program (before any shard runs).
    """
    count = thread_shards.shard_count(leaves, in_axes)
    check_devices(count, len(devices), exact, "")
    module = cuda()
    outputs = []
    for device, shard in zip(devices, shards(leaves, in_axes, count)):
        args, kwargs = values_of(shard)
        with module.gpus[device.id], _bound(axis_name, count):
            outputs.append(program(*args, **kwargs))
    return stacked(outputs, out_axes, devices[0], where)
