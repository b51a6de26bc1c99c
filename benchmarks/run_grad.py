"""numbax's reverse mode, side by side with hand-written Numba, JAX, autograd and torch, in one run.

Six gradients (``benchmarks/grad_tasks.py``, plain NumPy that numbax reads), float64 on the CPU:
an MLP [10, 20, 1] and one [784, 256, 10] over a list of ``(w, b)`` tuples, Rosenbrock (n = 1000),
a 2000-step ODE in a Python ``for`` loop, Newton's method in a ``while`` loop, and softmax cross-entropy.

Columns: ``numbax.jit`` of the primal, ``numbax.grad`` ("n/a (not built yet)" until it exists), the
gradient derived by hand for ``numba.njit`` (the measure of the limit, ``benchmarks/grad/hand_numba.py``),
``jax.jit(jax.grad(f))`` (``jax.jacfwd`` for Newton's ``while_loop``, which JAX cannot reverse), autograd's
``grad`` and ``torch.func.grad``. Measured:

1. time per gradient, compiled code warm: best of several repeats of ``timeit`` autorange;
2. first call (transformation + compilation + one run) in a fresh process with empty cache directories;
3. warm start: the first call in a new process whose cache an earlier process filled;
4. the peak memory of the tape of a 10^6-step loop (the ODE run for 10^6 steps), in a fresh process.

Before anything is timed, the hand-written gradients are checked against central finite differences and
``jax.grad``, and every column's gradient against the hand-written one: a column that disagrees reads
MISMATCH instead of a time. Timings are reported, never asserted. Output is Markdown, on stdout and in
``benchmarks/grad_results.md``.

Every library computes on one thread unless ``--threads`` says otherwise (0: each library's own choice): on
the project's busy 2-core machines, multi-threaded BLAS and torch swung by 10 to 100 times from run to run.

Usage: ``python benchmarks/run_grad.py [--quick] [--steady] [--threads N] [--output PATH] [--tasks NAME,...]``
(``--steady``: the time per gradient alone, for a quick look while tuning).
The script re-runs itself with ``--child ...`` for the subprocess measurements.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import traceback
import warnings
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import grad_tasks  # noqa: E402
from run import (best_per_call, bytecode_as_installed, empty_but, environment, fmt_ratio, fmt_time,  # noqa: E402
                 fresh_dir, table, verdict)

SYSTEMS = ("numbax_jit", "numbax_grad", "hand", "jax", "autograd", "torch")
PEERS = ("jax", "autograd", "torch")
LABELS = {"numbax_jit": "numbax.jit (primal)", "numbax_grad": "numbax.grad", "hand": "hand Numba",
          "jax": "jax.jit(jax.grad)", "autograd": "autograd.grad", "torch": "torch.func.grad"}
PACKAGE = {"jax": "jax", "autograd": "autograd", "torch": "torch"}
TARGETS = {"vs_primal": 3.0, "vs_peers": 1.0, "vs_hand": 1.5, "compile_extra_s": 0.5, "warm_s": 0.050}
NOT_BUILT = "n/a (not built yet)"
MISMATCH = "MISMATCH"
RESULT_TAG = "NUMBAX_GRAD_BENCH_RESULT "


# --------------------------------------------------------------------------
# The compiled versions of a task, one per system.


def unavailable(system: str):
    """Why ``system`` cannot be measured here, or None."""
    if system == "numbax_grad":
        try:
            import numbax
        except Exception as exc:  # numbax mid-edit: the other columns still count
            return f"error (numbax does not import: {type(exc).__name__})"
        return None if callable(getattr(numbax, "grad", None)) else NOT_BUILT
    if system in PACKAGE and importlib.util.find_spec(PACKAGE[system]) is None:
        return f"n/a ({PACKAGE[system]} not installed)"
    return None


def build(system: str, task, args=None, cache: bool = False):
    """``(callable, args, block)`` for ``task`` by ``system``; nothing is called yet.

    ``block`` waits for an asynchronous result (JAX) or is None.
    """
    args = task.args() if args is None else args
    if system == "numbax_jit":
        import numbax

        return numbax.jit(task.fn), args, None
    if system == "numbax_grad":
        import numbax

        return numbax.grad(task.fn, argnums=task.argnums), args, None
    if system == "hand":
        from grad import hand_numba

        return hand_numba.compiled(task.name, cache=cache), hand_numba.args(args), None
    if system == "jax":
        import jax

        from grad import jax_versions

        return jax_versions.gradient(task), jax_versions.args(task, args), jax.block_until_ready
    if system == "autograd":
        from grad import autograd_versions

        return autograd_versions.gradient(task), autograd_versions.args(task, args), None
    if system == "torch":
        from grad import torch_versions

        return torch_versions.gradient(task), torch_versions.args(task, args), None
    raise ValueError(system)


def call(fn, args, block):
    out = fn(*args)
    return out if block is None else block(out)


def tree_leaves(tree) -> list:
    """The leaves of nested lists and tuples (the only containers these tasks use)."""
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in tree_leaves(item)]
    return [tree]


def tree_rebuild(tree, new_leaves):
    """``tree`` with its leaves replaced, in order, from the iterator ``new_leaves``."""
    if isinstance(tree, (list, tuple)):
        return type(tree)(tree_rebuild(item, new_leaves) for item in tree)
    return next(new_leaves)


def leaves(tree) -> list:
    """The leaves of a gradient as NumPy arrays, whatever system computed it."""
    return [np.asarray(leaf) for leaf in tree_leaves(tree)]


def agrees(got, want) -> bool:
    """``allclose`` leaf by leaf, with an absolute tolerance relative to the gradient's largest entry."""
    if len(got) != len(want):
        return False
    scale = max((float(np.max(np.abs(w))) for w in want if w.size), default=1.0) or 1.0
    return all(np.shape(g) == np.shape(w) and np.allclose(g, w, rtol=1e-7, atol=1e-10 * scale)
               for g, w in zip(got, want))


