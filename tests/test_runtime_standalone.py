"""``numbax.runtime``, the one import of generated code, stands alone: it loads no compiler.

What ``numbax export`` will ship is the runtime, so importing it (and reading its ``rt.random_*``
kernels) must load numpy, numba and the runtime's own modules, never gast or a compiler package.
``import numbax`` stays light too, with its public names imported on first use. Each check runs in
a fresh interpreter, so that modules the test session already imported do not hide a regression.
"""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMPILER = ("gast", "numbax.ast_passes", "numbax.transforms", "numbax.api", "numbax.backends.numba_cpu.compile")


def _fresh(code: str):
    """What ``code`` prints as JSON on its last line, run in a new interpreter with this checkout's numbax."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def _compiler_modules_after(statements: str):
    """The compiler modules loaded after ``statements``, and every ``numbax`` module loaded, for the message."""
    return _fresh(f"""
import json, sys
{statements}
loaded = sorted(sys.modules)
compiler = [m for m in loaded if any(m == c or m.startswith(c + ".") for c in {COMPILER!r})]
print(json.dumps([compiler, [m for m in loaded if m.startswith("numbax")]]))
""")


@pytest.mark.parametrize("statements", [
    "import numbax.runtime",
    "from numbax import runtime as rt",
    "import numbax.runtime as rt; rt.random_normal, rt.random_gamma, rt.random_gamma_vjp, rt.random_choice",
    "import numbax",
])
def test_the_runtime_and_numbax_load_no_compiler(statements):
    compiler, loaded = _compiler_modules_after(statements)
    assert compiler == [], f"{statements!r} loaded {compiler}; numbax modules loaded: {loaded}"


def test_the_runtime_kernels_are_the_ones_numbax_random_calls():
    assert _fresh("""
import json
import numbax.runtime as rt
import numbax.random as random
from numbax.runtime.random.kernels import KERNELS
print(json.dumps([rt.random_normal is random.continuous.normal_kernel, sorted(KERNELS) == sorted(
    n for n in KERNELS if getattr(rt, n) is KERNELS[n])]))
""") == [True, True]


def test_public_names_are_imported_on_first_use():
    names, all_bound, dir_has_all, devices_is_function = _fresh("""
import json, sys
import numbax
before = "numbax.api" in sys.modules
from numbax import jit, grad
print(json.dumps([[before, "numbax.api" in sys.modules, jit is sys.modules["numbax.api"].jit,
                   grad is sys.modules["numbax.transforms.grad"].grad],
                  all(getattr(numbax, name) is not None for name in numbax.__all__),
                  set(numbax.__all__) <= set(dir(numbax)),
                  callable(numbax.devices) and not hasattr(numbax.devices, "__file__")]))
""")
    assert names == [False, True, True, True]
    assert all_bound and dir_has_all and devices_is_function


def test_devices_is_the_function_when_the_compiler_is_imported_first():
    assert _fresh("""
import json
import numbax.api
import numbax
print(json.dumps([callable(numbax.devices), numbax.config.__name__, numbax.NumbaxError.__module__]))
""") == [True, "numbax.config", "numbax.errors"]


def test_an_unknown_attribute_still_raises():
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        import numbax

        numbax.nonexistent
    with pytest.raises(AttributeError, match="no attribute 'random_nonexistent'"):
        import numbax.runtime

        numbax.runtime.random_nonexistent
