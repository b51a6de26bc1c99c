"""Collectives across the processes of ``mpiexec -n N``, callable from compiled code (Numba's nopython mode).

They are built on numba-mpi, whose MPI calls Numba compiles into the caller, so a collective costs what
MPI's does (and holds no GIL). Each takes an array of any shape and layout, or a number, of float32,
float64, int32 or int64 (any other dtype fails to compile, with ``check_dtype``'s message), and returns a
new array (or number); every process must call the same collectives in the same order with arrays of one
shape and dtype, as in MPI.

- ``allreduce_sum(x)``: the elementwise sum over processes (``MPI_Allreduce``, ``MPI_SUM``). MPICH computes
  each element's sum in one place, or symmetrically in pairs (IEEE addition commutes), so every process
  gets the same bits.
- ``allreduce_max(x)``, ``allreduce_min(x)``: the elementwise maximum, minimum. Integers go to MPI as they
  are; floats as integers ordered as the floats are, with every NaN as the greatest (for max) or least (for
  min), so a NaN on any process gives NaN, as ``np.max`` does (``MPI_MAX`` of floats leaves NaN undefined).
- ``allgather(x)``: the processes' ``x`` stacked along a new leading axis of size ``size()``.
- ``permute(x, perm)``: ``perm`` is a tuple of ``(source, destination)`` process pairs (``lax.ppermute``'s);
  each process gets the ``x`` of the process whose pair names it as destination, and zeros where none does.
- ``rank()``, ``size()``: this process's index and the number of processes.

A failed MPI call, a call after ``numbax.distributed.shutdown()`` and a ``perm`` that is no permutation of
processes raise ``NumbaxCollectiveError``.

Importing this module imports mpi4py and numba-mpi, or raises ``NumbaxDistributedError`` naming
``pip install 'numbax[mpi]'``; it must follow ``numbax.distributed.initialize()``.
"""
from __future__ import annotations

import ctypes

import numba
import numpy as np
from numba import types
from numba.extending import overload

from numbax.distributed import mpi, mpi_datatypes, processes
from numbax.errors import NumbaxCollectiveError, NumbaxDistributedError, NumbaxDtypeError

MPI = mpi.load("mpi4py.MPI")
numba_mpi = mpi.load("numba_mpi")
if not processes.is_initialized():  # else process_count() and devices() would not count the processes these span
    raise NumbaxDistributedError("numbax.distributed.collectives was imported before "
                                 "numbax.distributed.initialize()", hint="call initialize() first, in every process.")
mpi_datatypes.complete(numba_mpi.common._MPI_DTYPES, MPI)

if MPI._sizeof(MPI.Status) > 5 * ctypes.sizeof(ctypes.c_int):  # numba-mpi's status buffer: 5 C ints
    raise NumbaxDistributedError(f"numba-mpi's receives overflow their status buffer with this MPI library "
                                 f"({MPI.Get_library_version().splitlines()[0]})", hint=mpi.INSTALL_HINT)

__all__ = ["allreduce_sum", "allreduce_max", "allreduce_min", "allgather", "permute", "rank", "size", "check_dtype"]

_SUM, _MAX, _MIN = numba_mpi.Operator.SUM, numba_mpi.Operator.MAX, numba_mpi.Operator.MIN
_PROC_NULL = MPI.PROC_NULL
_TAG = 0x6E62  # permute's messages ("nb"), received from a named source only
_NUMBA_DTYPES = tuple(numba.from_dtype(dtype) for dtype in mpi_datatypes.DATATYPES)
# a float's bits as a signed integer, and the mask that orders the negative ones as the floats
_ORDER = {types.float64: (np.int64, np.int64(0x7FFF_FFFF_FFFF_FFFF)), types.float32: (np.int32, np.int32(0x7FFF_FFFF))}

_finalized = numba_mpi.common.libmpi.MPI_Finalized
_finalized.restype = ctypes.c_int
_finalized.argtypes = [ctypes.c_void_p]


def check_dtype(dtype: np.dtype) -> None:
    """Raise ``NumbaxDtypeError`` unless the collectives take arrays of ``dtype`` (the front end's check, made
    before compiling; a call that slips past it fails to compile with the same message)."""
    if np.dtype(dtype) not in mpi_datatypes.DATATYPES:
        raise NumbaxDtypeError(_dtype_message(np.dtype(dtype)))


def _dtype_message(dtype: object) -> str:
    return (f"collectives across processes take float32, float64, int32 or int64 arrays and numbers, not {dtype}; "
            "cast with .astype(np.float64) (or np.int64) first")


def _elements(x):
    """The elements of ``x`` as a C-contiguous 1-d array (a view where ``x`` is one)."""


@overload(_elements)
def _elements_nopython(x):
    if isinstance(x, types.Array) and x.dtype in _NUMBA_DTYPES:
        return lambda x: np.ascontiguousarray(x).reshape(x.size)
    if isinstance(x, (types.Integer, types.Float)) and x in _NUMBA_DTYPES:
        return lambda x: np.array([x])
    if isinstance(x, types.IntegerLiteral) and x.literal_type in _NUMBA_DTYPES:
        return lambda x: np.array([x])
    raise NumbaxDtypeError(_dtype_message(getattr(x, "dtype", x)))


def _shaped(x, elements):
    """``elements`` in ``x``'s shape (``x`` a number: the number)."""