# --------------------------------------------------------------------------
# The child processes: imports, then the first and second call, or the memory of a long loop.


IMPORTS = {  # what each column's child process imports, timed under each package's name
    "numbax_jit": {"numba": "numba", "numbax": "numbax"}, "numbax_grad": {"numba": "numba", "numbax": "numbax"},
    "hand": {"numba": "numba"}, "jax": {"jax": "grad.jax_versions"}, "autograd": {"autograd": "grad.autograd_versions"},
    "torch": {"torch": "grad.torch_versions"},
}


def timed_imports(system: str, result: dict) -> None:
    """Import each package of ``system``'s column, timed; numbax's import includes its transformations' modules,
    which ``import numbax`` defers to the first use of ``numbax.grad`` (as ``run.py``'s child makes the
    ``numbax.jit`` it calls before timing the first call)."""
    for package, module in IMPORTS[system].items():
        t0 = time.perf_counter()
        imported = importlib.import_module(module)
        if package == "numbax":
            imported.grad  # noqa: B018 - the compiler's modules, imported on first use
        result[f"import_{package}_s"] = time.perf_counter() - t0


def child(system: str, task_name: str, cache: bool) -> dict:
    perf = time.perf_counter
    result = {"system": system, "task": task_name}
    timed_imports(system, result)
    task = grad_tasks.TASKS_BY_NAME[task_name]
    args = task.args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = perf()
        fn, cargs, block = build(system, task, args, cache=cache)
        call(fn, cargs, block)
        result["first_call_s"] = perf() - t0  # transformation + compilation + one run
        t0 = perf()
        call(fn, cargs, block)
        result["second_call_s"] = perf() - t0
    return result


def _proc_status(field: str) -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def memory_child(system: str) -> dict:
    """Peak memory above the resident set of one gradient of the ODE run for ``LONG_STEPS`` steps.

    A first call compiles; then the peak RSS is reset (``/proc/self/clear_refs``) and a second call is
    measured. glibc's dynamic mmap threshold is fixed by the parent (MALLOC_MMAP_THRESHOLD_), so that the
    tape of the second call is fresh memory and not the first call's, kept by malloc.
    """
    task = grad_tasks.TASKS_BY_NAME["ode"]
    args = list(task.args())
    args[3] = grad_tasks.LONG_STEPS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn, cargs, block = build(system, task, tuple(args))
        call(fn, cargs, block)
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # resets VmHWM to the current RSS
        baseline = _proc_status("VmRSS")
        t0 = time.perf_counter()
        out = call(fn, cargs, block)
        elapsed = time.perf_counter() - t0
        peak = _proc_status("VmHWM")
    return {"system": system, "steps": grad_tasks.LONG_STEPS, "peak_extra_bytes": peak - baseline,
            "call_s": elapsed, "leaves": [leaf.tolist() for leaf in leaves(out)]}


