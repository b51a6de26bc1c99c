"""numbax benchmarks, side by side with plain Numba and JAX, in one run (``make bench``).

Measures, and prints as Markdown (also written to ``benchmarks/results.md``):

1. per-call overhead of ``numbax.jit`` vs a hand-written ``numba.njit`` of the
   same function on 10-element float64 inputs (target <= 1.2x), with
   ``jax.jit`` for reference;
2. first-call compile time, each in a fresh subprocess with empty temporary
   cache directories (target <= 1.3x plain Numba), with ``jax.jit``;
3. warm start from the disk cache in a new process for a ~30-line function
   (target < 50 ms), import times reported separately;
4. the time numbax's own passes take (``numbax.generated_source.source_for``) for a
   ~50-line function (target < 20 ms).

Timings are never asserted; they are reported. ``--quick`` takes fewer repeats.
A column whose system is missing (jax not installed) or whose measurement fails
reads "n/a" or "error", and the reason is listed under the tables.

Usage: ``python benchmarks/run.py [--quick] [--output PATH]``.
The script re-runs itself with ``--child ...`` for the subprocess measurements.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import timeit
import traceback
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
# Every column runs on the CPU, the only backend numbax has today.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

PROGRAMS = ("dot_plus_one", "rk4_pendulum", "mlp_classifier_loss")
HELPERS = {  # the user functions each program calls, for the line counts
    "dot_plus_one": (),
    "rk4_pendulum": ("pendulum_rhs",),
    "mlp_classifier_loss": ("relu", "dense", "standardize", "clip", "row_logsumexp", "row_argmax"),
}
SYSTEMS = ("numbax", "numba", "jax")
TARGETS = {"per_call": 1.2, "compile": 1.3, "warm_ms": 50.0, "passes_ms": 20.0}
RESULT_TAG = "NUMBAX_BENCH_RESULT "


# --------------------------------------------------------------------------
# The compiled versions of a program, one per system.


def have_jax() -> bool:
    return importlib.util.find_spec("jax") is not None


def numba_version(fn, cache=False, _memo=None):
    """``numba.njit`` of ``fn``, with the helpers it calls from its own module jitted the same way.

    This is what a Numba user writes by hand: ``@njit`` on every function.
    """
    import numba

    memo = {} if _memo is None else _memo
    if fn in memo:
        return memo[fn]
    namespace = dict(fn.__globals__)
    for name in fn.__code__.co_names:
        value = namespace.get(name)
        if isinstance(value, types.FunctionType) and value.__module__ == fn.__module__:
            namespace[name] = numba_version(value, cache, memo)
    copy = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__module__, copy.__qualname__ = fn.__module__, fn.__qualname__
    memo[fn] = numba.njit(cache=cache)(copy)
    return memo[fn]


def numba_args(args):
    """Numba takes a pytree of parameters as a tuple of tuples (a list would be a reflected list)."""
    return tuple(tuple(a) if isinstance(a, list) else a for a in args)


def jax_args(args):
    import jax

    return jax.device_put(args)


def build(system: str, program: str, cache: bool = False):
    """``(callable, args, block)`` for ``program`` compiled by ``system``; nothing is called yet."""
    import programs

    fn = getattr(programs, program)
    args = getattr(programs, f"{program}_args")()
    if system == "numbax":
        import numbax

        return numbax.jit(fn), args, lambda out: out
    if system == "numba":
        return numba_version(fn, cache=cache), numba_args(args), lambda out: out
    if system == "jax":
        import jax

        import programs_jax

        if cache:
            _jax_persistent_cache(os.environ["NUMBA_CACHE_DIR"])
        return jax.jit(getattr(programs_jax, program)), jax_args(args), jax.block_until_ready
    raise ValueError(system)


def _jax_persistent_cache(path: str) -> None:
    import jax

    jax.config.update("jax_compilation_cache_dir", os.path.join(path, "jax"))
    for option, value in (("jax_persistent_cache_min_compile_time_secs", 0.0),
                          ("jax_persistent_cache_min_entry_size_bytes", 0)):
        try:
            jax.config.update(option, value)
        except Exception:  # older jax: option missing
            pass


# --------------------------------------------------------------------------
# The child process: imports, then the first and second call, timed inside itself.


def child(system: str, program: str, cache: bool) -> dict:
    perf = time.perf_counter
    result = {"system": system, "program": program}
    t0 = perf()
    import numpy  # noqa: F401

    result["import_numpy_s"] = perf() - t0
    if system in ("numbax", "numba"):
        t0 = perf()
        import numba  # noqa: F401

        result["import_numba_s"] = perf() - t0
    if system == "numbax":
        t0 = perf()
        import numbax  # noqa: F401

        result["import_numbax_s"] = perf() - t0
    if system == "jax":
        t0 = perf()
        import jax  # noqa: F401
        import jax.numpy  # noqa: F401

        result["import_jax_s"] = perf() - t0
    fn, args, block = build(system, program, cache=cache)
    if system in ("numbax", "numba"):
        from numba.core.runtime import rtsys

        # Whether Numba's runtime is up before the first call: then the imports did Numba work (compiling
        # or loading code) that a first call would otherwise pay for.
        result["numba_runtime_up_before_call"] = bool(getattr(rtsys, "_init", False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = perf()
        block(fn(*args))
        result["first_call_s"] = perf() - t0
        t0 = perf()
        block(fn(*args))
        result["second_call_s"] = perf() - t0
    return result


def run_child(system: str, program: str, cache_dir: str, cache: bool = False) -> dict:
    """Run ``child`` in a new interpreter whose cache directories are ``cache_dir``."""
    env = dict(os.environ)
    env.update(NUMBAX_CACHE_DIR=os.path.join(cache_dir, "numbax"), NUMBA_CACHE_DIR=os.path.join(cache_dir, "numba"),
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("NUMBA_DISABLE_JIT", None)
    command = [sys.executable, os.path.abspath(__file__), "--child", system, program] + (["--cache"] if cache else [])
    t0 = time.perf_counter()
    proc = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT, timeout=600)
    wall = time.perf_counter() - t0
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_TAG):
            result = json.loads(line[len(RESULT_TAG):])
            result["process_wall_s"] = wall
            return result
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
    raise RuntimeError(f"{system} {program} subprocess failed: {tail[0]}")


def fresh_dir() -> str:
    return tempfile.mkdtemp(prefix="numbax-bench-")


def empty_but(folder: str, keep: str) -> None:
    """Remove everything in ``folder`` but its entry ``keep`` (a cache emptied but for what a machine compiles
    once, numbax's ``runtime``)."""
    for entry in (os.path.join(folder, e) for e in os.listdir(folder) if e != keep):
        shutil.rmtree(entry) if os.path.isdir(entry) else os.remove(entry)


def bytecode_as_installed() -> None:
    """Byte-compile numbax's modules, as installing a package does: a child process (which writes no
    bytecode) then imports numbax as a user does, instead of compiling its source each time."""
    import compileall

    import numbax

    compileall.compile_dir(os.path.dirname(numbax.__file__), quiet=1)


# --------------------------------------------------------------------------
# Measurements in the parent process.


class Report:
    """Collects values and the reasons for the ones that are missing."""

    def __init__(self):
        self.values = {}
        self.notes = []

    def measure(self, key, thunk):
        try:
            self.values[key] = thunk()
        except Exception as exc:  # a benchmark reports failures, it does not stop at them
            self.values[key] = None
            self.notes.append(f"`{'/'.join(map(str, key))}`: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
            if os.environ.get("NUMBAX_BENCH_DEBUG"):
                traceback.print_exc()
        return self.values[key]

    def get(self, *key):
        return self.values.get(key)


def best_per_call(fn, args, block, repeat: int) -> float:
    """Best-of-``repeat`` seconds per call, each repeat timing many calls."""
    call = (lambda: fn(*args)) if block is None else (lambda: block(fn(*args)))
    call()
    timer = timeit.Timer(call)
    number, _ = timer.autorange()  # enough calls for >= 0.2 s
    return min(timer.repeat(repeat=repeat, number=number)) / number


def write_report(title: str, headers, rows, output: str) -> None:
    """A Markdown report (the title, the machine and versions, one table) on standard output and in ``output``."""
    text = "\n".join([f"# {title}", "", environment(), "", table(headers, rows), ""])
    print(text)
    with open(output, "w") as f:
        f.write(text)


def timed_against_hand(task: str, columns: dict, repeat: int) -> dict:
    """Seconds per call of each column (``name -> (fn, args)``), its result checked first against the
    ``"hand"`` column's (a column named ``... alone`` is not checked); None, and a MISMATCH line on standard
    error, where a result disagrees."""
    import numpy as np

    want = np.asarray(columns["hand"][0]())
    times = {}
    for name, (fn, args) in columns.items():
        if name.endswith("alone") or np.allclose(np.asarray(fn()), want, rtol=1e-9, atol=1e-12):
            times[name] = best_per_call(fn, args, None, repeat)
        else:
            times[name] = None
            print(f"MISMATCH: {task}, {name}", file=sys.stderr)
    return times


def check_agrees(system: str, program: str, out, expected) -> None:
    """A timing of a wrong answer is no timing: compare with plain NumPy, leaf by leaf."""
    import numpy as np

    got = out if isinstance(out, tuple) else (out,)
    want = expected if isinstance(expected, tuple) else (expected,)
    if len(got) != len(want) or not all(np.allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-12)
                                        for g, w in zip(got, want)):
        raise AssertionError(f"{system} computes {out!r} for {program}, plain NumPy {expected!r}")


def per_call(report: Report, systems, repeat: int):
    import programs

    for program in PROGRAMS:
        fn = getattr(programs, program)
        args = getattr(programs, f"{program}_args")()
        expected = fn(*args)
        for system in systems:
            def thunk(system=system, program=program):
                compiled, cargs, block = build(system, program)
                check_agrees(system, program, block(compiled(*cargs)), expected)
                return best_per_call(compiled, cargs, None if system != "jax" else block, repeat)
            report.measure(("per_call", program, system), thunk)
        report.measure(("per_call", program, "numpy"), lambda: best_per_call(fn, args, None, repeat))


def compile_times(report: Report, systems, repeats: int):
    for program in PROGRAMS:
        for system in systems:
            def thunk(system=system, program=program):
                runs = []
                for _ in range(repeats):
                    cache_dir = fresh_dir()
                    try:
                        runs.append(run_child(system, program, cache_dir))
                    finally:
                        shutil.rmtree(cache_dir, ignore_errors=True)
                return min(runs, key=lambda r: r["first_call_s"])
            report.measure(("compile", program, system), thunk)


def warm_start(report: Report, systems, repeats: int, program: str = "rk4_pendulum"):
    for system in systems:
        def thunk(system=system):
            cache_dir = fresh_dir()
            try:
                cold = run_child(system, program, cache_dir, cache=True)  # fills the cache
                warm = [run_child(system, program, cache_dir, cache=True) for _ in range(repeats)]
            finally:
                shutil.rmtree(cache_dir, ignore_errors=True)
            best = min(warm, key=lambda r: r["first_call_s"])
            best["cold_first_call_s"] = cold["first_call_s"]
            return best
        report.measure(("warm", program, system), thunk)


def stages() -> tuple:
    """The passes after which the pipeline can stop (all but parse and fence, which always run)."""
    try:
        from numbax.ast_passes import pipeline

        return tuple(n for n in pipeline.PASS_NAMES if n not in ("parse", "fence"))
    except Exception:
        return ()


def pass_times(report: Report, runs: int):
    import numbax.generated_source

    import programs

    for program in PROGRAMS:
        fn = getattr(programs, program)
        args = getattr(programs, f"{program}_args")()

        def first(fn=fn, args=args):
            t0 = time.perf_counter()
            numbax.generated_source.source_for(fn, args)
            return time.perf_counter() - t0

        def best(fn=fn, args=args, after=None):
            return min(timeit.repeat(lambda: numbax.generated_source.source_for(fn, args, after_pass=after),
                                     number=1, repeat=runs))

        report.measure(("passes_first", program), first)
        report.measure(("passes", program), best)
        for stage in stages():
            report.measure(("passes_upto", program, stage), lambda: best(after=stage))


# --------------------------------------------------------------------------
# Formatting.


def fmt_time(seconds) -> str:
    if seconds is None:
        return "n/a"
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(a, b) -> str:
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def verdict(ok) -> str:
    return "n/a" if ok is None else ("yes" if ok else "**no**")


def line_count(program: str) -> int:
    import inspect

    import programs

    names = (program,) + HELPERS[program]
    return sum(len(inspect.getsource(getattr(programs, n)).strip().splitlines()) for n in names)


def table(header, rows) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def environment() -> str:
    versions = []
    for name in ("numpy", "numba", "jax", "jaxlib"):
        try:
            from importlib.metadata import version

            versions.append(f"{name} {version(name)}")
        except Exception:
            versions.append(f"{name} not installed")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                timeout=10).stdout.strip()
    except Exception:
        commit = ""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next((l.split(":", 1)[1].strip() for l in handle if l.startswith("model name")), cpu)
    except OSError:
        pass
    return (f"{datetime.datetime.now().isoformat(timespec='seconds')}, commit {commit or '?'}, "
            f"Python {platform.python_version()}, {', '.join(versions)}, {cpu} ({os.cpu_count()} CPUs)")


