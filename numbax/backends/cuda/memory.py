"""Launch shapes and device memory, what the rest of the GPU backend's run time builds on: the threads of a
launch, allocation, views that share memory (NumPy's, which numba.cuda's own ``.T`` and indexing do not all
give), copies by kernel (of strided views), and CuPy where it is installed (cuBLAS, cuSOLVER; never in the
simulator). It imports NumPy and ``numba.cuda`` only.
"""
from __future__ import annotations

from typing import Any, Sequence, Tuple

import numpy as np

from numbax.backends.cuda.availability import cuda as _cuda_module, simulated

cuda = _cuda_module()
# Threads per block: a power of two (the block reductions halve it). The simulator runs each thread as a Python
# thread, so it gets few.
THREADS = 8 if simulated() else 256
MAX_BLOCKS = 4 if simulated() else 4096


def grid(n: int) -> Tuple[int, int]:
    """``(blocks, threads)`` for a grid-stride loop over ``n`` elements."""
    return max(1, min(MAX_BLOCKS, -(-n // THREADS))), THREADS


def empty(shape: Any, dtype) -> Any:
    """An uninitialised device array (``shape`` a sequence, or an int as NumPy takes it)."""
    return cuda.device_array(int(shape) if np.ndim(shape) == 0 else tuple(shape), dtype=dtype)


def full(shape: Any, value: Any, dtype) -> Any:
    """``np.full(shape, value, dtype)`` on the device (made on the host and copied)."""
    return cuda.to_device(np.full(shape, value, dtype))


def installed_cupy():
    """CuPy where it is installed and a GPU runs the code (not the simulator), else None."""
    try:
        import cupy
    except ImportError:
        return None
    return None if simulated() else cupy

def transpose(a: Any, axes: Sequence[int]) -> Any:
    """``np.transpose(a, axes)`` of a device array: a view, as NumPy's (numba.cuda's own ``.T`` copies, and 2-d
    arrays only): the same memory, the shape and strides permuted."""
    if simulated():  # the simulator's device arrays wrap NumPy arrays
        return a.transpose(axes)
    return type(a)(tuple(a.shape[k] for k in axes), tuple(a.strides[k] for k in axes), a.dtype, stream=a.stream,
                   gpu_data=a.gpu_data)


def expand(a: Any, positions: Sequence[int]) -> Any:
    """``a`` with an axis of extent 1 at each of ``positions`` (of the result, in order), as ``a[:, None]``
    gives in NumPy: a view of the same memory, whatever ``a``'s strides."""
    if simulated():  # the simulator's device arrays wrap NumPy arrays
        return a[tuple(None if k in positions else slice(None) for k in range(a.ndim + len(positions)))]
    shape, strides = list(a.shape), list(a.strides)
    for k in positions:
        shape.insert(k, 1)
        strides.insert(k, a.dtype.itemsize)
    return type(a)(tuple(shape), tuple(strides), a.dtype, stream=a.stream, gpu_data=a.gpu_data)


@cuda.jit
def copy_1d(out, a):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = a[i]


@cuda.jit
def copy_2d(out, a):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i // out.shape[1], i % out.shape[1]] = a[i // out.shape[1], i % out.shape[1]]