@overload(_shaped)
def _shaped_nopython(x, elements):
    if isinstance(x, types.Array):
        return lambda x, elements: elements.reshape(x.shape)
    return lambda x, elements: elements[0]


def _stacked(x, elements, count):
    """``elements`` in the shape ``(count,) + x.shape``."""


@overload(_stacked)
def _stacked_nopython(x, elements, count):
    if isinstance(x, types.Array):
        return lambda x, elements, count: elements.reshape((count,) + x.shape)
    return lambda x, elements, count: elements


@numba.njit
def _check(status, call):
    if status != 0:
        raise NumbaxCollectiveError("{} failed with MPI error code {}", "", call, status)


@numba.njit
def _check_running():
    flag = np.zeros(1, np.intc)
    _finalized(flag.ctypes.data)
    if flag[0]:
        raise NumbaxCollectiveError("a collective was called after numbax.distributed.shutdown() finalized MPI", "")


@numba.njit
def rank():
    """This process's index among the processes (MPI's rank in ``MPI_COMM_WORLD``)."""
    _check_running()
    return np.int64(numba_mpi.rank())


@numba.njit
def size():
    """The number of processes (the size of ``MPI_COMM_WORLD``)."""
    _check_running()
    return np.int64(numba_mpi.size())


@numba.njit
def _allreduce(elements, op):
    out = np.empty_like(elements)
    _check(numba_mpi.allreduce(elements, out, op), "MPI_Allreduce")
    return out


@numba.njit
def allreduce_sum(x):
    """The elementwise sum of ``x`` over the processes."""
    _check_running()
    return _shaped(x, _allreduce(_elements(x), _SUM))


def _extremum(elements, op, greatest):
    """The elementwise ``op`` (MPI's MAX, ``greatest``, or MIN) of ``elements`` over the processes, NaN where
    any process has NaN."""


@overload(_extremum)
def _extremum_nopython(elements, op, greatest):
    if isinstance(elements.dtype, types.Integer):
        return lambda elements, op, greatest: _allreduce(elements, op)
    bits, mask = _ORDER[elements.dtype]
    # the keys of NaN: beyond every float's (those of +inf and -inf are mask ^ the exponent's bits)
    greatest_key, least_key = bits(np.iinfo(bits).max), bits(np.iinfo(bits).min)

    def ordered(elements, op, greatest):
        nan_key = greatest_key if greatest else least_key
        keys = elements.view(bits).copy()
        for i in range(keys.size):
            if np.isnan(elements[i]):
                keys[i] = nan_key
            elif keys[i] < 0:
                keys[i] ^= mask
        keys = _allreduce(keys, op)
        out = np.empty_like(elements)
        out_bits = out.view(bits)
        for i in range(keys.size):
            if keys[i] == nan_key:
                out[i] = np.nan
            else:
                out_bits[i] = keys[i] ^ mask if keys[i] < 0 else keys[i]
        return out

    return ordered


@numba.njit
def allreduce_max(x):
    """The elementwise maximum of ``x`` over the processes (NaN where any process has NaN)."""
    _check_running()
    return _shaped(x, _extremum(_elements(x), _MAX, True))


@numba.njit
def allreduce_min(x):
    """The elementwise minimum of ``x`` over the processes (NaN where any process has NaN)."""
    _check_running()
    return _shaped(x, _extremum(_elements(x), _MIN, False))


@numba.njit
def allgather(x):
    """The processes' ``x`` stacked along a new leading axis, in process order."""
    _check_running()
    elements = _elements(x)
    count = size()
    out = np.empty(count * elements.size, elements.dtype)
    _check(numba_mpi.allgather(elements, out, elements.size), "MPI_Allgather")
    return _stacked(x, out, count)


def _partners(perm, me, count):
    """``(destination, source)`` of process ``me`` in ``perm`` (``MPI.PROC_NULL`` where it has none), after
    checking that ``perm`` is a permutation of some of the ``count`` processes."""


@overload(_partners)
def _partners_nopython(perm, me, count):
    if isinstance(perm, types.BaseTuple) and len(perm) == 0:
        return lambda perm, me, count: (_PROC_NULL, _PROC_NULL)

    def partners(perm, me, count):
        destination, source = _PROC_NULL, _PROC_NULL
        for i in range(len(perm)):
            a, b = perm[i]
            if not (0 <= a < count and 0 <= b < count):
                raise NumbaxCollectiveError("permute's pair ({}, {}) names a process outside range({})", "", a, b,
                                            count)
            for j in range(i):
                if perm[j][0] == a or perm[j][1] == b:
                    raise NumbaxCollectiveError("permute's pairs ({}, {}) and ({}, {}) share a source or a "
                                                "destination: perm is no permutation", "", perm[j][0], perm[j][1],
                                                a, b)
            if a == me:
                destination = b
            if b == me:
                source = a
        return destination, source

    return partners


@numba.njit
def permute(x, perm):
    """``x`` of the process that sends to this one in ``perm`` (``(source, destination)`` pairs), zeros where
    none does."""
    _check_running()
    destination, source = _partners(perm, rank(), size())
    elements = _elements(x)
    out = np.zeros_like(elements)
    _check(numba_mpi.sendrecv(elements, destination, out, source, _TAG, _TAG), "MPI_Sendrecv")
    return _shaped(x, out)
