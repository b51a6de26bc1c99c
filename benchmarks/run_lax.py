"""numbax.lax benchmark: a ``while_loop`` of 10^5 iterations, numbax against JAX and plain Numba, in one run.

The loop carries ``(i, x, y)`` and runs a damped rotation; ``numbax.jit`` compiles
``numbax.lax.while_loop`` to a native ``while``, ``jax.jit`` traces
``jax.lax.while_loop`` (float64, CPU, one thread), and the Numba column is the
same loop written by hand. Prints Markdown and writes ``benchmarks/lax_results.md``.
Timings are reported, never asserted. Usage: ``python benchmarks/run_lax.py [--quick]``.
"""
from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import sys
import time
import timeit

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 100_000


def rotate(lax, np):
    def body(state):
        i, x, y = state
        c, s = np.cos(0.001 * i), np.sin(0.001 * i)
        return i + 1, 0.9999 * (c * x - s * y) + 0.0001, 0.9999 * (s * x + c * y)

    def run(x0, y0):
        return lax.while_loop(lambda state: state[0] < STEPS, body, (0, x0, y0))[1:]

    return run


def numba_rotate():
    import numba

    @numba.njit
    def run(x, y):
        i = 0
        while i < STEPS:
            c, s = math.cos(0.001 * i), math.sin(0.001 * i)
            x, y = 0.9999 * (c * x - s * y) + 0.0001, 0.9999 * (s * x + c * y)
            i += 1
        return x, y

    return run


def timed(fn, repeats):
    start = time.perf_counter()
    first = fn()
    compile_s = time.perf_counter() - start
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    best = min(timer.repeat(repeat=repeats, number=number)) / number
    return first, compile_s, best


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--output", default=os.path.join(HERE, "lax_results.md"))
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 7

    import numpy as np
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    import numbax
    from numbax import lax

    numbax_fn = numbax.jit(rotate(lax, np))
    jax_fn = jax.jit(rotate(jax.lax, jnp))
    numba_fn = numba_rotate()
    rows = {
        "numbax.jit(lax.while_loop)": timed(lambda: numbax_fn(1.0, 0.0), repeats),
        "jax.jit(jax.lax.while_loop)": timed(lambda: tuple(v.block_until_ready() for v in jax_fn(1.0, 0.0)),
                                             repeats),
        "numba.njit, hand-written `while`": timed(lambda: numba_fn(1.0, 0.0), repeats),
    }
    reference = rows["numba.njit, hand-written `while`"][0]
    lines = [
        "# numbax.lax benchmark", "",
        f"{datetime.datetime.now().isoformat(timespec='seconds')}, Python {platform.python_version()}, "
        f"numba {__import__('numba').__version__}, jax {jax.__version__}; `python benchmarks/run_lax.py"
        f"{' --quick' if args.quick else ''}`; best of {repeats} timeit repeats; float64 on the CPU, one thread.",
        "", f"`while_loop` of {STEPS:,} iterations carrying `(i, x, y)` (a damped rotation).", "",
        "| system | time per call | vs numbax | first call (compile + run) | result matches Numba |",
        "|---|---|---|---|---|",
    ]
    base = rows["numbax.jit(lax.while_loop)"][2]
    for name, (result, compile_s, best) in rows.items():
        same = bool(np.allclose(np.asarray(result, dtype=float), np.asarray(reference, dtype=float), rtol=1e-9))
        lines.append(f"| {name} | {best * 1e3:.3f} ms | {best / base:.2f}x | {compile_s:.2f} s | {'yes' if same else 'NO'} |")
    text = "\n".join(lines) + "\n"
    with open(args.output, "w") as f:
        f.write(text)
    print(text)
    return text


if __name__ == "__main__":
    sys.exit(main() and 0)
