"""psum latency across 2 MPI processes: numbax's compiled allreduce against a bare mpi4py ``Allreduce``.

``numbax.distributed.collectives.allreduce_sum`` is what a pmap shard calls for ``lax.psum`` when its
devices are processes; here it is called in a loop inside ``numba.njit`` code (as compiled shards call it),
beside numba-mpi's ``allreduce`` called the same way (no numbax in between) and mpi4py's ``Allreduce``
called from Python, each over the same float64 buffer of 8 B to 8 MB. The numbax and numba-mpi columns
allocate their result each call (as ``psum`` returns a new array); mpi4py writes into a buffer made once
(the ratio's reference) or, in the last column, into a new one each call.

From 64 KB up a new result costs page faults: Numba frees a result as soon as it is dead, glibc gives the
memory back to the system (``brk`` at the heap's top, ``munmap`` of a large block) and the next call
faults it in again (about 180 faults per 1 MB call, 1500 per 8 MB call, against 1 and 10 with a reused
buffer). ``numbax.distributed.initialize`` keeps that memory in the process (``distributed.memory``: glibc's
``mallopt``); the run is repeated with ``GLIBC_TUNABLES=glibc.malloc.perturb=0`` (glibc's default, so no change
but that numbax leaves glibc's settings alone): glibc's defaults.
A time is the slowest process's mean over a loop of about 20 ms, the best of 31 loops, the systems
taking turns. Prints Markdown and writes
``benchmarks/pmap_mpi_results.md``; timings are reported, never asserted.
Usage: ``python benchmarks/run_pmap_mpi.py [--quick]`` (it starts ``mpiexec -n 2`` from Python's bin/).
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = (8, 64, 1024, 64 * 1024, 1024 * 1024, 8 * 1024 * 1024)  # bytes
LOOP_SECONDS = 0.02
REPEATS = 31


def _loops():
    import numba
    import numba_mpi

    from numbax.distributed import collectives

    @numba.njit
    def numbax_loop(x, count):
        for _ in range(count):
            y = collectives.allreduce_sum(x)
        return y

    @numba.njit
    def numba_mpi_loop(x, count):
        for _ in range(count):
            y = np.empty_like(x)
            numba_mpi.allreduce(x, y)
        return y
    return numbax_loop, numba_mpi_loop


def _mpi4py_loops(comm):
    def into_one_buffer(x, count):
        y = np.empty_like(x)
        for _ in range(count):
            comm.Allreduce(x, y)
        return y

    def into_new_buffers(x, count):
        for _ in range(count):
            y = np.empty_like(x)
            comm.Allreduce(x, y)
        return y

    return into_one_buffer, into_new_buffers


def _seconds_per_call(comm, loop, x, count):
    from mpi4py import MPI

    comm.Barrier()
    start = time.perf_counter()
    loop(x, count)
    return comm.allreduce((time.perf_counter() - start) / count, op=MPI.MAX)


def worker(quick: bool) -> None:
    from numbax import distributed

    distributed.initialize()
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    numbax_loop, numba_mpi_loop = _loops()
    into_one_buffer, into_new_buffers = _mpi4py_loops(comm)
    systems = {"numbax allreduce_sum (njit loop)": numbax_loop, "mpi4py Allreduce (Python loop)": into_one_buffer,
               "numba-mpi allreduce (njit loop)": numba_mpi_loop,
               "mpi4py Allreduce, new result each call": into_new_buffers}
    rows = []
    for size in SIZES[:4] if quick else SIZES:
        x = np.full(size // 8, comm.Get_rank() + 1.0)
        counts = {}
        for name, loop in systems.items():
            assert np.array_equal(loop(x, 1), np.full(size // 8, 3.0)), name  # and compiled now
            probe = _seconds_per_call(comm, loop, x, 10)
            counts[name] = comm.bcast(max(10, int(LOOP_SECONDS / max(probe, 1e-7))))
        times = {name: float("inf") for name in systems}
        for _ in range(REPEATS):  # the systems in turn, so that a burst of load elsewhere hits them alike
            for name, loop in systems.items():
                times[name] = min(times[name], _seconds_per_call(comm, loop, x, counts[name]))
        rows.append((size, times))
    if comm.Get_rank() == 0:
        _report(rows, quick, MPI.Get_library_version().splitlines()[0])
    distributed.shutdown()


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MB" if n >= 1024 * 1024 else f"{n // 1024} KB" if n >= 1024 else f"{n} B"


def _table(rows) -> str:
    names = list(rows[0][1])
    lines = ["| buffer (float64) | " + " | ".join(names) + " | numbax / mpi4py |", "|---|" + "---|" * (len(names) + 1)]
    for size, times in rows:
        ratio = times[names[0]] / times[names[1]]
        lines.append(f"| {_size(size)} | " + " | ".join(f"{times[n] * 1e6:.2f} µs" for n in names)
                     + f" | {ratio:.2f}x |")
    return "\n".join(lines) + "\n"


def _report(rows, quick: bool, library: str) -> None:
    import numba

    if os.environ.get("GLIBC_TUNABLES"):
        heading = (f"## glibc's defaults (`GLIBC_TUNABLES={os.environ['GLIBC_TUNABLES']}`, glibc's default: numbax "
                   "leaves glibc's settings alone)\n\nA freed result of 128 KiB or more may be given back to the "
                   "system, and the next call faults its pages in again.")
    else:
        heading = (f"# psum latency across 2 MPI processes\n\n{datetime.datetime.now().isoformat(timespec='seconds')}"
                   f", Python {platform.python_version()}, numba {numba.__version__}, {library.strip()}, "
                   f"{os.cpu_count()} cores (shared with other work while measured, load average "
                   f"{os.getloadavg()[0]:.1f}); `python benchmarks/run_pmap_mpi.py{' --quick' if quick else ''}` "
                   f"(`mpiexec -n 2`); a time is the slowest process's mean per call, best of {REPEATS} loops taken in "
                   "turns.\n\n## numbax's setting (`distributed.initialize`: glibc's `mallopt`)\n\nglibc takes "
                   "results up to 32 MiB from its heap, not from fresh mappings, and keeps 64 MiB above the heap's "
                   "top when it shrinks it, so a freed result is not given back to the system and faulted in again by "
                   "the next call.")
    print(heading + "\n\n" + _table(rows))
    with open(os.path.join(HERE, "pmap_mpi_results.md"), "a") as out:
        out.write(heading + "\n\n" + _table(rows) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="buffers up to 64 KB only")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.quick)
        return
    open(os.path.join(HERE, "pmap_mpi_results.md"), "w").close()
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    command = [mpiexec, "-n", "2", sys.executable, os.path.abspath(__file__), "--worker"] + (["--quick"] * args.quick)
    for environ in ({}, {"GLIBC_TUNABLES": "glibc.malloc.perturb=0"}):
        subprocess.run(command, env=dict(os.environ, **environ), check=True)


if __name__ == "__main__":
    main()
