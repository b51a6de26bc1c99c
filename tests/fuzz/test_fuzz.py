"""The differential tester in the suite: generated programs through ``jit``, ``grad``, ``vmap``, ``jvp`` and
``jvp`` of ``grad`` on the python, cpu and gpu (simulated) backends (and their compositions on python), with a
fixed seed (``derandomize``) and no example database, so every run sees the same
programs and nothing is written into the repository. 0 wrong values and 0 internal errors, except the known
failures that ``known.py`` lists (each one a strict xfail in ``test_found.py``). ``python -m tests.fuzz.run``
runs tens of thousands.
"""
from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, note, settings

from .classify import check
from .compositions import COMPOSITIONS
from .extended import extended_programs
from .grammar import Program, programs
from .jacobians import EXTENDED_TRANSFORMS, check_all
from .known import unexplained
from .wide import wide_programs


def _assert_right(program: Program, backend: str, transforms=("jit", "grad", "vmap")) -> None:
    note(repr(program))
    failures = unexplained(program, check(program, backend, transforms), backend)
    assert not failures, "\n".join(f"{o.signature()}\n{o.detail}" for o in failures)


def _assert_every_transform_right(program: Program, transforms=EXTENDED_TRANSFORMS) -> None:
    """``_assert_right`` on the python backend with ``jacfwd``, ``jacrev`` and ``hessian`` too (or
    ``transforms``)."""
    note(repr(program))
    failures = unexplained(program, check_all(program, "python", transforms), "python")
    assert not failures, "\n".join(f"{o.signature()}\n{o.detail}" for o in failures)


_SLOW = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]


@settings(max_examples=150, derandomize=True, database=None, deadline=None, suppress_health_check=_SLOW)
@given(programs())
def test_python_backend(program):
    _assert_right(program, "python")


# Forward mode and forward over reverse (JAX's eager ``jvp`` of ``grad`` is the oracle, ~0.2 s a program)
@settings(max_examples=40, derandomize=True, database=None, deadline=None, suppress_health_check=_SLOW)
@given(programs())
def test_python_backend_forward_mode_to_second_order(program):
    _assert_right(program, "python", ("jvp", "hvp"))


# No shrinking on cpu: each step is a Numba compile (seconds); the python backend shrinks cheaply.
@settings(max_examples=8, derandomize=True, database=None, deadline=None, suppress_health_check=_SLOW,
          phases=[Phase.explicit, Phase.generate])
@given(programs(max_statements=2))
def test_cpu_backend(program):
    _assert_right(program, "cpu")


# The GPU backend in Numba's CUDA simulator (its kernels also go to tests/ptx/check.py under `make test`); no
# shrinking: each step compiles for the GPU and runs every thread in Python.
@settings(max_examples=20, derandomize=True, database=None, deadline=None, suppress_health_check=_SLOW,
          phases=[Phase.explicit, Phase.generate])
@given(programs(max_statements=3))
def test_gpu_backend(gpu, program):
    _assert_right(program, "gpu", ("jit", "grad", "vmap", "jvp"))


# The extended grammar (composites, norms with ``ord``, updates through views, closures, keyword arguments,
# ``vmap`` along other axes) through every transform, ``jacfwd``, ``jacrev`` and ``hessian`` too
@settings(max_examples=25, derandomize=True, database=None, deadline=None, suppress_health_check=_SLOW)
@given(extended_programs(max_statements=3))
def test_python_backend_extended_grammar(program):
    _assert_every_transform_right(program)


# The wide grammar (the rest of the ufuncs, statistics, shape functions, einsum and the other products, linear
# algebra, constructors) through every transform, as the extended grammar is checked
@settings(max_examples=20, derandomize=True, database=None, deadline=None, suppress_health_check=_SLOW)
@given(wide_programs(max_statements=3))
def test_python_backend_wide_grammar(program):
    _assert_every_transform_right(program)


# Compositions (``compositions.py``): grad of grad against JAX's forward over reverse, vmap of grad and grad of
# vmap against grad of each example, on the extended grammar's programs
@settings(max_examples=15, derandomize=True, database=None, deadline=None, suppress_health_check=_SLOW)
@given(extended_programs(max_statements=3))
def test_python_backend_compositions(program):
    _assert_every_transform_right(program, COMPOSITIONS)
