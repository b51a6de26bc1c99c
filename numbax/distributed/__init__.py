"""Multi-process programs on MPI, as ``jax.distributed``: ``initialize`` under ``mpiexec -n N`` (or ``srun``),
then ``numbax.devices()`` lists every process's devices.

Importing this package imports no MPI; ``numbax.distributed.collectives`` (the collectives compiled code
calls) imports mpi4py and numba-mpi, from ``pip install 'numbax[mpi]'``.
"""
from numbax.distributed.processes import initialize, is_initialized, process_count, process_index, shutdown

__all__ = ["initialize", "shutdown", "is_initialized", "process_index", "process_count"]