def run_child(argv: list, cache_dir: str, extra_env=None) -> dict:
    """Run this script with ``argv`` in a new interpreter whose cache directories are under ``cache_dir``."""
    env = dict(os.environ)
    env.update(NUMBAX_CACHE_DIR=os.path.join(cache_dir, "numbax"), NUMBA_CACHE_DIR=os.path.join(cache_dir, "numba"),
               PYTHONDONTWRITEBYTECODE="1", **(extra_env or {}))
    env.pop("NUMBA_DISABLE_JIT", None)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), *argv], env=env, capture_output=True,
                          text=True, cwd=ROOT, timeout=900)
    wall = time.perf_counter() - t0
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_TAG):
            result = json.loads(line[len(RESULT_TAG):])
            result["process_wall_s"] = wall
            return result
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
    raise RuntimeError(f"`{' '.join(argv)}` subprocess failed: {tail[0]}")


# --------------------------------------------------------------------------
# Measurements in the parent process.


class Report:
    """Values (numbers or dicts), or a string that stands in the table instead (n/a, MISMATCH, error)."""

    def __init__(self):
        self.values = {}
        self.notes = []

    def measure(self, key, thunk):
        try:
            self.values[key] = thunk()
        except Exception as exc:  # a benchmark reports failures, it does not stop at them
            self.values[key] = "error"
            self.notes.append(f"`{'/'.join(map(str, key))}`: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
                              if str(exc) else f"`{'/'.join(map(str, key))}`: {type(exc).__name__}")
            if os.environ.get("NUMBAX_BENCH_DEBUG"):
                traceback.print_exc()
        return self.values[key]

    def get(self, *key):
        return self.values.get(key)

    def number(self, *key, field=None):
        """The value as a number, or None where it is missing or stands for a failure."""
        value = self.values.get(key)
        if isinstance(value, dict):
            value = value.get(field)
        return value if isinstance(value, (int, float)) else None


def differentiable(task, args) -> tuple:
    """The arguments that ``task.argnums`` names, as a tuple."""
    argnums = task.argnums if isinstance(task.argnums, tuple) else (task.argnums,)
    return tuple(args[i] for i in argnums)


def with_differentiable(task, args, new_leaves) -> tuple:
    """``args`` with the differentiated arguments' leaves replaced by ``new_leaves``."""
    argnums = task.argnums if isinstance(task.argnums, tuple) else (task.argnums,)
    replaced = dict(zip(argnums, tree_rebuild(differentiable(task, args), iter(new_leaves))))
    return tuple(replaced.get(i, a) for i, a in enumerate(args))


def finite_difference_error(task, grad, directions: int = 3, h: float = 1e-5) -> float:
    """Largest error of <grad, v> against a central difference of the NumPy primal along unit vectors v
    (the gradient's own direction, then random ones), relative to the gradient's norm."""
    args = task.args()
    flat = tree_leaves(differentiable(task, args))
    norm_g = np.sqrt(sum(float(np.sum(g * g)) for g in grad))
    rng = np.random.default_rng(1)
    worst = 0.0
    for k in range(directions):
        v = list(grad) if k == 0 else [rng.normal(size=np.shape(x)) for x in flat]
        norm = np.sqrt(sum(float(np.sum(d * d)) for d in v))
        v = [d / norm for d in v]

        def shifted(sign):
            new = [x + sign * h * d if np.ndim(x) else float(x + sign * h * d) for x, d in zip(flat, v)]
            return task.fn(*with_differentiable(task, args, new))

        fd = (shifted(1.0) - shifted(-1.0)) / (2.0 * h)
        exact = sum(float(np.sum(g * d)) for g, d in zip(grad, v))
        worst = max(worst, abs(fd - exact) / max(norm_g, 1e-300))
    return worst


def max_relative_difference(got, want) -> float:
    scale = max(float(np.max(np.abs(w))) for w in want) or 1.0
    return max(float(np.max(np.abs(g - w))) for g, w in zip(got, want)) / scale


def verify(report: Report, tasks) -> dict:
    """The hand-written gradients, checked against finite differences and JAX; returns them by task."""
    reference = {}
    for task in tasks:
        fn, args, block = build("hand", task)
        grad = leaves(call(fn, args, block))
        reference[task.name] = grad
        report.measure(("verify_fd", task.name), lambda task=task, grad=grad: finite_difference_error(task, grad))
        if unavailable("jax") is None:
            def against_jax(task=task, grad=grad):
                jfn, jargs, jblock = build("jax", task)
                return max_relative_difference(leaves(call(jfn, jargs, jblock)), grad)

            report.measure(("verify_jax", task.name), against_jax)
    return reference


