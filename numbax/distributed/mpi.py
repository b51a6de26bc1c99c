"""mpi4py and numba-mpi, imported on first use only: a single-process program needs neither installed."""
from __future__ import annotations

import importlib
from types import ModuleType

from numbax.errors import NumbaxDistributedError

INSTALL_HINT = "install numbax's MPI extra: pip install 'numbax[mpi]' (mpi4py, numba-mpi and the MPICH library)."


def load(module: str) -> ModuleType:
    """The module ``module`` (``"mpi4py.MPI"``, ``"numba_mpi"``).

    Raises:
        NumbaxDistributedError: it cannot be imported (not installed, or no MPI library for it to load),
            naming the extra that installs it.
    """
    try:
        return importlib.import_module(module)
    except (ImportError, RuntimeError) as error:  # numba-mpi raises RuntimeError when it finds no libmpi
        raise NumbaxDistributedError(f"numbax.distributed needs {module}, which cannot be imported here: {error}",
                                     hint=INSTALL_HINT) from None
