"""glibc's allocator told to keep freed memory, so that a new result does not fault its pages in again.

A collective across processes returns a new array each call (``psum`` does, as in JAX). With glibc's
defaults a result of 128 KiB or more is a fresh ``mmap`` that ``free`` unmaps, and a smaller one at the heap's
top is trimmed back to the system, so every call faults its result's pages in again: 2x the time of MPI's
``Allreduce`` at 1 MB, 3.6x at 8 MB (``benchmarks/pmap_mpi_results.md``). ``keep_freed_memory`` sets
``M_MMAP_THRESHOLD`` to 32 MiB (results up to that size come from the heap) and ``M_TOP_PAD`` to 64 MiB (the
heap keeps that much above its top when it shrinks), what ``MALLOC_MMAP_THRESHOLD_=33554432`` and
``MALLOC_TOP_PAD_=67108864`` in the environment do: a process holds up to 64 MiB more than it uses.

``numbax.distributed.initialize`` calls it, and so does ``pmap``'s first call on threads
(``transforms.pmap.thread_shards``): the temporaries of a step are faulted in again just the same (2800 page
faults, 5 ms, per step of ``benchmarks/run_pmap.py``'s MLP). Where the environment tunes glibc's allocator (a
``MALLOC_...`` variable, or ``GLIBC_TUNABLES`` naming ``glibc.malloc``), glibc applied that choice and numbax
leaves it; other C libraries (no ``mallopt``: macOS) keep their own policy.
"""
from __future__ import annotations

import ctypes
import functools
import os

MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's largest on 64-bit machines
TOP_PAD = 64 * 1024 * 1024
_M_TOP_PAD, _M_MMAP_THRESHOLD = -2, -3  # mallopt's parameters, from glibc's malloc.h


def tuned_by_environment() -> bool:
    """Whether the environment sets glibc's allocator's parameters (then numbax leaves them)."""
    return any(name.startswith("MALLOC_") for name in os.environ) or \
        "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", "")


@functools.lru_cache(maxsize=None)
def keep_freed_memory() -> bool:
    """Keep freed blocks up to ``MMAP_THRESHOLD`` in this process (glibc's ``mallopt``), once; whether it did
    so."""
    if tuned_by_environment():
        return False
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TOP_PAD, TOP_PAD))
