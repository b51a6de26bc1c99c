"""numbax's ``vmap`` of ``grad`` and axis reductions with ``keepdims``, side by side with ``jax.jit`` and
hand-written Numba, in one run.

Two tasks (``benchmarks/batched_tasks.py``), float64 on the CPU, one thread each: per-example gradients of
logistic regression (batch 256, 100 features) and the gradient of a softmax cross-entropy written with
``keepdims`` reductions (256 x 100). Each column's result is checked against the hand-written one first
(MISMATCH instead of a time where it disagrees); times are the best of several repeats of ``timeit``
autorange, compiled code warm. Reported, never asserted; Markdown on stdout and in
``benchmarks/batched_results.md``.

Usage: ``python benchmarks/run_batched.py [--quick] [--output PATH]``.
"""
from __future__ import annotations

import argparse
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import one_thread  # noqa: E402,F401  (before NumPy and JAX)
import numpy as np  # noqa: E402

import batched_tasks as tasks  # noqa: E402
from batched import hand_numba  # noqa: E402
from run import fmt_ratio, fmt_time, timed_against_hand, write_report  # noqa: E402


def _columns():
    """task -> {column: (callable, args)}."""
    import jax
    import jax.numpy as jnp

    import numbax

    jax.config.update("jax_enable_x64", True)
    namespace = dict(vars(tasks), np=jnp)
    jx = {name: types.FunctionType(getattr(tasks, name).__code__, namespace, name)
          for name in ("logistic_loss", "softmax_xent")}
    w, x, y = tasks.logistic_args()
    logits, onehot = tasks.softmax_args()
    numbax_per_example = numbax.vmap(numbax.grad(tasks.logistic_loss), in_axes=(None, 0, 0))
    jax_per_example = jax.jit(jax.vmap(jax.grad(jx["logistic_loss"]), in_axes=(None, 0, 0)))
    numbax_softmax = numbax.grad(tasks.softmax_xent)
    jax_softmax = jax.jit(jax.grad(jx["softmax_xent"]))
    return {
        "per-example gradients, logistic regression, batch 256 x 100": {
            "numbax": (lambda: numbax_per_example(w, x, y), ()),
            "jax": (lambda: np.asarray(jax_per_example(w, x, y)), ()),
            "hand": (lambda: hand_numba.per_example_grads(w, x, y), ()),
        },
        "softmax cross-entropy with keepdims, grad, 256 x 100": {
            "numbax": (lambda: numbax_softmax(logits, onehot), ()),
            "jax": (lambda: np.asarray(jax_softmax(logits, onehot)), ()),
            "hand": (lambda: hand_numba.softmax_xent_grad(logits, onehot), ()),
        },
    }


def main(argv=None) -> int:
    """Run every task's columns, check them against the hand-written result, print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--output", default=os.path.join(HERE, "batched_results.md"))
    ns = parser.parse_args(argv)
    repeat = 3 if ns.quick else 7
    rows = []
    for task, columns in _columns().items():
        times = timed_against_hand(task, columns, repeat)
        rows.append([task, fmt_time(times["numbax"]), fmt_time(times["jax"]), fmt_time(times["hand"]),
                     fmt_ratio(times["numbax"], times["jax"]), fmt_ratio(times["numbax"], times["hand"])])
    write_report("numbax vmap of grad and keepdims reductions against jax.jit and hand-written Numba",
                 ["task", "numbax", "jax.jit", "hand Numba", "numbax / jax", "numbax / hand"], rows, ns.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
