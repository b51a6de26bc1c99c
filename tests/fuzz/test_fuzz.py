"""The differential tester in the suite: generated programs through ``jit``, ``grad`` and ``vmap``, with a
fixed seed (``derandomize``) and no example database, so every run sees the same programs and nothing is
written into the repository. 0 wrong values and 0 internal errors, except the known failures listed below
(each one a strict xfail in ``test_found.py``). ``python -m tests.fuzz.run`` runs tens of thousands.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List

from hypothesis import HealthCheck, Phase, given, note, settings

from .classify import FAILURES, Outcome, check
from .grammar import Program, programs


@dataclass(frozen=True)
class Known:
    """A failure found by the tester and not fixed yet: outcomes of ``transform`` whose signature starts
    with ``signature`` on programs tagged ``tag`` are not counted here."""

    transform: str
    tag: str
    signature: str
    reason: str

    def excuses(self, program: Program, outcome: Outcome) -> bool:
        return (outcome.transform == self.transform and self.tag in program.tags
                and outcome.signature().startswith(self.signature))


# Known failures, excluded from this test until they are fixed; each has a strict xfail regression test in
# test_found.py that asserts the right value. Remove an entry when its xfail starts passing.
KNOWN_FAILURES = (
    Known("grad", "output_int", "grad wrong: should raise TypeError",
          "grad of an integer output returns zeros; JAX raises TypeError (test_grad_of_integer_output_raises)"),
    Known("grad", "output_bool", "grad wrong: should raise TypeError",
          "grad of a bool output returns zeros; JAX raises TypeError (test_grad_of_bool_output_raises)"),
    Known("grad", "output_complex", "grad wrong: should raise TypeError",
          "grad of a complex output returns a value; JAX raises TypeError (test_grad_of_complex_output_raises)"),
    Known("grad", "raises", "grad wrong: should raise IndexError",
          "grad prunes inactive indexing and its bounds check (test_grad_index_out_of_bounds_raises)"),
    Known("grad", "raises", "grad wrong: should raise ZeroDivisionError",
          "grad folds len(x) // 0 away (test_grad_of_length_divided_by_zero_raises)"),
    Known("grad", "fill", "grad wrong: value",
          "grad passes cotangents through x.fill(c) (test_grad_through_fill)"),
    *(Known("grad", loop, "grad internal: IndentationError",
            "an empty adjoint loop body is emitted as an empty block (test_grad_of_loop_adding_a_constant)")
      for loop in ("for_range", "for_rows", "while")),
    Known("grad", "for_rows", "grad wrong: value",
          "`for row in x` whose body rebinds x: the adjoint reads the new x "
          "(test_grad_loop_rebinding_its_iterable)"),
    Known("grad", "subscript_write", "grad wrong: value",
          "x[::-1] = x, an overlapping write, gives zero gradients (test_grad_overlapping_self_assignment)"),
    *(Known(transform, "ufunc", f"{transform} wrong: dtype: float32, expected float64",
            "np.sin(0.5) is an np.float64 that promotes float32 arrays in NumPy; numbax keeps float32 "
            "(test_numpy_scalar_promotes_float32)") for transform in ("jit", "vmap")),
)


def unexplained(program: Program, outcomes: List[Outcome]) -> List[Outcome]:
    """The wrong or internal outcomes that no known failure excuses."""
    return [o for o in outcomes if o.kind in FAILURES
            and not any(known.excuses(program, o) for known in KNOWN_FAILURES)]


def _assert_right(program: Program, backend: str) -> None:
    note(repr(program))
    failures = unexplained(program, check(program, backend))
    assert not failures, "\n".join(f"{o.signature()}\n{o.detail}" for o in failures)


_SLOW = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]


@settings(max_examples=150, derandomize=True, database=None, deadline=None, suppress_health_check=_SLOW)
@given(programs())
def test_python_backend(program):
    _assert_right(program, "python")


# No shrinking on cpu: each step is a Numba compile (seconds); the python backend shrinks cheaply.
@settings(max_examples=6, derandomize=True, database=None, deadline=None, suppress_health_check=_SLOW,
          phases=[Phase.explicit, Phase.generate])
@given(programs(max_statements=2))
def test_cpu_backend(program):
    _assert_right(program, "cpu")
