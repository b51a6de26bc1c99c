"""The data-parallel MLP step under ``numbax.pmap`` on 1 and 2 CPU devices: time per step and scaling.

The step of ``examples/data_parallel_mlp.py`` at the size of issue 16: an MLP [784, 256, 10], a batch of 1024
split evenly over the devices, each shard's gradient averaged with ``lax.pmean``, the update applied.
``jit`` of the same step on the whole batch is the baseline. The result of every configuration is checked
against the baseline first (MISMATCH instead of a time where it disagrees). Times are the best of several
rounds of ``timeit`` autorange, the configurations taking turns in each round, compiled code warm; reported,
never asserted. With 2 devices each shard runs on a thread of its own (``numbax.transforms.pmap.thread_shards``),
whose first call keeps freed memory in the process (``numbax.distributed.memory``): every configuration is
timed after it, so that all of them run without page faults (the MPI processes likewise, from ``initialize``).
Markdown on stdout and in
``benchmarks/pmap_results.md``.

Processes: ``mpi_rows`` runs the same step under ``pmap`` across 2 MPI processes (``mpiexec -n 2``, one shard
each); ``benchmarks/run_pmap_mpi.py`` measures the MPI collectives themselves (psum latency).

Usage: ``python benchmarks/run_pmap.py [--quick] [--output PATH]``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import one_thread  # noqa: E402,F401  (before NumPy: one BLAS thread per shard)
import numpy as np  # noqa: E402

from run import fmt_ratio, fmt_time, write_report  # noqa: E402

import numbax  # noqa: E402
from numbax import grad, lax  # noqa: E402

SIZES = (784, 256, 10)
BATCH = 1024


def loss(params, x, y):
    (w1, b1), (w2, b2) = params
    hidden = np.tanh(x @ w1 + b1)
    return np.mean((hidden @ w2 + b2 - y) ** 2)


def update(params, grads, learning_rate=0.1):
    return [(w - learning_rate * dw, b - learning_rate * db) for (w, b), (dw, db) in zip(params, grads)]


def sharded_step(params, x, y):
    return update(params, lax.pmean(grad(loss)(params, x, y), "batch"))


def whole_step(params, x, y):
    return update(params, grad(loss)(params, x, y))


def problem(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = [(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n)) for m, n in zip(SIZES[:-1], SIZES[1:])]
    return params, rng.normal(size=(BATCH, SIZES[0])), rng.normal(size=(BATCH, SIZES[-1]))


def best(fn, repeat: int) -> float:
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number


def pmap_rows(repeat: int):
    """One row per CPU device count: the step under pmap, its result checked against jit's; jit and the
    device counts timed in turns (a burst of load elsewhere hits them alike), each its best."""
    params, x, y = problem()
    numbax.config.update("cpu_device_count", 2)
    calls = {0: (numbax.jit(whole_step), x, y)}
    for devices in (1, 2):
        step = numbax.pmap(sharded_step, axis_name="batch", in_axes=(None, 0, 0), devices=numbax.devices()[:devices])
        calls[devices] = (step, x.reshape(devices, -1, SIZES[0]), y.reshape(devices, -1, SIZES[-1]))
    want = calls[0][0](params, x, y)
    calls[2][0](params, calls[2][1], calls[2][2])  # compiled, and glibc's allocator set, before any timing
    ok = {devices: all(np.allclose(g[0], w, rtol=1e-10, atol=1e-12) for g, w in zip(
        numbax.tree_util.tree_leaves(fn(params, xs, ys)), numbax.tree_util.tree_leaves(want)))
        for devices, (fn, xs, ys) in calls.items() if devices}
    times = {devices: float("inf") for devices in calls}
    for _ in range(repeat):
        for devices, (fn, xs, ys) in calls.items():
            if devices == 0 or ok[devices]:
                times[devices] = min(times[devices], best(lambda: fn(params, xs, ys), 1))
    numbax.config.update("cpu_device_count", 1)
    rows = [["jit (whole batch)", "1", "-", fmt_time(times[0]), "1.00x", "-"]]
    for devices in (1, 2):
        seconds = times[devices] if ok[devices] else None
        where = "a thread each, without the GIL" if devices > 1 else "the calling thread"
        rows.append([f"pmap, {devices} CPU device{'s' if devices > 1 else ''}", str(devices), where,
                     fmt_time(seconds) if ok[devices] else "MISMATCH", fmt_ratio(times[0], seconds),
                     fmt_ratio(times[1], seconds) if devices > 1 else "-"])
    return rows


def mpi_rows(repeat: int):
    """The same step under ``pmap`` across 2 MPI processes (``mpiexec -n 2``, one CPU device each), its
    result checked against jit's in each process; ``benchmarks/run_pmap_mpi.py`` measures the bare collectives."""
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    command = [mpiexec, "-n", "2", sys.executable, os.path.abspath(__file__), "--mpi-worker", str(repeat)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=900)
    label = ["pmap, 2 MPI processes", "2", "processes: one shard each, pmean by MPI"]
    if run.returncode != 0:
        return [label + ["FAILED: " + run.stderr.strip().splitlines()[-1][:100], "-", "-"]]
    base_time, seconds, ok = json.loads(run.stdout.strip().splitlines()[-1])
    numbax.config.update("cpu_device_count", 1)  # one process: the 1-device pmap, the scaling's reference
    step = numbax.pmap(sharded_step, axis_name="batch", in_axes=(None, 0, 0))
    params, x, y = problem()
    step(params, x[None], y[None])
    one_device = best(lambda: step(params, x[None], y[None]), repeat)
    return [label + [fmt_time(seconds) if ok else "MISMATCH", fmt_ratio(base_time, seconds) if ok else "-",
                     fmt_ratio(one_device, seconds) if ok else "-"]]


