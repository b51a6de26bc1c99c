"""Generated code does not depend on the process: the same function gives the same source under any
``PYTHONHASHSEED`` (the disk cache is keyed by it, and golden tests pin it)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = textwrap.dedent('''
    import hashlib, sys
    sys.path.insert(0, "benchmarks")
    import numbax, grad_tasks
    for task in grad_tasks.TASKS:
        gradient = numbax.grad(task.fn, argnums=task.argnums, backend="python")
        gradient(*task.args())
        print(task.name, hashlib.sha256(gradient.source.encode()).hexdigest())
''')


def _sources(hash_seed: int, cache_dir: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=str(hash_seed), NUMBAX_CACHE_DIR=cache_dir)
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_gradients_of_the_benchmarks_do_not_depend_on_string_hashing(tmp_path):
    first, second = _sources(1, str(tmp_path / "one")), _sources(3, str(tmp_path / "two"))
    assert len(first.splitlines()) == 6
    assert first == second
