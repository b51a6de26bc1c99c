"""The whole run of each program in ``examples/jax_programs/`` on numbax and on JAX, cold and warm.

Each program runs as its own process (what a user waits for: imports, compilation, the work, printing), five
ways: numbax with an empty cache directory (first: nothing compiled on this machine before), with that cache
emptied again but for the runtime's helpers, which numbax compiles once per machine (cold: a program new to a
machine where numbax has run), and with the cache it filled (warm); and the same file with ``jax`` imports
(64-bit mode, as ``tests/test_jax_programs.py`` runs it) with an empty persistent compilation cache (cold) and
again with it filled (warm). Times are wall-clock seconds, the best of ``--repeat`` runs each;
reported, never asserted. Markdown on stdout and in ``benchmarks/jax_programs_results.md``.

Usage: ``python benchmarks/run_jax_programs.py [--repeat N] [--only NAME ...] [--output PATH]``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FOLDER = os.path.join(ROOT, "examples", "jax_programs")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from run import empty_but, fmt_ratio, write_report  # noqa: E402
from test_jax_programs import as_jax  # noqa: E402


def _seconds(path: str, env: dict) -> float:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, path], env=env, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return time.perf_counter() - start


def _cold_and_warm(path: str, env: dict, cache_var: str, repeat: int, keep: str = "") -> tuple:
    """(best first, best cold, best warm) seconds: first with a new empty cache each time, cold with the cache
    emptied again but for its folder ``keep`` (what is compiled once per machine), warm with the cache filled."""
    firsts, colds, warms = [], [], []
    for _ in range(repeat):
        cache = tempfile.mkdtemp(prefix="numbax-programs-")
        try:
            run_env = dict(env, **{cache_var: cache})
            firsts.append(_seconds(path, run_env))
            if keep:
                empty_but(cache, keep)
            colds.append(_seconds(path, run_env) if keep else firsts[-1])
            warms.append(_seconds(path, run_env))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return min(firsts), min(colds), min(warms)


def main(argv=None) -> int:
    """Time every program both ways and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=None, help="program names (without .py)")
    parser.add_argument("--output", default=os.path.join(HERE, "jax_programs_results.md"))
    ns = parser.parse_args(argv)
    names = sorted(n[:-3] for n in os.listdir(FOLDER) if n.endswith(".py"))
    names = [n for n in names if ns.only is None or n in ns.only]
    base = dict(os.environ, PYTHONPATH=ROOT, JAX_PLATFORMS="cpu", JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0")
    rows = []
    scratch = tempfile.mkdtemp(prefix="jax-programs-")
    try:
        for name in names:
            path = os.path.join(FOLDER, f"{name}.py")
            jax_path = os.path.join(scratch, f"{name}.py")
            with open(path) as source, open(jax_path, "w") as target:
                target.write(as_jax(source.read()))
            ours = _cold_and_warm(path, base, "NUMBAX_CACHE_DIR", ns.repeat, keep="runtime")
            theirs = _cold_and_warm(jax_path, base, "JAX_COMPILATION_CACHE_DIR", ns.repeat)[1:]
            rows.append([name, f"{ours[0]:.1f} s", f"{ours[1]:.1f} s", f"{theirs[0]:.1f} s",
                         fmt_ratio(ours[1], theirs[0]), f"{ours[2]:.1f} s", f"{theirs[1]:.1f} s",
                         fmt_ratio(ours[2], theirs[1])])
            print(" | ".join(rows[-1]), file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    write_report("examples/jax_programs: the whole run of each program, numbax against JAX",
                 ["program", "numbax first", "numbax cold", "JAX cold", "ratio", "numbax warm", "JAX warm", "ratio"],
                 rows, ns.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
