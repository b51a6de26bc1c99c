"""GPU benchmark (issue 15), one prepared script for a machine with a GPU, numba-cuda, CuPy and JAX (CUDA).

Prints one Markdown table and writes ``benchmarks/gpu_results.md``:

- a fused elementwise chain of 8 operations on 2^26 float32 and float64 elements (one kernel, by
  ``numbax.jit`` on device arrays), as a fraction of the device-to-device copy bandwidth measured here
  (target >= 70%), against ``jax.jit`` on the same GPU;
- the rows that need ``grad`` and ``vmap`` on the GPU backend (the seed MLP step, the [784, 256, 10] MLP step
  at batch 4096, ``vmap`` of a 2000-step scalar ODE over 10^6 examples, per-example gradients) say so until
  those transformations compile there: this script never times a fallback.

Timings are reported, never asserted; in the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) the numbers are
correctness only. Usage: ``python benchmarks/run_gpu.py [--elements N]`` (default 2^26).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from run import write_report  # noqa: E402

import numbax  # noqa: E402

PENDING = ("seed MLP step", "MLP [784, 256, 10] step, batch 4096", "vmap of a 2000-step ODE, 10^6 examples",
           "per-example gradients, batch 4096")


def chain(x):
    """Eight elementwise operations: numbax fuses them into one kernel."""
    y = x * 1.5 + 0.25
    y = np.tanh(y) - 0.5 * y
    return np.exp(-y) * y


def chain_jax(x):
    """``chain`` in jax.numpy."""
    import jax.numpy as jnp

    y = x * 1.5 + 0.25
    y = jnp.tanh(y) - 0.5 * y
    return jnp.exp(-y) * y


def seconds(fn, repeat: int = 5) -> float:
    """Best-of-``repeat`` seconds of ``fn()``, the device synchronized around each run."""
    fn()
    numbax.block_until_ready(None)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        numbax.block_until_ready(fn())
        best = min(best, time.perf_counter() - start)
    return best


def copy_bandwidth(x) -> float:
    """Bytes per second of a device-to-device copy of ``x`` (read once, written once)."""
    from numba import cuda

    out = cuda.device_array_like(x)
    return 2 * x.nbytes / seconds(lambda: out.copy_to_device(x) or out)


def elementwise_rows(n: int) -> list:
    """One row per dtype: numbax's fused chain, its share of the copy bandwidth, and JAX's time."""
    gpu = numbax.devices("gpu")[0]
    fused = numbax.jit(chain)
    rows = []
    for dtype in (np.float32, np.float64):
        x = numbax.device_put(np.random.default_rng(0).normal(size=n).astype(dtype), gpu)
        np.testing.assert_allclose(numbax.device_get(fused(x))[:1000], chain(numbax.device_get(x)[:1000]),
                                   rtol=1e-5 if dtype == np.float32 else 1e-12)
        t = seconds(lambda: fused(x))
        share = 2 * x.nbytes / t / copy_bandwidth(x)
        rows.append([f"fused chain of 8, {n} {np.dtype(dtype).name}", f"{t * 1e3:.3f} ms",
                     f"{share:.0%} of copy bandwidth (target >= 70%)", jax_chain(n, dtype)])
    return rows


def jax_chain(n: int, dtype) -> str:
    """``jax.jit`` of the same chain on the GPU, or why there is no number."""
    try:
        import jax
    except ImportError:
        return "JAX not installed"
    if not any(d.platform == "gpu" for d in jax.devices()):
        return "JAX sees no GPU"
    jax.config.update("jax_enable_x64", True)
    x = jax.device_put(np.random.default_rng(0).normal(size=n).astype(dtype))
    f = jax.jit(chain_jax)
    return f"{seconds(lambda: f(x).block_until_ready()) * 1e3:.3f} ms"


def main() -> None:
    """Run what the GPU backend compiles today; list the rest as pending."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=2 ** 26, help="elements of the chain (default 2^26)")
    n = parser.parse_args().elements
    rows = elementwise_rows(n)
    rows += [[task, "-", "pending: needs grad/vmap on the GPU backend", "-"] for task in PENDING]
    write_report("numbax on the GPU", ["task", "numbax", "measure", "jax.jit"], rows,
                 os.path.join(HERE, "gpu_results.md"))


if __name__ == "__main__":
    main()
