"""``tests/ptx``: what the simulator launches is recorded with its argument types, and ``check`` compiles it for
a real GPU without one, reporting each kernel numba.cuda cannot compile (a 1-tuple index of an atomic addition
into a 1-d array, which numba.cuda types but fails to lower, as the GPU backend once wrote) and each argument it
cannot type (a ``range``, which a generated driver once passed)."""
import os
import pickle
import subprocess
import sys

import numpy as np
from numba import cuda

from ptx import record

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = '''from numba import cuda


@cuda.jit
def scaled(out, x, k):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = x[i] * k


@cuda.jit
def added(out, idx, x):
    for i in range(cuda.grid(1), idx.size, cuda.gridsize(1)):
        cuda.atomic.add(out, (idx[i],), x[i])
'''


def test_argument_types_are_numba_cudas(gpu):
    assert str(record.argument_type(cuda.to_device(np.zeros((2, 3))))) == "array(float64, 2d, C)"
    assert str(record.argument_type(np.zeros(3)[::2])) == "array(float64, 1d, A)"
    assert str(record.argument_type((2, 3))) == "UniTuple(int64 x 2)"
    assert record.argument_type(range(3)) == "range" and record.argument_type((1, range(3))) == "tuple"


def test_check_compiles_each_kernel_and_reports_what_a_gpu_would_refuse(tmp_path):
    from numba import types

    vector, indices = types.Array(types.float64, 1, "C"), types.Array(types.int64, 1, "C")
    module = "numbax_generated_ptx_check_0000000000000000"
    seen = {(module, "scaled", (vector, vector, types.float64)): SOURCE,
            (module, "added", (vector, indices, vector)): SOURCE,
            (module, "scaled", (vector, vector, "range")): SOURCE}
    with open(tmp_path / "kernels-1.pickle", "wb") as out:
        pickle.dump(seen, out)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "NUMBAX_RECORD_KERNELS")}
    done = subprocess.run([sys.executable, "-m", "tests.ptx.check", str(tmp_path), "-j", "1"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "3 distinct kernels compiled for sm_90" in done.stdout and ": 2 failed" in done.stdout
    assert "registers per thread: at most" in done.stdout and "0 kernels spill registers" in done.stdout
    assert f"{module}.added(" in done.stdout and "Cannot cast UniTuple(int64 x 1) to int64" in done.stdout
    assert f"{module}.scaled: numba.cuda has no type for an argument of Python type range" in done.stdout
    empty = subprocess.run([sys.executable, "-m", "tests.ptx.check", str(tmp_path / "none")], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300)
    assert empty.returncode == 1 and "no kernels recorded" in empty.stdout


def test_kernels_differing_only_in_names_they_bind_compile_once(tmp_path):
    from numba import types

    from ptx import check

    vector = types.Array(types.float64, 1, "C")
    renamed = SOURCE.replace("scaled", "times").replace("out", "result").replace("k)", "c)").replace("* k", "* c")
    other_free_name = SOURCE.replace("cuda.grid(1)", "cuda.grid(1) + 1")
    seen = {("numbax_generated_a_0", "scaled", (vector, vector, types.float64)): SOURCE,
            ("numbax_generated_b_0", "times", (vector, vector, types.float64)): renamed,
            ("numbax_generated_c_0", "scaled", (vector, vector, types.float64)): other_free_name,
            ("numbax_generated_d_0", "scaled", (vector, vector, types.int64)): SOURCE}
    with open(tmp_path / "kernels-1.pickle", "wb") as out:
        pickle.dump(seen, out)
    kept = check.recorded(str(tmp_path))
    assert sorted(module for module, _, _ in kept) == ["numbax_generated_a_0", "numbax_generated_c_0",
                                                       "numbax_generated_d_0"]
