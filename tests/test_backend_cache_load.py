"""A new process loading compiled code from the disk cache imports no more of Numba than running it needs.

Loading rebuilds the environment of each linked function without importing its Numba module
(``numba.np.arraymath`` would import SciPy's linear algebra); the loaded code still raises Numba's
exceptions, and later compilations in the same process still work. An error raised with run-time
arguments (the shapes of a contraction's operands) from a kernel that numbax's runtime writes out keeps them
when its caller is loaded from the cache.
"""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = textwrap.dedent("""
    import sys
    import numba
    import numpy as np
    import numbax

    def total(x):
        return np.max(x) + np.sum(x)

    f = numbax.jit(total)
    print(f(np.arange(3.0)), "numba.np.arraymath" in sys.modules)
    try:
        f(np.zeros(0))
    except ValueError as exc:
        print("ValueError:", exc)
    print(numba.njit(lambda x: np.sum(x) * 2.0)(np.ones(2)))

    def dot_sum(x, y):
        return np.sum(np.dot(x, y))

    try:
        numbax.grad(dot_sum, argnums=(0, 1), backend="cpu")(np.ones(3), np.ones(4))
    except numbax.NumbaxShapeError as exc:
        print("NumbaxShapeError:", str(exc).splitlines()[0].split(": ", 1)[1])
""")


def run(tmp_path) -> list:
    """The program's output lines, run in a new process with its caches under ``tmp_path``."""
    program = tmp_path / "program.py"  # numbax reads the function's source from its file
    program.write_text(PROGRAM)
    env = dict(os.environ, NUMBAX_CACHE_DIR=str(tmp_path / "numbax"), NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               PYTHONPATH=ROOT)
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, str(program)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_loading_skips_the_imports_of_compiling(tmp_path):
    cold = run(tmp_path)
    warm = run(tmp_path)
    assert cold[0] == "5.0 True"  # compiling imports the whole of Numba's lowering
    assert warm[0] == "5.0 False"
    message = "ValueError: zero-size array to reduction operation maximum which has no identity"
    assert cold[1] == warm[1] == message
    assert cold[2] == warm[2] == "4.0"
    message = ("NumbaxShapeError: np.dot requires contracting dimensions to have the same size, "
               "got shapes (3,) and (4,)")
    assert cold[3] == warm[3] == message
