"""``pmap`` across the processes of ``mpiexec -n N``: which shards this process runs, and where they sit.

After ``numbax.distributed.initialize()`` in more than one process, ``pmap`` maps over every process's
devices, as JAX's multi-process ``pmap`` does: each process passes its own shards (the mapped axis has
``local_device_count()`` entries), runs them, and gets their results back; its collectives reach the other
processes' shards through MPI, called from inside the compiled function (``primitives.transports.MPI``).
Each process runs one shard (one CPU device per process): a collective's operand is then one row, which MPI
combines with the other processes' rows, so the values are those of one process running every shard (the
same bits for 2 processes; a sum over more may round in another order). Where the code runs several shards
per process, their rows would have to be combined first: that is not built, and ``check`` refuses it.

In generated code the call checks the mapped axis, and names this process's first shard's index along the
whole axis, which ``axis_index`` and ``psum_scatter`` read::

    rt.check_devices(batch, 1, True, 'f.py:12:4')
    first_shard = mpi.rank() * 1
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator, Optional, Sequence, Tuple

import gast
import numpy as np

from numbax.ast_passes.specialize.materialize import name_node
from numbax.ast_passes.specialize.values import AVal, Dyn
from numbax.devices import Device, devices as all_devices, local_device_count
from numbax.distributed import processes
from numbax.errors import NumbaxDeviceError
from numbax.runtime.checks import check_devices

IMPORT = "from numbax.distributed import collectives as mpi"
_INDEX = AVal(np.dtype(np.int64), 0)


def transport() -> str:
    """``"mpi"`` in a program of several processes (``numbax.distributed.initialize``), else ``"batch"``."""
    return "mpi" if processes.process_count() > 1 else "batch"


def check(devices: Optional[Sequence[Device]]) -> None:
    """Refuse what ``pmap`` across processes does not run: several shards in a process, or ``devices`` other
    than every process's (JAX's default).

    Raises:
        NumbaxDeviceError: either of these.
    """
    local = local_device_count()
    if local != 1:
        raise NumbaxDeviceError(f"pmap across {processes.process_count()} processes runs one shard per process, "
                                f"but this process has {local} CPU devices",
                                hint="leave cpu_device_count at 1 (NUMBAX_CPU_DEVICE_COUNT) under mpiexec, and start "
                                     "one process per shard.")
    if devices is not None and list(devices) != all_devices():
        raise NumbaxDeviceError(f"pmap across processes maps over every process's devices, not {list(devices)!r}",
                                hint="leave devices out (or pass numbax.devices()).")


_SPECIALIZING = threading.local()  # whether a pmap across processes is being specialized, in this thread


@contextlib.contextmanager
def specializing(spec=None, node=None) -> Iterator[None]:
    """While a ``pmap`` across processes is specialized: refuse a ``pmap`` inside it (at ``node``), whose
    axis would span the processes a second time (JAX's nested ``pmap`` needs devices the processes lack).

    Raises:
        NumbaxSpecializationError: a ``pmap`` across processes is being specialized already.
    """
    if getattr(_SPECIALIZING, "active", False):
        spec.fail(node, "pmap inside a function pmapped across processes is not supported",
                  hint="map the inner axis with numbax.vmap(..., axis_name=...) instead.")
    _SPECIALIZING.active = True
    try:
        yield
    finally:
        _SPECIALIZING.active = False


def emit(spec, node, batch: Dyn, where: str) -> Tuple[int, Dyn]:
    """At a ``pmap`` call: the check that the mapped axis holds this process's shards, and the name of this
    process's first shard's index; returns the whole axis's size and that name."""
    local = local_device_count()
    check_call = spec.call_value(node, check_devices, [batch, local, True, where], {})
    spec.emit(gast.Expr(value=check_call.node))
    spec.materializer.imports.add(IMPORT)
    spec.namer.reserve(["mpi"])
    rank = gast.Call(func=gast.Attribute(value=name_node("mpi"), attr="rank", ctx=gast.Load()), args=[], keywords=[])
    first = spec.namer.new("first_shard")
    spec.emit_assign(first, Dyn(gast.BinOp(left=rank, op=gast.Mult(), right=gast.Constant(value=local, kind=None)),
                                _INDEX))
    return processes.process_count() * local, Dyn(name_node(first), _INDEX)
