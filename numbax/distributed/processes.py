"""The processes of a multi-process program: ``initialize`` and ``shutdown`` on MPI, and this process's place.

Without ``initialize`` a program is one process (index 0 of 1) and MPI is never imported.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional, Sequence, Union

from numbax.distributed import launcher, memory, mpi
from numbax.errors import NumbaxDistributedError

# the cluster detection methods of JAX that mean "the processes were started by an MPI launcher or srun"
_MPI_METHODS = (None, "mpi4py", "ompi", "slurm")


@dataclasses.dataclass
class _Processes:
    index: int = 0
    count: int = 1
    running: bool = False
    finished: bool = False


_processes = _Processes()


def initialize(coordinator_address: Optional[str] = None, num_processes: Optional[int] = None,
               process_id: Optional[int] = None, local_device_ids: Optional[Union[int, Sequence[int]]] = None,
               cluster_detection_method: Optional[str] = None, initialization_timeout: int = 300,
               heartbeat_timeout_seconds: int = 100, shutdown_timeout_seconds: int = 300,
               coordinator_bind_address: Optional[str] = None, slice_index: Optional[int] = None,
               partition_index: Optional[int] = None) -> None:
    """Join the processes that ``mpiexec -n N`` (or Slurm's ``srun``) started, through MPI (mpi4py).

    JAX's signature is accepted. ``coordinator_address``, ``coordinator_bind_address``,
    ``initialization_timeout``, ``heartbeat_timeout_seconds`` and ``shutdown_timeout_seconds`` configure JAX's
    coordinator service; numbax has none (the launcher connects the processes and ``MPI_Init`` waits for
    them), so they are ignored. ``num_processes`` and ``process_id``, where given, must be MPI's.

    It also tells glibc's allocator to keep freed blocks of up to 32 MiB in the process (``mallopt``; a
    process may hold up to 64 MiB more than it uses), so that each collective's new result is not faulted in
    again from the system (``distributed.memory``); an environment that tunes glibc's allocator itself (a
    ``MALLOC_...`` variable, or ``GLIBC_TUNABLES`` naming ``glibc.malloc``) keeps its settings instead.

    Args:
        num_processes: the number of processes, checked against MPI's.
        process_id: this process's index, checked against MPI's rank.
        local_device_ids: not supported (each process has its CPU devices); must be ``None``.
        cluster_detection_method: ``None``, ``"mpi4py"``, ``"ompi"`` or ``"slurm"``: all mean MPI here.
        slice_index, partition_index: TPU slices; must be ``None``.

    Raises:
        NumbaxDistributedError: called a second time (MPI starts once per process); MPI is not installed
            (``pip install 'numbax[mpi]'``); an argument numbax cannot honour; the launcher started a different
            number of processes than MPI sees (mismatched ``mpiexec``), or the counts disagree with
            ``num_processes`` or ``process_id``.
    """
    if _processes.running or _processes.finished:
        when = "twice" if _processes.running else "after shutdown()"
        raise NumbaxDistributedError(f"numbax.distributed.initialize() was called {when}: MPI starts once in a "
                                     "process", hint="call it once, at the start of the program.")
    _refuse_unsupported(local_device_ids, cluster_detection_method, slice_index, partition_index)
    world = mpi.load("mpi4py.MPI").COMM_WORLD
    index, count = world.Get_rank(), world.Get_size()
    launcher.check(index, count)
    for name, given, actual in (("num_processes", num_processes, count), ("process_id", process_id, index)):
        if given is not None and given != actual:
            raise NumbaxDistributedError(f"initialize({name}={given}) but MPI has {name} {actual}",
                                         hint="leave it out: numbax takes both from MPI.")
    _processes.index, _processes.count, _processes.running = index, count, True
    memory.keep_freed_memory()


def _refuse_unsupported(local_device_ids: Any, method: Optional[str], slice_index: Any, partition_index: Any) -> None:
    for name, value in (("local_device_ids", local_device_ids), ("slice_index", slice_index),
                        ("partition_index", partition_index)):
        if value is not None:
            raise NumbaxDistributedError(f"initialize({name}=...) is not supported: each numbax process uses all "
                                         "its CPU devices, and there are no TPU slices",
                                         hint=f"leave {name} out.")
    if method not in _MPI_METHODS:
        raise NumbaxDistributedError(f"initialize(cluster_detection_method={method!r}) is not supported: numbax's "
                                     "processes find each other through MPI only",
                                     hint="launch with mpiexec (or srun) and leave cluster_detection_method out.")


def shutdown() -> None:
    """Leave the multi-process program (every process must call it): MPI is finalized, and this process is
    again process 0 of 1. Does nothing where ``initialize`` was not called, as in JAX."""
    if not _processes.running:
        return
    MPI = mpi.load("mpi4py.MPI")
    MPI.COMM_WORLD.Barrier()
    MPI.Finalize()
    _processes.index, _processes.count, _processes.running, _processes.finished = 0, 1, False, True


def is_initialized() -> bool:
    """Whether ``initialize`` was called (and ``shutdown`` not since)."""
    return _processes.running


def process_index(backend: Optional[str] = None) -> int:
    """This process's index among the processes (0 where ``initialize`` was not called); the same for every
    ``backend``."""
    return _processes.index


def process_count(backend: Optional[str] = None) -> int:
    """The number of processes (1 where ``initialize`` was not called); the same for every ``backend``."""
    return _processes.count
