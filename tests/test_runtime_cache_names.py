"""Machine code in the runtime's disk cache is named apart across processes (``cached``'s
``_names_differ_across_processes``).

Numba names a compiled function by its qualified name, its argument types and a count that started at 1 in
every process: two kernels of the runtime (every one is a function ``impl``) compiled first thing in two
processes got one name, and a function of a third process that called both, loaded from the cache, called
one of them twice (the wrong numbers, or a crash, that a loaded machine's cache gave ``grad(grad(f))``).
"""
import subprocess
import sys

import numpy as np

from numbax.runtime import cached  # noqa: F401  (starts this process's count)

KERNELS = {"doubled": "def impl(a):\n    return a * 2.0\n", "negated": "def impl(a):\n    return -a\n"}

_COMPILE = r"""
import sys
import numba
import numpy as np
from numbax.runtime import cached, loops

cached.use_folder(lambda: sys.argv[1])
kernels = [numba.njit(cache=True)(loops.compile_source(text)) for text in sys.argv[2:]]
calls = ", ".join(f"kernel_{i}(a)[1, 1]" for i in range(len(kernels)))
namespace = {f"kernel_{i}": kernel for i, kernel in enumerate(kernels)}
exec(f"def each(a):\n    return ({calls},)", namespace)
for kernel in kernels:  # loaded (or compiled) here, then called by symbol from the function that calls them all
    kernel(np.ones((2, 2)))
print(*numba.njit(namespace["each"])(np.ones((2, 2))))
print(*[len(kernel.stats.cache_hits) for kernel in kernels])
"""


def _run(folder, *texts):
    run = subprocess.run([sys.executable, "-c", _COMPILE, str(folder), *texts], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    values, hits = run.stdout.split("\n")[:2]
    return [float(v) for v in values.split()], [int(h) for h in hits.split()]


def test_two_kernels_compiled_by_two_processes_load_side_by_side(tmp_path):
    assert _run(tmp_path, KERNELS["doubled"]) == ([2.0], [0])
    assert _run(tmp_path, KERNELS["negated"]) == ([-1.0], [0])
    assert _run(tmp_path, KERNELS["doubled"], KERNELS["negated"]) == ([2.0, -1.0], [1, 1])


def test_each_process_counts_from_its_own_random_start():
    script = "import numbax.runtime.cached as c; print(next(c.FunctionIdentity._unique_ids))"
    starts = {int(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                                 timeout=120).stdout) for _ in range(3)}
    assert len(starts) == 3 and min(starts) > 2 ** 20
    assert np.log2(max(starts)) <= 56