def measure_grid(report: Report, kind: str, tasks, systems, thunk) -> None:
    """``report[kind, task, system] = thunk(task, system)`` for each pair, or why the system is unavailable."""
    for task in tasks:
        for system in systems:
            key = (kind, task.name, system)
            reason = unavailable(system)
            if reason:
                report.values[key] = reason
                continue
            print(f"  {task.name} / {system}", file=sys.stderr, flush=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                report.measure(key, lambda: thunk(task, system))


def per_gradient(report: Report, tasks, reference: dict, repeat: int) -> None:
    def thunk(task, system):
        fn, args, block = build(system, task)
        out = call(fn, args, block)
        if system == "numbax_jit":
            ok = np.allclose(out, task.fn(*task.args()), rtol=1e-9)
        else:
            ok = agrees(leaves(out), reference[task.name])
        return best_per_call(fn, args, block, repeat) if ok else MISMATCH

    measure_grid(report, "per_grad", tasks, SYSTEMS, thunk)


def in_fresh_dirs(argv, repeats, cache_first=False, extra_env=None, runtime_kept=False) -> list:
    """Run a child ``repeats`` times, each in new empty cache directories (or, with ``cache_first``, all in one
    directory that a first, extra run fills; with ``runtime_kept``, each in new directories holding only the
    numbax runtime's helpers that an earlier run compiled, as a machine keeps them for every later program)."""
    runs = []
    cache_dir = fresh_dir()
    try:
        if cache_first:
            runs.append(run_child(argv, cache_dir, extra_env))
        for _ in range(repeats):
            if not cache_first:
                shutil.rmtree(cache_dir, ignore_errors=True)
                cache_dir = fresh_dir()
            if runtime_kept:  # numbax's runtime helpers alone: no generated code, no Numba cache of it
                run_child(argv, cache_dir, extra_env)
                empty_but(os.path.join(cache_dir, "numbax"), "runtime")
                shutil.rmtree(os.path.join(cache_dir, "numba"), ignore_errors=True)
            runs.append(run_child(argv, cache_dir, extra_env))
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    return runs


def first_calls(report: Report, tasks, repeats: int) -> None:
    def thunk(task, system):
        return min(in_fresh_dirs(["--child", system, task.name], repeats), key=lambda r: r["first_call_s"])

    measure_grid(report, "first", tasks, SYSTEMS, thunk)


def first_calls_runtime_kept(report: Report, tasks, repeats: int) -> None:
    """numbax's first calls in fresh processes whose cache holds the runtime's helpers alone (compiled once per
    machine, shared by every program), nothing of the task's own code."""
    def thunk(task, system):
        runs = in_fresh_dirs(["--child", system, task.name], repeats, runtime_kept=True)
        return min(runs, key=lambda r: r["first_call_s"])

    measure_grid(report, "first_runtime", tasks, ("numbax_grad",), thunk)


def script_start(result) -> Optional[float]:
    """What a script waits for before its first result: its imports and the first call."""
    if not isinstance(result, dict):
        return None
    return result["first_call_s"] + sum(v for k, v in result.items() if k.startswith("import_"))


WARM_SYSTEMS = ("numbax_grad", "numbax_jit", "hand")


def warm_starts(report: Report, tasks, repeats: int) -> None:
    def thunk(task, system):
        cold, *warm = in_fresh_dirs(["--child", system, task.name, "--cache"], repeats, cache_first=True)
        best = min(warm, key=lambda r: r["first_call_s"])
        best["cold_first_call_s"] = cold["first_call_s"]
        return best

    measure_grid(report, "warm", tasks, WARM_SYSTEMS, thunk)


MEMORY_SYSTEMS = ("numbax_grad", "hand", "jax", "numbax_jit")


def memory(report: Report) -> None:
    """The ODE's gradient over LONG_STEPS steps, each system in a fresh process (results under ``("memory", "ode",
    system)``); the gradients are compared with the hand-written one's."""
    env = {"MALLOC_MMAP_THRESHOLD_": "131072"}
    measure_grid(report, "memory", [grad_tasks.TASKS_BY_NAME["ode"]], MEMORY_SYSTEMS,
                 lambda task, system: in_fresh_dirs(["--memory", system], 1, extra_env=env)[0])
    hand = report.get("memory", "ode", "hand")
    for system in ("numbax_grad", "jax"):
        res = report.get("memory", "ode", system)
        if isinstance(res, dict) and isinstance(hand, dict) and not agrees(
                [np.asarray(v) for v in res["leaves"]], [np.asarray(v) for v in hand["leaves"]]):
            report.values[("memory", "ode", system)] = MISMATCH


# --------------------------------------------------------------------------
# Formatting.


def fmt(value, field=None) -> str:
    if isinstance(value, dict):
        value = value.get(field)
    if isinstance(value, str):
        return value
    return fmt_time(value)


def best_peer(report: Report, task_name: str):
    """The fastest of JAX, autograd and torch per gradient on a task, and its time."""
    times = {p: report.number("per_grad", task_name, p) for p in PEERS}
    times = {p: t for p, t in times.items() if t is not None}
    if not times:
        return None, None
    name = min(times, key=times.get)
    return name, times[name]


def line_count(task) -> int:
    import inspect

    return sum(len(inspect.getsource(f).strip().splitlines()) for f in (task.fn,) + task.helpers)


def versions() -> str:
    from importlib.metadata import version

    out = []
    for name in ("autograd", "torch"):
        try:
            out.append(f"{name} {version(name)}")
        except Exception:
            out.append(f"{name} not installed")
    threads = []
    try:
        import torch

        threads.append(f"torch {torch.get_num_threads()} threads")
    except Exception:
        pass
    settings = ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "XLA_FLAGS")
    blas = ", ".join(f"{k}={os.environ[k]}" for k in settings if k in os.environ)
    return ", ".join(out + threads + blas_kernels() + ([blas] if blas else []) + pinned())


