"""BLAS and LAPACK without ``scipy.linalg``: compiled code that calls them loads SciPy's two modules of
function pointers directly (``numbax.backends.numba_cpu.scipy_blas``), and a later ``import scipy.linalg``
is as it would have been. Each check runs in a new process, where nothing has imported SciPy yet.
"""
import os
import subprocess
import sys

from numbax.backends.numba_cpu import scipy_blas

_CHILD = """
import sys
import numpy as np
import numbax

def solve_twice(a, b):
    return np.linalg.inv(a) @ (a @ b)

a = np.array([[2.0, 1.0], [1.0, 3.0]])
b = np.array([1.0, -1.0])
print(np.allclose(numbax.jit(solve_twice)(a, b), b))
print("scipy.linalg" in sys.modules)
import scipy.linalg
from scipy.linalg import cython_lapack
print(scipy.linalg.cython_blas is sys.modules["scipy.linalg.cython_blas"] and cython_lapack is scipy.linalg.cython_lapack)
print(np.allclose(scipy.linalg.solve(a, b), np.linalg.solve(a, b)))
"""


def test_compiled_blas_calls_leave_scipy_linalg_unimported_and_importable(tmp_path):
    env = dict(os.environ, NUMBAX_CACHE_DIR=str(tmp_path / "numbax"), PYTHONDONTWRITEBYTECODE="1")
    (tmp_path / "child.py").write_text(_CHILD)
    proc = subprocess.run([sys.executable, str(tmp_path / "child.py")], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False", "True", "True"]


def test_which_sources_call_blas():
    assert scipy_blas.uses_blas("    _t2 = x @ params_0_0\n")
    assert scipy_blas.uses_blas("    y = np.linalg.solve(a, b)\n")
    assert scipy_blas.uses_blas("    z = np.dot(a, b)\n")
    assert not scipy_blas.uses_blas("    y = np.sum(x * w) + rt.max(x)\n")
