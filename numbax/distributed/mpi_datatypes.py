"""numba-mpi's table of MPI datatypes, checked against mpi4py's and completed with float32.

numba-mpi 1.3 keys its table by ``np.dtype("float")`` for ``MPI.FLOAT``, which is float64 (and overwritten
by ``np.dtype("double")``), so a float32 array fails to compile there. numbax adds the entry, and refuses
a table that maps a dtype it uses to another MPI datatype (a numba-mpi it was not built for).
"""
from __future__ import annotations

from types import ModuleType
from typing import Dict

import numpy as np

from numbax.errors import NumbaxDistributedError

# the dtypes the collectives take, and the MPI datatypes (mpi4py's names) they are sent as
DATATYPES = {np.dtype(np.float32): "FLOAT", np.dtype(np.float64): "DOUBLE", np.dtype(np.int32): "INT32_T",
             np.dtype(np.int64): "INT64_T"}


def complete(table: Dict[np.dtype, int], MPI: ModuleType) -> None:
    """Add the datatypes of ``DATATYPES`` missing from numba-mpi's ``table`` (dtype -> address of the MPI handle).

    Raises:
        NumbaxDistributedError: ``table`` maps one of them to another MPI datatype.
    """
    for dtype, name in DATATYPES.items():
        address = MPI._addressof(getattr(MPI, name))
        if table.setdefault(dtype, address) != address:
            raise NumbaxDistributedError(f"numba-mpi sends {dtype} arrays as another MPI datatype than MPI.{name}",
                                         hint="install the numba-mpi that numbax's MPI extra names: "
                                              "pip install 'numbax[mpi]'.")