def blas_kernels() -> list:
    """Which OpenBLAS kernel each loaded BLAS runs (threadpoolctl), e.g. 'OpenBLAS kernel SkylakeX'."""
    try:
        import scipy.linalg  # noqa: F401  (loads SciPy's OpenBLAS beside NumPy's)
        import threadpoolctl
    except ImportError:
        return ["BLAS kernel unknown (threadpoolctl not installed)"]
    kernels = sorted({f"{info['internal_api']} kernel {info.get('architecture')}"
                      for info in threadpoolctl.threadpool_info() if info.get("user_api") == "blas"})
    return kernels


def pinned() -> list:
    """The CPUs the process may run on, when fewer than the machine has."""
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if allowed is None or len(allowed) == os.cpu_count():
        return []
    return [f"pinned to CPU {','.join(map(str, sorted(allowed)))}"]


def working_tree() -> str:
    """A sentence when numbax itself has uncommitted changes (the commit above is then not the whole story)."""
    try:
        changed = subprocess.run(["git", "status", "--porcelain", "--", "numbax"], cwd=ROOT, capture_output=True,
                                 text=True, timeout=10).stdout.strip()
    except Exception:
        return ""
    return f"numbax was measured from a working tree with uncommitted changes to {len(changed.splitlines())} " \
           "files under `numbax/`. " if changed else ""


