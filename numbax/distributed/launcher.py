"""The process count and index that the launcher (``mpiexec``, ``mpirun``, ``srun``) gave this process.

A launcher and an MPI library that do not belong together (the ``mpiexec`` of another MPI, or ``srun``
without a PMI plugin the library speaks) start N processes that each initialize MPI alone, as process 0
of 1: every one would compute on its own data and call it the global result. The launcher says in the
environment how many processes it started; ``check`` compares that with what MPI sees. The innermost
launcher is asked first (MPI's own, then Slurm's), so ``mpiexec`` inside an ``srun`` step is judged by
``mpiexec``'s count.
"""
from __future__ import annotations

import os
from typing import Mapping, Optional, Tuple

from numbax.errors import NumbaxDistributedError

# (launcher, its variable for the process count, for this process's index): MPICH's Hydra and other PMI
# launchers, Open MPI's mpirun, Slurm's srun (a job step's variables; a batch script has none of them)
_LAUNCHERS = (
    ("mpiexec (PMI)", "PMI_SIZE", "PMI_RANK"),
    ("Open MPI's mpirun", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"),
    ("srun", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID"),
)


def launched(environ: Mapping[str, str]) -> Optional[Tuple[str, int, int]]:
    """``(launcher, process count, process index)`` from the innermost launcher's variables in ``environ``,
    or ``None`` where no launcher set them (a program started as one process)."""
    for name, count, index in _LAUNCHERS:
        if environ.get(count, "").isdigit() and environ.get(index, "").isdigit():
            return name, int(environ[count]), int(environ[index])
    return None


def check(index: int, count: int, environ: Mapping[str, str] = os.environ) -> None:
    """Raise ``NumbaxDistributedError`` unless MPI's ``index`` and ``count`` are the launcher's."""
    found = launched(environ)
    if found is not None and found[1:] != (count, index):
        name, launched_count, launched_index = found
        raise NumbaxDistributedError(
            f"{name} started this program as process {launched_index} of {launched_count}, but MPI sees process "
            f"{index} of {count}: each process would compute alone and report its own numbers as the global ones",
            hint="launch with the mpiexec of the MPI library that mpi4py loads (the one in the same environment's "
                 "bin/, from pip install 'numbax[mpi]'); under Slurm, srun --mpi=pmi2 (or pmix) if that library "
                 "speaks it, or mpiexec inside the allocation.")