def render(report: Report, systems, args) -> str:
    g = report.get
    lines = [f"# numbax benchmarks\n\n{environment()}.\n"]
    lines.append(f"`python benchmarks/run.py{' --quick' if args.quick else ''}`; best of {args.repeat} "
                 f"(in-process timings) and of {args.proc_repeats} (fresh processes). JAX runs on the CPU in "
                 "float64. \"n/a\": not installed or not measured; the reasons for errors are listed at the end.\n")

    # Summary.
    def ok_below(value, limit):
        return None if value is None else value <= limit

    pc = g("per_call", "dot_plus_one", "numbax"), g("per_call", "dot_plus_one", "numba")
    pcj = g("per_call", "dot_plus_one", "jax")
    cc = [(g("compile", "dot_plus_one", s) or {}).get("first_call_s") for s in SYSTEMS]
    warm = {s: g("warm", "rk4_pendulum", s) or {} for s in SYSTEMS}
    passes = g("passes", "mlp_classifier_loss")
    ratio_pc = pc[0] / pc[1] if None not in pc else None
    ratio_cc = cc[0] / cc[1] if None not in cc[:2] else None
    warm_ms = warm["numbax"].get("first_call_s")
    summary = [
        ["per-call overhead, `dot_plus_one`, 10 x float64", fmt_time(pc[0]), fmt_time(pc[1]), fmt_time(pcj),
         fmt_ratio(*pc), "≤ 1.2x", verdict(ok_below(ratio_pc, TARGETS["per_call"]))],
        ["first-call compile, `dot_plus_one`, fresh process", fmt_time(cc[0]), fmt_time(cc[1]), fmt_time(cc[2]),
         fmt_ratio(cc[0], cc[1]), "≤ 1.3x", verdict(ok_below(ratio_cc, TARGETS["compile"]))],
        [f"warm start from disk cache, new process, `rk4_pendulum` ({line_count('rk4_pendulum')} lines)",
         fmt_time(warm_ms), fmt_time(warm["numba"].get("first_call_s")), fmt_time(warm["jax"].get("first_call_s")),
         "–", "< 50 ms", verdict(None if warm_ms is None else warm_ms * 1e3 < TARGETS["warm_ms"])],
        [f"compiler passes (`source_for`), `mlp_classifier_loss` ({line_count('mlp_classifier_loss')} lines)",
         fmt_time(passes), "–", "–", "–", "< 20 ms",
         verdict(None if passes is None else passes * 1e3 < TARGETS["passes_ms"])],
    ]
    lines.append("## Summary\n")
    lines.append(table(["measurement", "numbax.jit", "numba.njit", "jax.jit", "numbax / numba", "target", "met"],
                       summary))
    lines.append("\nRatios are numbax over hand-written `numba.njit` of the same function (helpers `@njit` too, "
                 "a pytree of parameters passed as a tuple of tuples). The warm-start numba and jax columns are "
                 "`numba.njit(cache=True)` and JAX's persistent compilation cache, for reference.\n")

    # Per call.
    rows = []
    for program in PROGRAMS:
        vals = {s: g("per_call", program, s) for s in SYSTEMS + ("numpy",)}
        rows.append([f"`{program}`", fmt_time(vals["numbax"]), fmt_time(vals["numba"]), fmt_time(vals["jax"]),
                     fmt_time(vals["numpy"]), fmt_ratio(vals["numbax"], vals["numba"]),
                     "≤ 1.2x" if program == "dot_plus_one" else "–",
                     fmt_ratio(vals["numbax"], vals["jax"])])
    lines.append("## Time per call (best of many calls, compiled code warm)\n")
    lines.append(table(["program", "numbax.jit", "numba.njit", "jax.jit", "plain NumPy", "numbax / numba", "target",
                        "numbax / jax"], rows))
    lines.append("\n`dot_plus_one(x, y) = np.sum(x * y + 1.0)` on 10 elements measures dispatch overhead; "
                 "`rk4_pendulum` (1000 steps) and `mlp_classifier_loss` (64 x 16 batch, three layers) are "
                 "dominated by the work itself. jax includes `block_until_ready`, with inputs already on the device.\n")

    # Compile.
    rows = []
    for program in PROGRAMS:
        res = {s: g("compile", program, s) or {} for s in SYSTEMS}
        first = {s: res[s].get("first_call_s") for s in SYSTEMS}
        rows.append([f"`{program}` ({line_count(program)} lines)", fmt_time(first["numbax"]), fmt_time(first["numba"]),
                     fmt_time(first["jax"]), fmt_ratio(first["numbax"], first["numba"]), "≤ 1.3x",
                     fmt_ratio(first["numbax"], first["jax"])])
    lines.append("## First call (compile) in a fresh process, empty cache directories\n")
    lines.append(table(["program", "numbax.jit", "numba.njit", "jax.jit", "numbax / numba", "target", "numbax / jax"],
                       rows))
    imp = g("compile", "dot_plus_one", "numbax") or {}
    impj = g("compile", "dot_plus_one", "jax") or {}
    lines.append(f"\nImports (not included above): numba {fmt_time(imp.get('import_numba_s'))}, numbax after numba "
                 f"{fmt_time(imp.get('import_numbax_s'))}, jax {fmt_time(impj.get('import_jax_s'))}. "
                 "`numbax.jit` compiles with `cache=True`, so its column includes writing the cache.\n")

    # Warm start.
    rows = []
    for system in SYSTEMS:
        res = g("warm", "rk4_pendulum", system) or {}
        imports = sum(v for k, v in res.items() if k.startswith("import_")) if res else None
        label = {"numbax": "numbax.jit (disk cache)", "numba": "numba.njit(cache=True)",
                 "jax": "jax.jit (persistent compilation cache)"}[system]
        rows.append([label, fmt_time(res.get("first_call_s")), fmt_time(res.get("cold_first_call_s")),
                     fmt_time(res.get("second_call_s")), fmt_time(imports), fmt_time(res.get("process_wall_s")),
                     "< 50 ms" if system == "numbax" else "–"])
    lines.append(f"## Warm start: first call in a new process, cache filled by an earlier process "
                 f"(`rk4_pendulum`, {line_count('rk4_pendulum')} lines)\n")
    lines.append(table(["system", "first call, warm cache", "first call, empty cache", "second call", "imports",
                        "whole process", "target"], rows))
    res = g("warm", "rk4_pendulum", "numbax") or {}
    lines.append(f"\nImports of the numbax process: numpy {fmt_time(res.get('import_numpy_s'))}, numba "
                 f"{fmt_time(res.get('import_numba_s'))}, numbax {fmt_time(res.get('import_numbax_s'))}. "
                 "\"whole process\" is the subprocess's wall time, interpreter start-up included.\n")
    if res.get("numba_runtime_up_before_call"):
        lines.append("**Caution:** Numba's runtime was already initialised when numbax's first call began: "
                     "`import numbax` compiled or loaded Numba code itself, so part of what a warm start costs "
                     "is in its import time above, not in the first call.\n")

    # Passes.
    rows = []
    for program in PROGRAMS:
        upto = [g("passes_upto", program, s) for s in stages()]
        rows.append([f"`{program}` ({line_count(program)} lines)", fmt_time(g("passes", program)),
                     fmt_time(g("passes_first", program)), *[fmt_time(u) for u in upto],
                     "< 20 ms" if program == "mlp_classifier_loss" else "–"])
    lines.append(f"## numbax's passes alone: `numbax.generated_source.source_for(fn, args)` "
                 f"({' → '.join(('parse', 'fence') + stages() + ('unparse',))}, no Numba)\n")
    lines.append(table(["program", "best", "first in process", *[f"through {s}" for s in stages()], "target"],
                       rows))
    lines.append("\n\"through X\": `source_for(..., after_pass=X)`, which still parses and unparses; best of "
                 f"{args.pass_runs}. \"first in process\" includes reading the source and the parse cache filling.\n")

    if report.notes or not have_jax():
        lines.append("## Notes\n")
        if not have_jax():
            lines.append("- jax is not installed: its columns read n/a (`pip install -e '.[bench]'`).")
        lines.extend(f"- {note}" for note in report.notes)
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a rough run in about a minute)")
    parser.add_argument("--output", default=os.path.join(HERE, "results.md"), help="where to write the Markdown")
    parser.add_argument("--child", nargs=2, metavar=("SYSTEM", "PROGRAM"), help=argparse.SUPPRESS)
    parser.add_argument("--cache", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        print(RESULT_TAG + json.dumps(child(*args.child, cache=args.cache)), flush=True)
        return 0

    args.repeat = 3 if args.quick else 7
    args.proc_repeats = 1 if args.quick else 3
    args.pass_runs = 5 if args.quick else 20
    systems = SYSTEMS if have_jax() else SYSTEMS[:2]
    bytecode_as_installed()
    # The in-process measurements compile into a scratch cache, not the user's.
    scratch = fresh_dir()
    os.environ["NUMBAX_CACHE_DIR"] = os.path.join(scratch, "numbax")
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(scratch, "numba")
    report = Report()
    started = time.perf_counter()
    steps = (("compiler passes", lambda: pass_times(report, args.pass_runs)),
             ("per-call times", lambda: per_call(report, systems, args.repeat)),
             ("first-call compile times (fresh processes)", lambda: compile_times(report, systems, args.proc_repeats)),
             ("warm start (new processes)", lambda: warm_start(report, systems, args.proc_repeats)))
    for name, step in steps:
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            step()
    shutil.rmtree(scratch, ignore_errors=True)
    text = render(report, systems, args)
    text += f"\n_Measured in {time.perf_counter() - started:.0f} s._\n"
    print(text)
    with open(args.output, "w") as handle:
        handle.write(text)
    print(f"written to {os.path.relpath(args.output)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