def render(report: Report, tasks, args) -> str:
    g = report.get
    n = report.number
    load = ", ".join(f"{a:.1f}" for a in args.load + os.getloadavg()[:1])
    lines = [f"# numbax reverse-mode benchmarks\n\n{environment()}, {versions()}; load average (1 min) at the "
             f"start and the end: {load}.\n",
             f"`python benchmarks/run_grad.py{' --quick' if args.quick else ''}"
             f"{f' --threads {args.threads}' if args.threads != 1 else ''}`; float64 on the CPU "
             f"(`JAX_PLATFORMS=cpu`, `jax_enable_x64`); best of {args.repeat} repeats of `timeit` autorange "
             f"in process, best of {args.proc_repeats} fresh processes for first calls and warm starts; "
             + (f"{args.threads} thread(s) for BLAS, XLA and torch. " if args.threads else
                "each library's own number of threads. ")
             + (f"\"{NOT_BUILT}\": `numbax.grad` does not exist yet; the column fills in by itself once it does. "
                if unavailable("numbax_grad") == NOT_BUILT else "")
             + f"{working_tree()}Reasons for errors are listed at the end.\n"]

    # Summary: the targets of issue 3.
    rows = []
    for task in tasks:
        grad_t = n("per_grad", task.name, "numbax_grad")
        primal_t = n("per_grad", task.name, "numbax_jit")
        hand_t = n("per_grad", task.name, "hand")
        peer, peer_t = best_peer(report, task.name)
        # numbax's import counts: a Numba user's gradient needs only numba's.
        first_numbax = [n("first", task.name, "numbax_grad", field=f) for f in ("first_call_s", "import_numbax_s")]
        first_hand = n("first", task.name, "hand", field="first_call_s")
        extra = None if None in first_numbax or first_hand is None else sum(first_numbax) - first_hand
        warm = n("warm", task.name, "numbax_grad", field="first_call_s")

        def ratio(a, b, limit):
            text = fmt_ratio(a, b)
            return text if text == "n/a" else f"{text} ({verdict(a / b <= limit)})"

        rows.append([f"{task.title}", ratio(grad_t, primal_t, TARGETS["vs_primal"]),
                     ratio(grad_t, peer_t, TARGETS["vs_peers"]) + (f" vs {peer}" if peer and grad_t else ""),
                     ratio(grad_t, hand_t, TARGETS["vs_hand"]),
                     "n/a" if extra is None else f"{fmt_time(extra)} ({verdict(extra <= TARGETS['compile_extra_s'])})",
                     "n/a" if warm is None else f"{fmt_time(warm)} ({verdict(warm < TARGETS['warm_s'])})"])
    mem = g("memory", "ode", "numbax_grad")
    lines.append("## Summary: issue 3's targets\n")
    lines.append(table(["task", "numbax.grad / numbax.jit primal (≤ 3x)",
                        "numbax / best of JAX, autograd, torch (≤ 1x)", "numbax / hand Numba (≤ 1.5x)",
                        "numbax import + first call − hand Numba compile (≤ 0.5 s)", "numbax warm start (< 50 ms)"],
                       rows))
    lines.append(f"\nTape of a 10^6-step loop (the ODE, 10^6 steps), numbax.grad peak memory: "
                 f"{fmt_bytes(mem)}; hand-written preallocated tape: {fmt_bytes(g('memory', 'ode', 'hand'))}.\n")

    # Time per gradient.
    rows = []
    for task in tasks:
        peer, peer_t = best_peer(report, task.name)
        rows.append([f"`{task.name}`: {task.title}", *[fmt(g("per_grad", task.name, s)) for s in SYSTEMS],
                     f"{peer} ({fmt_time(peer_t)})" if peer else "n/a"])
    lines.append("## Time per gradient (compiled code warm, inputs ready)\n")
    lines.append(table(["task", *[LABELS[s] for s in SYSTEMS], "fastest peer"], rows))
    lines.append(
        "\nThe primal column is the loss alone, compiled by `numbax.jit` from the same source as `numbax.grad`. "
        "\"hand Numba\": the gradient derived by hand and written for `numba.njit` (`benchmarks/grad/hand_numba.py`; "
        "BLAS for the MLPs' matrix products, loops elsewhere, a preallocated tape and an adjoint sweep for the ODE, "
        "the implicit-function derivative at the converged root for Newton). JAX: `jax.jit(jax.grad(f))` with "
        "`lax.fori_loop` for the ODE (trip count static) and, for Newton, **forward mode** "
        "`jax.jit(jax.jacfwd(f))` over `lax.while_loop`, which JAX cannot reverse-differentiate; the times include "
        "`block_until_ready`, with inputs already on the device. autograd and torch run their Python loops "
        "op by op (torch: CPU float64 tensors, `torch.func.grad`, `F.cross_entropy` for softmax). Every column's "
        "gradient was compared with the hand-written one first (`allclose`, rtol 1e-7); MISMATCH marks one that "
        "disagreed.\n")

    # First call.
    rows = []
    for task in tasks:
        rows.append([f"`{task.name}` ({line_count(task)} lines)",
                     *[fmt(g("first", task.name, s), "first_call_s") for s in SYSTEMS]])
    lines.append("## First call in a fresh process, empty cache directories (transformation + compilation + one run)\n")
    lines.append(table(["task", *[LABELS[s] for s in SYSTEMS]], rows))
    imports = {}
    for s in SYSTEMS:
        res = next((g("first", t.name, s) for t in tasks if isinstance(g("first", t.name, s), dict)), None)
        if res:
            imports.update({k[len("import_"):-2]: v for k, v in res.items() if k.startswith("import_")})
    lines.append("\nImports, not included above: " + ", ".join(f"{k} {fmt_time(v)}" for k, v in imports.items())
                 + ". numbax's includes its compiler, which `import numbax` defers to the first use of `numbax.grad`. "
                 "A numbax user pays numbax's import on top of numba's, so the summary adds it to numbax's first "
                 "call; numbax is imported from bytecode, as an installed package is. numbax compiles with `cache=True`, so its columns include writing the cache; the hand-written "
                 "Numba gradient compiles without a cache. autograd and torch compile nothing: theirs is the first "
                 "run, including any set-up on first use.\n")

    # Cold start as a script pays it.
    rows = []
    for task in tasks:
        jax_start = script_start(g("first", task.name, "jax"))
        starts = [script_start(g(kind, task.name, "numbax_grad")) for kind in ("first", "first_runtime")]
        hand_first = n("first", task.name, "hand", field="first_call_s")
        jax_first = n("first", task.name, "jax", field="first_call_s")
        rows.append([f"`{task.name}`", *[fmt_time(t) if t else "n/a" for t in (*starts, jax_start)],
                     *[fmt_ratio(t, jax_start) for t in starts], fmt_ratio(hand_first, jax_first)])
    lines.append("## Cold start as a script pays it: imports and the first call, numbax against JAX\n")
    lines.append(table(["task", "numbax.grad, empty caches", "numbax.grad, runtime compiled before",
                        "jax.jit(jax.grad)", "numbax / JAX, empty", "numbax / JAX, runtime compiled (≤ 2x)",
                        "first call alone: hand Numba / JAX"], rows))
    lines.append("\nA fresh process's imports (numba and numbax, or JAX) and its first call, best of the fresh "
                 "processes. \"Runtime compiled before\": the cache directory holds numbax's runtime helpers, which "
                 "a machine compiles once for every program (an earlier process of this task filled it; its "
                 "generated code and Numba's cache of it were deleted). The last column is the floor of any "
                 "Numba-compiled gradient: the first call of the hand-written Numba gradient, imports excluded, "
                 "over JAX's.\n")

    # Warm start.
    rows = []
    for task in tasks:
        row = [f"`{task.name}`"]
        for s in WARM_SYSTEMS:
            res = g("warm", task.name, s)
            row.append(fmt(res, "first_call_s") if not isinstance(res, dict) else
                       f"{fmt_time(res['first_call_s'])} (empty: {fmt_time(res['cold_first_call_s'])})")
        rows.append(row)
    lines.append("## Warm start: first call in a new process, cache filled by an earlier process\n")
    lines.append(table(["task", "numbax.grad (target < 50 ms)", "numbax.jit primal", "hand Numba, `njit(cache=True)`"],
                       rows))
    lines.append("\nIn parentheses: the first call of the process that filled the cache. Imports are not included.\n")

    # Memory.
    rows = []
    for s in MEMORY_SYSTEMS:
        res = g("memory", "ode", s)
        per_step = res["peak_extra_bytes"] / res["steps"] if isinstance(res, dict) else None
        rows.append([LABELS[s], fmt_bytes(res), "n/a" if per_step is None else f"{per_step:.1f} B",
                     fmt(res, "call_s")])
    lines.append(f"## Memory: one gradient of the ODE run for {grad_tasks.LONG_STEPS:,} steps, in a fresh process\n")
    lines.append(table(["system", "peak memory above the resident set", "per step", "time of that gradient"], rows))
    lines.append("\nPeak resident set during the call (`VmHWM`, reset through `/proc/self/clear_refs` after a first, "
                 "compiling call) minus the resident set before it; glibc's mmap threshold is fixed so that large "
                 "blocks are fresh pages. The hand-written gradient keeps the two state values of each step "
                 "(16 B/step); the primal keeps nothing. JAX reverses `lax.fori_loop` as a `scan`. autograd and "
                 "torch are not measured here: their op-by-op tapes of 10^6 steps take minutes.\n")

    # Verification.
    rows = []
    for task in tasks:
        fd, jx = g("verify_fd", task.name), g("verify_jax", task.name)
        ok_fd = isinstance(fd, float) and fd < 1e-6
        ok_jax = isinstance(jx, float) and jx < 1e-9
        rows.append([f"`{task.name}`", fmt_sci(fd), fmt_sci(jx), "yes" if ok_fd and ok_jax else "**no**"])
    lines.append("## Checks of the hand-written gradients\n")
    lines.append(table(["task", "vs central differences (worst error / gradient norm)",
                        "vs JAX (largest difference / largest entry)", "agree"], rows))
    lines.append("\nCentral differences of the NumPy primal (h = 1e-5) along three unit directions: the gradient's "
                 "own and two random ones. Agreement: below 1e-6 and 1e-9.")
    lines.append("\nNewton's hand-written derivative is the implicit-function one at the root; JAX's is the forward-"
                 "mode derivative of the iterations, which converges with them.\n")

    if report.notes:
        lines.append("## Notes\n")
        lines.extend(f"- {note}" for note in report.notes)
        lines.append("")
    return "\n".join(lines)


