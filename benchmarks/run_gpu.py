"""GPU benchmark (issue 15), one prepared script for a machine with a GPU, numba-cuda, CuPy and JAX (CUDA).

Prints one Markdown table and writes ``benchmarks/gpu_results.md``:

- a fused elementwise chain of 8 operations on 2^26 float32 and float64 elements (one kernel, by
  ``numbax.jit`` on device arrays), as a fraction of the device-to-device copy bandwidth measured here
  (target >= 70%), against ``jax.jit`` on the same GPU;
- ``vmap`` of a 2000-step scalar ODE over 10^6 examples (one kernel, one example per thread) against
  ``jax.vmap`` of the ``lax.fori_loop`` version (target: faster than JAX);
- per-example gradients of that ODE (``vmap(grad(...))``, batch 4096, the tape in device memory) against
  ``jax.vmap(jax.grad(...))``;
- the data-parallel MLP step of ``run_pmap.py`` ([784, 256, 10], batch 1024, gradients averaged with
  ``lax.pmean``) under ``pmap`` over 2 GPUs against the same ``pmap`` over 1 GPU (its result checked against
  the CPU's ``jit`` first), where the machine has 2 GPUs; elsewhere the row says it was skipped;
- ``vmap`` of a 2000-step ODE whose state is a 3-vector (``np.zeros(3)``, held in each thread's local memory)
  over 10^6 examples, its per-example tangents (``vmap`` of ``jvp``) and gradients (``vmap`` of ``grad``, the
  tapes of the state in device memory), batch 4096, against ``jax.vmap`` of the ``lax.fori_loop`` versions;
- the training step of the seed MLP (``examples/mlp.py``: [10, 20, 1], batch 100) and of an MLP [784, 256, 10]
  at batch 4096: ``value_and_grad`` of the loss and the SGD update in one ``numbax.jit``, the inputs put on the
  GPU once and the parameters staying device arrays from step to step, each checked against the CPU backend
  over a few steps first, against ``jax.jit`` of the same step on the same GPU (target: within 1.5x of JAX).

Timings are reported, never asserted; in the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) the numbers are
correctness only. Usage: ``python benchmarks/run_gpu.py [--elements N] [--examples N] [--steps N]
[--per-example N] [--mlp-sizes N N ...] [--mlp-batch N]`` (defaults 2^26, 10^6, 2000, 4096, 784 256 10, 4096;
tiny ones make a smoke test in the simulator).
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

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

import mlp  # noqa: E402  (the seed MLP, the README's example)
from run import write_report  # noqa: E402

import numbax  # noqa: E402

SEED_MLP = ([10, 20, 1], 100)  # examples/mlp.py's sizes and batch
CHECKED_STEPS = 3  # steps of each MLP compared with the CPU backend before it is timed


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


def ode(y0, k, steps):
    """A damped nonlinear oscillator, ``steps`` explicit Euler steps of numbers: one example per thread."""
    y = y0
    v = 0.0
    for _ in range(steps):
        y, v = y + 0.001 * v, v - 0.001 * (k * np.sin(y) + 0.1 * v)
    return y


def ode_jax(y0, k, steps):
    """``ode`` as JAX writes it: ``lax.fori_loop`` over the steps."""
    import jax.numpy as jnp
    from jax import lax

    def step(_, state):
        y, v = state
        return y + 0.001 * v, v - 0.001 * (k * jnp.sin(y) + 0.1 * v)

    return lax.fori_loop(0, steps, step, (y0, jnp.zeros_like(y0)))[0]


def vector_ode(y0, k, steps):
    """Three species coupled through their total, a 3-vector state: each thread holds its example's in local
    memory (``backends.cuda.lower.thread_arrays``)."""
    y = np.zeros(3)
    y[0] = y0
    y[1] = 1.0 - y0
    y[2] = 0.5
    for _ in range(steps):
        y = y + 0.001 * (np.sin(y) - k * y + 0.1 * np.sum(y))
    return np.sum(y * y)


def vector_ode_tangent(y0, k, steps):
    """The derivative of ``vector_ode`` by ``k``, by forward mode."""
    return numbax.jvp(lambda kk: vector_ode(y0, kk, steps), (k,), (1.0,))[1]


def vector_ode_jax(y0, k, steps):
    """``vector_ode`` as JAX writes it: ``lax.fori_loop`` over the steps."""
    import jax.numpy as jnp
    from jax import lax

    def step(_, y):
        return y + 0.001 * (jnp.sin(y) - k * y + 0.1 * jnp.sum(y))

    y = lax.fori_loop(0, steps, step, jnp.stack([y0, 1.0 - y0, 0.5 + 0.0 * y0]))
    return jnp.sum(y * y)


def vector_ode_tangent_jax(y0, k, steps):
    """``vector_ode_tangent`` in JAX."""
    import jax

    return jax.jvp(lambda kk: vector_ode_jax(y0, kk, steps), (k,), (1.0,))[1]


def mlp_step(params, x, y):
    """The seed MLP's training step: the loss and its gradient in one sweep, then the SGD update."""
    value, grads = numbax.value_and_grad(mlp.loss)(params, x, y)
    return value, mlp.update(params, grads)


