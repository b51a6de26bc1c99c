"""The suite compiles with LLVM's optimization level 0 (``NUMBA_OPT=0``, set by ``make test`` and
``conftest.py``): level 3, Numba's default and what users run, takes up to four times as long as level 1 on
the loop nests numbax generates for contractions, and level 1 half as long again as level 0 on small
gradients. No fast-math flag lets LLVM contract or approximate a floating-point operation, so level 0
computes the bits level 3 computes, except a fused loop's sum (``vector_math.add_unordered``), which LLVM may
reassociate and, from level 1, vectorizes with partial sums in each lane: at level 0 it adds in order, within
rounding of the vectorized sum. This test checks that on programs that exercise the contraction kernels (at
level 0 numbax calls every cached runtime helper instead of linking it in), a fused backward pass,
transcendental functions in float32 and random numbers.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    sys.path.insert(0, "benchmarks")
    import numbax
    import numbax.random as nr
    from grad_tasks import softmax_cross_entropy, softmax_cross_entropy_args


    def contraction(a, b):
        return np.sum(np.sin(np.matmul(a, b)))


    def float32_loop(x):
        total = np.float32(0.0)
        for i in range(x.shape[0]):
            total = total + np.exp(np.tanh(x[i])) * np.log1p(x[i] * x[i])
        return total


    def samples(key):
        return nr.normal(key, (16,)) + nr.uniform(nr.fold_in(key, 3), (16,))


    def results():
        rng = np.random.default_rng(0)
        a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5))
        da, db = numbax.grad(contraction, argnums=(0, 1), backend="cpu")(a, b)
        softmax = numbax.grad(softmax_cross_entropy, backend="cpu")(*softmax_cross_entropy_args(16, 7))
        x = rng.normal(size=33).astype(np.float32)
        loop = numbax.jit(float32_loop, backend="cpu")(x)
        drawn = numbax.jit(samples, backend="cpu")(nr.PRNGKey(7))
        return [np.asarray(v) for v in (da, db, softmax, loop, drawn)]


    if __name__ == "__main__":
        np.savez(sys.argv[1], *results())
''')


FUSED_SUM = 2  # the softmax's gradient: its fused sums add in another order at level 0
# how far a sum of the 16 rows' positive terms may move when level 3 splits it into as many lanes as the CPU's
# vectors hold (2 to 8 doubles), in units of the largest value's rounding
REORDERED = 32 * np.finfo(np.float64).eps


def _run(tmp_path, level: str):
    script = tmp_path / "programs.py"
    script.write_text(SCRIPT)
    out = tmp_path / f"level{level}.npz"
    env = dict(os.environ, NUMBA_OPT=level, NUMBAX_CACHE_DIR=str(tmp_path / f"cache{level}"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(script), str(out)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with np.load(out) as saved:
        return [saved[f"arr_{k}"] for k in range(len(saved.files))]


def test_the_suites_optimization_level_computes_the_bits_of_numbas_default(tmp_path):
    from numba.core import config

    assert int(config.OPT) == 0  # what the rest of the suite runs with
    default, suite = _run(tmp_path, "3"), _run(tmp_path, "0")
    assert len(default) == len(suite) == 5
    for k, (at_three, at_zero) in enumerate(zip(default, suite)):
        assert at_three.dtype == at_zero.dtype and at_three.shape == at_zero.shape
        if k == FUSED_SUM:
            np.testing.assert_allclose(at_zero, at_three, rtol=REORDERED, atol=REORDERED * np.max(np.abs(at_three)))
        else:
            assert at_zero.tobytes() == at_three.tobytes()
