"""``examples/jax_programs/``: JAX programs whose only numbax-specific lines are their imports, each run on numbax
in a fresh process, as a user runs it, and on JAX (the same file, ``numbax`` replaced by ``jax`` in its import
lines, 64-bit mode on) in the test's process, where JAX is imported and its compiled primitives kept already
(the 27 programs' JAX runs: 99 s in fresh processes, 45 s in one); every number they print must agree.

A program prints what it computed, one result a line; the numbers of each line are compared to a relative
tolerance the program may set with a line ``# tolerance: 1e-6`` (default ``1e-9``: float64 programs agree to
rounding) and an absolute one, ``# atol: 1e-10`` (default ``1e-12``, for values that cancel to rounding);
the words of each line must be equal.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import runpy
import subprocess
import sys

import pytest

import numbax

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(numbax.__file__)))
FOLDER = os.path.join(ROOT, "examples", "jax_programs")
PROGRAMS = sorted(name for name in os.listdir(FOLDER) if name.endswith(".py")) if os.path.isdir(FOLDER) else []
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")
_IMPORT = re.compile(r"^(\s*)(import|from)\s+numbax\b", re.M)


def as_jax(source: str) -> str:
    """The program with ``numbax`` replaced by ``jax`` in its import lines, and 64-bit mode on."""
    lines = source.splitlines()
    first = next(i for i, line in enumerate(lines) if _IMPORT.match(line))
    lines = [re.sub(r"\bnumbax\b", "jax", line) if _IMPORT.match(line) else line for line in lines]
    lines.insert(first, "import jax; jax.config.update('jax_enable_x64', True)")
    return "\n".join(lines) + "\n"


def run(path: str, env_extra=None) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT, JAX_PLATFORMS="cpu", **(env_extra or {}))
    out = subprocess.run([sys.executable, path], env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-4000:]
    return out.stdout


def run_here(path: str) -> str:
    """What the program at ``path`` prints, run as ``__main__`` in this process."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        runpy.run_path(path, run_name="__main__")
    return printed.getvalue()


def _tokens(line: str):
    numbers = [float(m) for m in _NUMBER.findall(line)]
    words = _NUMBER.sub("#", line).split()
    return numbers, words


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_prints_jaxs_numbers(name, tmp_path):
    path = os.path.join(FOLDER, name)
    source = open(path).read()
    body = _IMPORT.sub("", source)
    assert "numbax" not in re.sub(r'^""".*?"""', "", body, flags=re.S), "numbax outside the imports"
    tolerance = float(re.search(r"# tolerance: (\S+)", source).group(1)) if "# tolerance:" in source else 1e-9
    atol = float(re.search(r"# atol: (\S+)", source).group(1)) if "# atol:" in source else 1e-12
    jax_path = tmp_path / name
    jax_path.write_text(as_jax(source))
    ours, theirs = run(path).splitlines(), run_here(str(jax_path)).splitlines()
    assert ours and len(ours) == len(theirs), (ours, theirs)
    for mine, jaxs in zip(ours, theirs):
        (a, words_a), (b, words_b) = _tokens(mine), _tokens(jaxs)
        assert words_a == words_b and len(a) == len(b), (mine, jaxs)
        for x, y in zip(a, b):
            assert x == y or abs(x - y) <= max(tolerance * max(abs(x), abs(y)), atol) or x != x and y != y, \
                (mine, jaxs)
