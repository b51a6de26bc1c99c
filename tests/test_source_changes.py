"""numbax's files changing under a running process (an upgrade, a checkout under a notebook) never file code
made from two versions in the disk cache (``numbax.source_files``): the process warns, computes right, and
keeps its code in memory; the next process, of the new version, caches again."""
import os
import shutil
import subprocess
import sys

import pytest

import numbax

_PROGRAM = """
import sys, warnings
import numpy as np
import numbax

edited = sys.argv[1]
assert numbax.__file__.startswith(sys.path[0]), numbax.__file__
if edited != "-":  # an edit after import, before the module it touches is first used
    path = numbax.source_files.root() + "/" + edited
    with open(path, "a") as file:
        file.write("\\n# edited under a running process\\n")

@numbax.jit
def f(x, k):
    total = 0.0
    for i in range(k):
        total += np.sum(np.sin(x) * i)
    return total

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(repr(float(f(np.arange(3.0), 4))))
print(sum(issubclass(w.category, numbax.NumbaxCacheWarning) for w in caught))
"""


def _cached_files(cache_dir: str) -> list:
    """The disk cache's entries of compiled code and generated source."""
    return sorted(os.path.relpath(os.path.join(folder, name), cache_dir)
                  for folder, _, names in os.walk(cache_dir) for name in names
                  if name.endswith((".nbi", ".nbc", ".pkl")))


@pytest.fixture(scope="module")
def copied_numbax(tmp_path_factory):
    """A copy of numbax's package that its tests may edit, importable ahead of the installed one."""
    folder = tmp_path_factory.mktemp("numbax_copy")
    shutil.copytree(os.path.dirname(numbax.__file__), folder / "numbax",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return str(folder)


def _run(copy: str, cache_dir: str, edited: str):
    program = os.path.join(copy, "program.py")
    with open(program, "w") as file:
        file.write(_PROGRAM)
    env = {**os.environ, "PYTHONPATH": copy, "NUMBAX_CACHE_DIR": cache_dir}
    done = subprocess.run([sys.executable, program, edited], env=env, cwd=copy, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    value, warned = done.stdout.split()
    return float(value), int(warned)


@pytest.mark.parametrize("edited", ["runtime/__init__.py", "ast_passes/pipeline.py"])
def test_an_edit_under_a_running_process_caches_nothing(copied_numbax, tmp_path, edited):
    expected = sum(float(sum(__import__("numpy").sin([0.0, 1.0, 2.0]))) * i for i in range(4))
    value, warned = _run(copied_numbax, str(tmp_path), edited)
    assert value == pytest.approx(expected, rel=1e-15) and warned == 1
    assert _cached_files(str(tmp_path)) == []
    value, warned = _run(copied_numbax, str(tmp_path), "-")  # the edited version, from its import on
    assert value == pytest.approx(expected, rel=1e-15) and warned == 0
    cached = _cached_files(str(tmp_path))
    assert any(name.endswith(".nbi") for name in cached) and any(name.endswith(".pkl") for name in cached)