def mlp_step_jax(params, x, y, learning_rate=0.1):
    """``mlp_step`` in JAX."""
    import jax
    import jax.numpy as jnp

    def loss(params):
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = params[-1]
        return jnp.mean((h @ w + b - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return value, [(w - learning_rate * dw, b - learning_rate * db) for (w, b), (dw, db) in zip(params, grads)]


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
                                   rtol=1e-5 if dtype == np.float32 else 1e-12,
                                   atol=1e-6 if dtype == np.float32 else 0)  # float32 cancels near y = 0
        t = seconds(lambda: fused(x))
        share = 2 * x.nbytes / t / copy_bandwidth(x)
        rows.append([f"fused chain of 8, {n} {np.dtype(dtype).name}", f"{t * 1e3:.3f} ms",
                     f"{share:.0%} of copy bandwidth (target >= 70%)", jax_chain(n, dtype)])
    return rows


def jax_chain(n: int, dtype) -> str:
    """``jax.jit`` of the same chain on the GPU, or why there is no number."""
    jax, why = _jax_gpu()
    if jax is None:
        return why
    x = jax.device_put(np.random.default_rng(0).normal(size=n).astype(dtype))
    f = jax.jit(chain_jax)
    return f"{seconds(lambda: f(x).block_until_ready()) * 1e3:.3f} ms"


def _jax_gpu():
    """JAX, with float64, where it sees a GPU; else why not."""
    try:
        import jax
    except ImportError:
        return None, "JAX not installed"
    if not any(d.platform == "gpu" for d in jax.devices()):
        return None, "JAX sees no GPU"
    jax.config.update("jax_enable_x64", True)
    return jax, ""


def ode_rows(examples: int, steps: int, per_example: int) -> list:
    """``vmap`` of the ODE over ``examples`` and its per-example gradients over ``per_example`` examples,
    each checked against the CPU backend on the first examples, against JAX's ``vmap``."""
    gpu = numbax.devices("gpu")[0]
    rng = np.random.default_rng(0)
    jax, why_not = _jax_gpu()
    rows = []
    for label, mapped, theirs, n in (
            (f"vmap of a {steps}-step ODE, {examples} examples", ode, ode_jax, examples),
            (f"per-example gradients of the ODE, batch {per_example}", numbax.grad(ode, argnums=1),
             jax and jax.grad(ode_jax, argnums=1), per_example),
            (f"vmap of a {steps}-step ODE of a 3-vector state, {examples} examples", vector_ode, vector_ode_jax,
             examples),
            (f"per-example tangents (jvp) of the 3-vector ODE, batch {per_example}", vector_ode_tangent,
             vector_ode_tangent_jax, per_example),
            (f"per-example gradients of the 3-vector ODE, batch {per_example}", numbax.grad(vector_ode, argnums=1),
             jax and jax.grad(vector_ode_jax, argnums=1), per_example)):
        y0, k = rng.uniform(0.1, 1.0, n), rng.uniform(0.5, 2.0, n)
        mapped = numbax.vmap(mapped, in_axes=(0, 0, None))
        on_gpu = numbax.device_put((y0, k), gpu)
        got = numbax.device_get(mapped(*on_gpu, steps))
        check = min(n, 64)  # the GPU's sin and the CPU's may differ in the last bit: the difference is reported
        cpu = mapped(y0[:check], k[:check], steps)
        np.testing.assert_allclose(got[:check], cpu, rtol=1e-6)
        t = seconds(lambda: mapped(*on_gpu, steps), repeat=3)
        why = why_not
        if jax is not None:
            f = jax.jit(jax.vmap(theirs, in_axes=(0, 0, None)), static_argnums=2)
            args = jax.device_put(y0), jax.device_put(k)
            np.testing.assert_allclose(np.asarray(f(*args, steps))[:check], got[:check], rtol=1e-6)
            why = f"{seconds(lambda: f(*args, steps).block_until_ready(), repeat=3) * 1e3:.3f} ms"
        differs = np.max(np.abs(got[:check] - cpu) / np.maximum(np.abs(cpu), 1e-300))
        rows.append([label, f"{t * 1e3:.3f} ms", f"one kernel, one example per thread (target: faster than JAX); "
                                                 f"max relative difference from the CPU backend {differs:.1e}", why])
    return rows


def mlp_problem(sizes, batch: int):
    """Parameters of ``examples/mlp.py``'s initialisation, inputs and targets, as NumPy arrays."""
    key, x_key = numbax.random.split(numbax.random.PRNGKey(0))
    params = [tuple(np.asarray(p) for p in layer) for layer in mlp.init_params(key, sizes)]
    x = np.asarray(numbax.random.normal(x_key, (batch, sizes[0])))
    return params, x, np.sin(x[:, :sizes[-1]])


def train(step, params, x, y, steps: int):
    """The losses (on the host) and the parameters after ``steps`` steps, each step's parameters fed to the
    next as they come (device arrays stay on their device)."""
    losses = []
    for _ in range(steps):
        value, params = step(params, x, y)
        losses.append(float(numbax.device_get(value)))
    return losses, params


def agree(losses, params, want_losses, want_params) -> bool:
    """Whether losses and parameters agree with the reference's (rtol 1e-9: cuBLAS sums in another order)."""
    leaves = numbax.tree_util.tree_leaves(numbax.device_get(params))
    return np.allclose(losses, want_losses, rtol=1e-9, atol=0) and all(
        np.allclose(g, w, rtol=1e-9, atol=1e-12) for g, w in zip(leaves, numbax.tree_util.tree_leaves(want_params)))


def mlp_rows(sizes, batch: int) -> list:
    """The seed MLP's step and the step of an MLP of ``sizes`` at ``batch``: numbax on device arrays (checked
    against the CPU backend over ``CHECKED_STEPS`` steps; MISMATCH instead of a time where it disagrees)
    against ``jax.jit`` of the same step on the same GPU."""
    gpu = numbax.devices("gpu")[0]
    jax, why_not = _jax_gpu()
    rows = []
    for label, layers, n in ((f"seed MLP step {SEED_MLP[0]}, batch {SEED_MLP[1]}", *SEED_MLP),
                             (f"MLP {list(sizes)} step, batch {batch}", list(sizes), batch)):
        params, x, y = mlp_problem(layers, n)
        step = numbax.jit(mlp_step)
        want_losses, want_params = train(step, params, x, y, CHECKED_STEPS)
        on_gpu, x_gpu, y_gpu = numbax.device_put((params, x, y), gpu)
        if not agree(*train(step, on_gpu, x_gpu, y_gpu, CHECKED_STEPS), want_losses, want_params):
            rows.append([label, "MISMATCH", "the GPU backend differs from the CPU backend", "-"])
            continue
        t = seconds(_stepper(step, on_gpu, x_gpu, y_gpu))
        theirs = why_not
        measure = "value_and_grad + SGD update, one jit, parameters on the GPU between steps"
        if jax is not None:
            f = jax.jit(mlp_step_jax)
            args = jax.device_put((params, x, y))
            if not agree(*train(f, *args, CHECKED_STEPS), want_losses, want_params):
                rows.append([label, f"{t * 1e3:.3f} ms", measure, "MISMATCH: jax.jit differs from numbax"])
                continue
            t_jax = seconds(_stepper(f, *args))
            theirs = f"{t_jax * 1e3:.3f} ms"
            measure += f"; {t / t_jax:.2f}x jax.jit's time (target <= 1.5x)"
        rows.append([label, f"{t * 1e3:.3f} ms", measure, theirs])
    return rows


def _stepper(step, params, x, y):
    """A function of no arguments that runs one training step from the parameters the last one left and
    returns its loss (parameters never leave the device)."""
    state = [params]

    def one():
        value, state[0] = step(state[0], x, y)
        return value

    return one


def data_parallel_rows(gpus: list, repeat: int = 3) -> list:
    """The data-parallel MLP step under ``pmap`` over the first 2 of ``gpus`` (each shard's driver on a thread
    of its own, the ``pmean`` staged through the host) and over the first one: seconds per step, the scaling,
    and the check against the CPU's ``jit`` of the whole batch (MISMATCH instead of a time where it fails)."""
    from run_pmap import BATCH, SIZES, problem, sharded_step, whole_step

    task = f"data-parallel MLP step {list(SIZES)}, batch {BATCH}, pmap over 2 GPUs"
    if len(gpus) < 2:
        return [[task, "-", f"skipped: needs 2 GPUs, this machine has {len(gpus)}", "-"]]
    params, x, y = problem()
    want = numbax.tree_util.tree_leaves(numbax.jit(whole_step)(params, x, y))
    per_step = {}
    for count in (1, 2):
        step = numbax.pmap(sharded_step, axis_name="batch", in_axes=(None, 0, 0), devices=gpus[:count])
        xs, ys = x.reshape(count, -1, SIZES[0]), y.reshape(count, -1, SIZES[-1])
        got = numbax.tree_util.tree_leaves(numbax.device_get(step(params, xs, ys)))
        if not all(np.allclose(g[0], w, rtol=1e-10, atol=1e-12) for g, w in zip(got, want)):
            return [[task, "MISMATCH", f"pmap over {count} GPU(s) differs from the CPU's jit", "-"]]
        per_step[count] = seconds(lambda: step(params, xs, ys), repeat)
    return [[task, f"{per_step[2] * 1e3:.2f} ms", f"{per_step[1] / per_step[2]:.2f}x pmap over 1 GPU "
             f"({per_step[1] * 1e3:.2f} ms)", "-"]]


def main() -> None:
    """Run every row and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=2 ** 26, help="elements of the chain (default 2^26)")
    parser.add_argument("--examples", type=int, default=10 ** 6, help="examples of the vmapped ODE (10^6)")
    parser.add_argument("--steps", type=int, default=2000, help="steps of the ODE (2000)")
    parser.add_argument("--per-example", type=int, default=4096, help="batch of per-example gradients (4096)")
    parser.add_argument("--mlp-sizes", type=int, nargs="+", default=[784, 256, 10],
                        help="layer sizes of the larger MLP (784 256 10)")
    parser.add_argument("--mlp-batch", type=int, default=4096, help="batch of the larger MLP's step (4096)")
    options = parser.parse_args()
    rows = elementwise_rows(options.elements)
    rows += ode_rows(options.examples, options.steps, options.per_example)
    rows += data_parallel_rows(numbax.devices("gpu"))
    rows += mlp_rows(options.mlp_sizes, options.mlp_batch)
    write_report("numbax on the GPU", ["task", "numbax", "measure", "jax.jit"], rows,
                 os.path.join(HERE, "gpu_results.md"))


if __name__ == "__main__":
    main()
