"""``numbax.random.normal`` throughput, side by side with ``jax.random.normal`` and NumPy's Generator, in one run.

Draws 10**6 float64 standard normal samples from one key (seed 0): ``numbax.random.normal``,
``jax.jit(jax.random.normal)`` with ``jax_enable_x64`` (result blocked on), and
``numpy.random.Generator.normal`` (PCG64, ziggurat: a different algorithm, for scale). Before
timing, numbax's samples are checked bit for bit against JAX's; a mismatch reads MISMATCH.

Measured: best of several repeats of ``timeit`` autorange, compiled code warm; and numbax's first
call in a fresh process with an empty Numba cache (the kernel's compilation) and with a warm one.
Timings are reported, never asserted. Output is Markdown, on stdout and in ``benchmarks/random_results.md``.

Usage: ``python benchmarks/run_random.py [--size N] [--repeat R] [--output PATH]``.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (HERE, ROOT):
    if path not in sys.path:
        sys.path.insert(0, path)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

from run import best_per_call, environment, fmt_ratio, fmt_time, table  # noqa: E402

FIRST_CALL = """
import sys, time
sys.path.insert(0, {root!r})
import numpy as np
from numbax import random
key = random.PRNGKey(0)
start = time.perf_counter()
random.normal(key, ({size},), np.float64)
print(time.perf_counter() - start)
"""


def first_call_seconds(size: int, cache_dir: str) -> float:
    """numbax's first ``normal`` call in a new process whose Numba cache lives in ``cache_dir``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", FIRST_CALL.format(root=ROOT, size=size)], env=env,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def measure(size: int, repeat: int) -> dict:
    """Seconds per call of each system, and whether numbax agrees with JAX bit for bit."""
    import jax

    from numbax import random

    jax.config.update("jax_enable_x64", True)
    key = random.PRNGKey(0)
    jax_normal = jax.jit(lambda k: jax.random.normal(k, (size,), np.float64))
    agrees = np.array_equal(random.normal(key, (size,), np.float64).view(np.uint64),
                            np.asarray(jax_normal(key)).view(np.uint64))
    generator = np.random.default_rng(0)
    times = {
        "numbax": best_per_call(random.normal, (key, (size,), np.float64), None, repeat),
        "jax": best_per_call(jax_normal, (key,), lambda out: out.block_until_ready(), repeat),
        "numpy": best_per_call(generator.normal, (0.0, 1.0, size), None, repeat),
    }
    with tempfile.TemporaryDirectory() as cache_dir:
        times["numbax_cold"] = first_call_seconds(size, cache_dir)
        times["numbax_warm_start"] = first_call_seconds(size, cache_dir)
    return {"times": times, "agrees": agrees}


def render(result: dict, size: int) -> str:
    times = result["times"]
    numbax_cell = fmt_time(times["numbax"]) if result["agrees"] else "MISMATCH"
    rows = [
        ["numbax.random.normal", numbax_cell, f"{size / times['numbax'] / 1e6:.0f}", "1.00x"],
        ["jax.jit(jax.random.normal), x64", fmt_time(times["jax"]), f"{size / times['jax'] / 1e6:.0f}",
         fmt_ratio(times["jax"], times["numbax"])],
        ["numpy Generator.normal (ziggurat)", fmt_time(times["numpy"]), f"{size / times['numpy'] / 1e6:.0f}",
         fmt_ratio(times["numpy"], times["numbax"])],
    ]
    return "\n".join([
        "# numbax.random benchmark",
        "",
        f"Standard normal samples, {size:,} float64 from one key; best of several `timeit` autorange repeats, "
        "code warm. The last column is each system's time over numbax's (above 1: numbax is faster).",
        "numbax's samples equal JAX's bit for bit" + ("." if result["agrees"] else ": NO, they differ."),
        "",
        table(["system", "time per call", "M samples/s", "vs numbax"], rows),
        "",
        f"numbax's first call in a fresh process: {fmt_time(times['numbax_cold'])} with an empty Numba cache "
        f"(compiling the kernel), {fmt_time(times['numbax_warm_start'])} with the cache filled.",
        "",
        f"Environment: {environment()}.",
        "",
    ])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10 ** 6)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--output", default=os.path.join(HERE, "random_results.md"))
    args = parser.parse_args(argv)
    text = render(measure(args.size, args.repeat), args.size)
    print(text)
    with open(args.output, "w") as handle:
        handle.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
