"""``pmap`` over GPUs: one shard per GPU, each shard's program compiled by the GPU backend and run on its GPU,
collectives between the shards' host drivers.

The host splits each mapped argument into its shards (``shards``: the entry of the mapped axis, the axis
dropped), compiles the shards' program once (``ShardProgram``: ``jit(fun, backend="gpu")`` with the pmap's axis
bound, its size in the cache key), runs shard ``k`` on a thread of its own with ``devices[k]`` current
(``numba.cuda.gpus[i]``: the GPU backend's driver allocates and launches there, and copies the shard's host
arrays there), and stacks the shards' outputs along ``out_axes`` (``stacked``), on the first device, as device
arrays: what the GPU backend's ``jit`` gives. Device arrays among the arguments are split on the host too
(JAX's ``pmap`` copies its arguments to their devices likewise).

A collective over the axis (and ``axis_index``) is a call in each shard's host driver of the exchange between
the threads (``runtime.gpu_shards``): a barrier, each shard's operand staged through the host, the collective
computed there from every shard's row in shard order, as the CPU's ``pmap`` computes it from the same rows,
and copied to each shard's GPU. So the shards' drivers run at once, each waiting for the others at a
collective only. Numba's CUDA simulator runs one kernel at a time: there the shards take turns, each running
until its next collective.

Not built: a collective over this axis and another one at once, or inside a ``vmap`` inside the ``pmap``
(``lax.collective_lowering`` refuses them at their line); device-to-device copies between GPUs (the exchange
goes through the host).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import gast
import numpy as np

from numbax import tree_util
from numbax.api import Jitted, note_arrays_on_gpu
from numbax.ast_passes import pipeline, wrapper
from numbax.ast_passes.specialize.materialize import name_node
from numbax.ast_passes.specialize.values import AVal, Dyn
from numbax.backends.cuda import lower_on_use as cuda_lower, placement
from numbax.backends.cuda.availability import cuda, simulated
from numbax.compiled import Compiled
from numbax.devices import Device, devices as all_devices
from numbax.errors import NumbaxDeviceError
from numbax.lax import named_axes
from numbax.runtime import gpu_shards as gpu_exchange
from numbax.runtime.checks import check_devices
from numbax.transforms.pmap import thread_shards
from numbax.transforms.vmap import axes
from numbax.transforms.vmap.api import unwrap, user_function

_INDEX = AVal(np.dtype(np.int64), 0)


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


class ShardProgram(Jitted):
    """The program of each shard of a ``pmap`` over GPUs: the GPU backend's ``jit`` of a function that calls the
    pmapped one (a transformation of it, ``grad(f)``, specializes itself there), specialized with the pmap's
    axis bound (``named_axes.ON_GPUS``), for a number of shards that is part of its key (``psum(1, axis)``
    depends on it)."""

    label = "pmap"

    def __init__(self, fun: Callable, static_argnums: Tuple[int, ...], axis_name: Any):
        inner, static_argnums, _ = unwrap(fun, static_argnums, ())
        super().__init__(user_function(inner), static_argnums, (), "gpu")
        self.target = inner
        self.axis_name = axis_name

    def compiled(self, args: tuple, kwargs: Dict[str, Any], count: int) -> Compiled:
        """The compiled program for a shard's arguments, of ``count`` shards (compiled now if new)."""
        note_arrays_on_gpu()
        values = self._signature.bind(args, kwargs)
        statics, dynamic = self._signature.split(values)
        leaves, treedef = tree_util.tree_flatten(dynamic)
        values = [v if i in self._signature.static else tree_util.tree_map(placement.stand_in, v)
                  for i, v in enumerate(values)]
        stand_ins = [placement.stand_in(leaf) for leaf in leaves]
        return self._specialization(values, stand_ins, treedef, statics, (("shards", count), ("backend", "gpu")))

    def leaves(self, args: tuple, kwargs: Dict[str, Any]) -> List[Any]:
        """The dynamic leaves of a shard's arguments, as the compiled program takes them."""
        return tree_util.tree_leaves(self._signature.split(self._signature.bind(args, kwargs))[1])

    def _run_pipeline(self, bound: Dict[str, Any], after_pass: Optional[str] = None, backend: str = "gpu",
                      shards: int = 1):
        kinds = [p.kind for p in self._signature.signature.parameters.values()]
        shard = wrapper.calling(self.fun, self.label, self._signature.params, kinds, "shard", self.target)
        index = Dyn(gast.Call(func=gast.Attribute(value=name_node("rt"), attr="gpu_axis_index", ctx=gast.Load()),
                              args=[], keywords=[]), _INDEX)
        with contextlib.nullcontext() if self.axis_name is None else \
                named_axes.bound(self.axis_name, shards, named_axes.ON_GPUS, first_shard=index):
            return pipeline.run(shard, bound, label=self.label, after_pass=after_pass, lower=cuda_lower.legalize)

    def _compiles_for_gpu(self) -> bool:
        return True

    def _generated_cache_tag(self) -> Optional[str]:
        """No disk cache: the code depends on the pmap's axis, which no fingerprint holds."""
        return None


def _outputs(compiled: Compiled, devices: Tuple[Device, ...], per_shard: List[List[Any]]) -> List[Any]:
    """Each shard's outputs: shard ``k`` on a thread of its own (the first on the caller's) with ``devices[k]``
    current; the first failing shard's error (not ``ShardsAborted`` of the shards that waited for it)."""
    module = cuda()
    count = len(per_shard)
    exchange = gpu_exchange.Exchange(count, threading.Lock() if simulated() else None)

    def one(k: int) -> Any:
        with module.gpus[devices[k].id], gpu_exchange.joined(exchange, k):
            return compiled(per_shard[k])

    if count == 1:
        return [one(0)]
    with concurrent.futures.ThreadPoolExecutor(count - 1, thread_name_prefix="numbax-gpu-shard") as pool:
        return thread_shards.gathered(one, [pool.submit(one, k) for k in range(1, count)])


def run(program: ShardProgram, devices: Tuple[Device, ...], exact: bool,
        values_of: Callable[[List[Any]], Tuple[tuple, Dict[str, Any]]], leaves: List[Any],
        in_axes: Sequence[Optional[int]], out_axes: Any, where: str) -> Any:
    """``program`` (the shards' program) on each shard, shard ``k`` on ``devices[k]``; ``values_of`` turns a
    shard's leaves into the program's arguments. The outputs, stacked on the first GPU (``where``: the mapped
    function's line, for an error of their shapes).

    Raises:
        ValueError: JAX's, where the mapped axis does not fit the devices.
        NumbaxDeviceError: a collective over the axis that is not built on GPUs (before any shard runs).
    """
    count = thread_shards.shard_count(leaves, in_axes)
    check_devices(count, len(devices), exact, "")
    calls = [values_of(shard) for shard in shards(leaves, in_axes, count)]
    compiled = program.compiled(*calls[0], count)
    outputs = _outputs(compiled, devices, [program.leaves(*call) for call in calls])
    return stacked(outputs, out_axes, devices[0], where)
