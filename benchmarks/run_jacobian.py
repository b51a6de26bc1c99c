"""numbax's forward mode and Jacobians, side by side with ``jax.jit`` of JAX's, hand-written Numba and autograd, in
one run.

Four tasks (``benchmarks/jacobian_tasks.py``), float64 on the CPU, one thread each:

1. ``numbax.jvp`` of the 2000-step ODE loss along a direction of its parameters;
2. ``numbax.hessian`` of a 20-dimensional logistic loss (``jacfwd(jacrev(f))``);
3. ``numbax.jacrev`` of an MLP layer with respect to its input (a batch of 128 rows);
4. a Hessian-vector product of Rosenbrock (n = 1000) by forward over reverse,
   ``numbax.jit`` of ``numbax.jvp(numbax.grad(f), (x,), (v,))``, beside ``numbax.grad(f)`` itself.

Each column's result is checked against the hand-written one first (MISMATCH instead of a time where it
disagrees); times are the best of several repeats of ``timeit`` autorange, compiled code warm. Reported,
never asserted. Output is Markdown, on stdout and in ``benchmarks/jacobian_results.md``.

Usage: ``python benchmarks/run_jacobian.py [--quick] [--output PATH]``.
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

import jacobian_tasks as tasks  # noqa: E402
from jacobian import hand_numba  # noqa: E402
from run import fmt_ratio, fmt_time, timed_against_hand, write_report  # noqa: E402


def _jax_versions():
    """The tasks in ``jax.numpy`` (the same source, ``np`` bound to it; the ODE in ``lax.fori_loop``)."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    from grad import jax_versions

    namespace = dict(vars(tasks), np=jnp)
    same = {name: types.FunctionType(getattr(tasks, name).__code__, namespace, name)
            for name in ("logistic_loss", "layer", "rosenbrock")}
    namespace.update(same)
    return jax, same, jax_versions.ode_loss


def _autograd_versions():
    """The tasks in ``autograd.numpy`` (the same source; the ODE as ``grad.ode_loss_eager``, which autograd records
    step by step)."""
    import autograd
    import autograd.numpy as anp
    from grad import ode_loss_eager

    namespace = dict(vars(tasks), np=anp)
    same = {name: types.FunctionType(getattr(tasks, name).__code__, namespace, name)
            for name in ("logistic_loss", "layer", "rosenbrock")}
    namespace.update(same)
    return autograd, same, ode_loss_eager


def _columns():
    """task -> (description, {column: (callable, args)}, hand-written result's key)."""
    import numbax

    jax, jx, jax_ode = _jax_versions()
    autograd, ag, ag_ode = _autograd_versions()
    float0 = np.zeros((), jax.dtypes.float0)
    p, u0, dt, n = tasks.ode_args()
    tp = tasks.ode_direction()
    zeros_u0 = np.zeros(2)
    x_log, a_log, y_log = tasks.logistic_args()
    x_layer, w_layer, b_layer = tasks.layer_args()
    x_rosen, = tasks.rosenbrock_args()
    v_rosen = tasks.rosenbrock_direction()

    numbax_hessian = numbax.hessian(tasks.logistic_loss)
    numbax_jacrev = numbax.jacrev(tasks.layer)
    numbax_grad = numbax.grad(tasks.rosenbrock)
    numbax_hvp = numbax.jit(lambda x, v: numbax.jvp(numbax_grad, (x,), (v,))[1])
    jax_jvp = jax.jit(lambda p, tp: jax.jvp(lambda q: jax_ode(q, u0, dt, n), (p,), (tp,)))
    jax_hessian = jax.jit(jax.hessian(jx["logistic_loss"]))
    jax_jacrev = jax.jit(jax.jacrev(jx["layer"]))
    jax_hvp = jax.jit(lambda x, v: jax.jvp(jax.grad(jx["rosenbrock"]), (x,), (v,))[1])
    jax_grad = jax.jit(jax.grad(jx["rosenbrock"]))
    ag_jvp = autograd.make_jvp(lambda q: ag_ode(q, u0, dt, n))
    ag_hessian = autograd.hessian(ag["logistic_loss"])
    ag_jacobian = autograd.jacobian(ag["layer"])
    ag_hvp = autograd.hessian_tensor_product(ag["rosenbrock"])
    return {
        "jvp of the ODE loss (2000 steps)": {
            "numbax": (lambda: numbax.jvp(tasks.ode_loss, (p, u0, dt, n), (tp, zeros_u0, 0.0, float0))[1], ()),
            "jax": (lambda: float(jax_jvp(p, tp)[1]), ()),
            "hand": (lambda: hand_numba.ode_loss_jvp(p, u0, dt, n, tp)[1], ()),
            "autograd": (lambda: ag_jvp(p)(tp)[1], ()),
        },
        "hessian of a 20-dim logistic loss": {
            "numbax": (lambda: numbax_hessian(x_log, a_log, y_log), ()),
            "jax": (lambda: np.asarray(jax_hessian(x_log, a_log, y_log)), ()),
            "hand": (lambda: hand_numba.logistic_hessian(x_log, a_log, y_log), ()),
            "autograd": (lambda: ag_hessian(x_log, a_log, y_log), ()),
        },
        "jacrev of an MLP layer, batch 128": {
            "numbax": (lambda: numbax_jacrev(x_layer, w_layer, b_layer), ()),
            "jax": (lambda: np.asarray(jax_jacrev(x_layer, w_layer, b_layer)), ()),
            "hand": (lambda: hand_numba.layer_jacobian(x_layer, w_layer, b_layer), ()),
            "autograd": (lambda: ag_jacobian(x_layer, w_layer, b_layer), ()),
        },
        "Rosenbrock HVP, n = 1000 (forward over reverse)": {
            "numbax": (lambda: numbax_hvp(x_rosen, v_rosen), ()),
            "jax": (lambda: np.asarray(jax_hvp(x_rosen, v_rosen)), ()),
            "hand": (lambda: hand_numba.rosenbrock_hvp(x_rosen, v_rosen), ()),
            "autograd": (lambda: ag_hvp(x_rosen, v_rosen), ()),
            "numbax.grad alone": (lambda: numbax_grad(x_rosen), ()),
            "jax.grad alone": (lambda: np.asarray(jax_grad(x_rosen)), ()),
        },
    }


def main(argv=None) -> int:
    """Run every task's columns, check them against the hand-written result, print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--output", default=os.path.join(HERE, "jacobian_results.md"))
    ns = parser.parse_args(argv)
    repeat = 3 if ns.quick else 7
    rows = []
    for task, columns in _columns().items():
        times = timed_against_hand(task, columns, repeat)
        extra = ""
        if "numbax.grad alone" in times:
            extra = (f"HVP / grad: numbax {fmt_ratio(times['numbax'], times['numbax.grad alone'])}, "
                     f"jax {fmt_ratio(times['jax'], times['jax.grad alone'])}")
        rows.append([task, fmt_time(times["numbax"]), fmt_time(times["jax"]), fmt_time(times["hand"]),
                     fmt_time(times["autograd"]), fmt_ratio(times["numbax"], times["jax"]),
                     fmt_ratio(times["numbax"], times["hand"]), extra])
    write_report("numbax forward mode and Jacobians against jax.jit, hand-written Numba and autograd",
                 ["task", "numbax", "jax.jit", "hand Numba", "autograd", "numbax / jax", "numbax / hand", "notes"],
                 rows, ns.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