def mpi_worker(repeat: int) -> None:
    """One of ``mpi_rows``'s processes: its half of the batch; process 0 prints jit's time on the whole batch
    in that process, the slowest process's time per step, and whether every process's result was jit's."""
    from mpi4py import MPI

    from numbax import distributed

    distributed.initialize()
    rank, count = numbax.process_index(), numbax.process_count()
    params, x, y = problem()
    baseline = numbax.jit(whole_step)
    want = baseline(params, x, y)
    step = numbax.pmap(sharded_step, axis_name="batch", in_axes=(None, 0, 0))
    xs, ys = x.reshape(count, -1, SIZES[0])[rank:rank + 1], y.reshape(count, -1, SIZES[-1])[rank:rank + 1]
    got = step(params, xs, ys)
    ok = all(np.allclose(g[0], w, rtol=1e-10, atol=1e-12)
             for g, w in zip(numbax.tree_util.tree_leaves(got), numbax.tree_util.tree_leaves(want)))
    comm = MPI.COMM_WORLD
    ok = comm.allreduce(ok, op=MPI.LAND)
    base_time = best(lambda: baseline(params, x, y), repeat)  # each process alone, the other one too
    comm.Barrier()
    seconds = comm.allreduce(best(lambda: step(params, xs, ys), repeat), op=MPI.MAX)
    if rank == 0:
        print(json.dumps([base_time, seconds, ok]))
    distributed.shutdown()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--output", default=os.path.join(HERE, "pmap_results.md"))
    parser.add_argument("--mpi-worker", type=int, help=argparse.SUPPRESS)  # mpi_rows's processes: the repeats
    ns = parser.parse_args(argv)
    if ns.mpi_worker is not None:
        mpi_worker(ns.mpi_worker)
        return
    repeat = 3 if ns.quick else 10
    headers = ["configuration", "devices", "shards run on", "time per step", "vs jit", "2 vs 1 device"]
    write_report(f"Data-parallel MLP step {list(SIZES)}, batch {BATCH} (load average {os.getloadavg()[0]:.1f} on "
                 f"{os.cpu_count()} cores)", headers,
                 pmap_rows(repeat) + mpi_rows(repeat), ns.output)


if __name__ == "__main__":
    main()
