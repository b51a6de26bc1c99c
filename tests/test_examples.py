"""The scripts in examples/ run and say what they promise."""
from __future__ import annotations

import os
import subprocess
import sys

import numbax

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(numbax.__file__)))


def run_example(name: str) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name)], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_debug_nans_example_names_the_offending_line():
    out = run_example("debug_nans.py")
    assert "sigma = -0.5, unchecked -> nan" in out
    assert "encountered in np.log at" in out and "debug_nans.py:15: scale = jnp.log(sigma)" in out