def fmt_bytes(res) -> str:
    if isinstance(res, str):
        return res
    if not isinstance(res, dict):
        return "n/a"
    return f"{res['peak_extra_bytes'] / 2 ** 20:.1f} MiB"


def fmt_sci(value) -> str:
    return f"{value:.1e}" if isinstance(value, float) else fmt(value)


def thread_env(n: int) -> dict:
    """Settings for n threads in every library; the machine's OpenBLAS overrides are left out (see ``restart``)."""
    return {"OPENBLAS_NUM_THREADS": str(n), "OMP_NUM_THREADS": str(n), "MKL_NUM_THREADS": str(n),
            "NUMBA_NUM_THREADS": str(n),
            "XLA_FLAGS": f"--xla_cpu_multi_thread_eigen={'false' if n == 1 else 'true'} "
                         f"intra_op_parallelism_threads={n}"}


def restart(threads: int) -> None:
    """Run this script again with ``threads`` threads everywhere; the children inherit the settings.

    The libraries read their settings when they load, hence the new process. XLA's flags did not hold it to
    one thread (its matrix products ran on both cores), so one thread is also enforced by pinning the
    process to one CPU. Some machines set OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for older OpenBLAS builds;
    they make a current one run slower kernels than the processor has, so they are left out here (both
    together) and the header names the kernel that ran.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env.update(NUMBAX_BENCH_THREADS=str(threads), **thread_env(threads))
    if threads == 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a rough run in a few minutes)")
    parser.add_argument("--output", default=os.path.join(HERE, "grad_results.md"), help="where to write the Markdown")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for BLAS, OpenMP, XLA and torch in every column (default 1; 0: each library's "
                             "own choice, which on a busy 2-core machine made multi-threaded BLAS and torch 10 to 100 "
                             "times slower from one run to the next)")
    parser.add_argument("--tasks", default=",".join(t.name for t in grad_tasks.TASKS),
                        help="comma-separated task names (default: all)")
    parser.add_argument("--steady", action="store_true",
                        help="time per gradient only (no fresh processes, warm starts or memory)")
    parser.add_argument("--child", nargs=2, metavar=("SYSTEM", "TASK"), help=argparse.SUPPRESS)
    parser.add_argument("--memory", metavar="SYSTEM", help=argparse.SUPPRESS)
    parser.add_argument("--cache", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        print(RESULT_TAG + json.dumps(child(*args.child, cache=args.cache)), flush=True)
        return 0
    if args.memory:
        print(RESULT_TAG + json.dumps(memory_child(args.memory)), flush=True)
        return 0

    if args.threads and os.environ.get("NUMBAX_BENCH_THREADS") != str(args.threads):
        restart(args.threads)

    args.repeat = 3 if args.quick else 7
    args.proc_repeats = 1 if args.quick else 3
    tasks = [grad_tasks.TASKS_BY_NAME[name] for name in args.tasks.split(",")]
    bytecode_as_installed()
    # The in-process measurements compile into a scratch cache, not the user's.
    scratch = fresh_dir()
    os.environ["NUMBAX_CACHE_DIR"] = os.path.join(scratch, "numbax")
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(scratch, "numba")
    report = Report()
    started = time.perf_counter()
    args.load = os.getloadavg()[:1]  # other work on the machine makes every column slower, unevenly
    reference = {}
    steps = (("hand-written gradients against finite differences and JAX",
              lambda: reference.update(verify(report, tasks))),
             ("time per gradient", lambda: per_gradient(report, tasks, reference, args.repeat)),
             ("first calls (fresh processes)", lambda: first_calls(report, tasks, args.proc_repeats)),
             ("first calls with the runtime compiled (fresh processes)",
              lambda: first_calls_runtime_kept(report, tasks, args.proc_repeats)),
             ("warm starts (new processes)", lambda: warm_starts(report, tasks, args.proc_repeats)),
             (f"memory of a {grad_tasks.LONG_STEPS:,}-step tape (fresh processes)", lambda: memory(report)))
    if args.steady:
        steps = steps[:2]
    for name, step in steps:
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            step()
    shutil.rmtree(scratch, ignore_errors=True)
    text = render(report, tasks, args)
    text += f"\n_Measured in {time.perf_counter() - started:.0f} s._\n"
    print(text)
    with open(args.output, "w") as handle:
        handle.write(text)
    print(f"written to {os.path.relpath(args.output)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
