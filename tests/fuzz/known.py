"""Failures the differential tester found that are not fixed yet, as a list of excuses by construct.

Each entry names a transform, a construct tag and a failure signature, and has a strict-xfail regression
test in ``test_found.py`` that asserts the right value. The in-suite fuzz test does not count the failures
an entry excuses, and ``run`` does not minimize them again (it still counts them as wrong or internal).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from .classify import FAILURES, Outcome
from .grammar import Program


@dataclass(frozen=True)
class Known:
    """A failure found by the tester and not fixed yet: outcomes of ``transform`` whose signature starts
    with ``signature`` on programs tagged ``tag`` (any if None) on ``backend`` (any if None) are not counted."""

    transform: str
    tag: Optional[str]
    signature: str
    reason: str
    backend: Optional[str] = None

    def excuses(self, program: Program, outcome: Outcome, backend: str) -> bool:
        return (outcome.transform == self.transform and self.tag in program.tags | {None}
                and outcome.signature().startswith(self.signature) and self.backend in (None, backend))


# Known failures, excluded from the in-suite fuzz test until they are fixed; each has a strict xfail
# regression test in test_found.py that asserts the right value. Remove an entry when its xfail passes.
KNOWN_FAILURES = (
    Known("grad", "mean", "grad internal: ZeroDivisionError", "mean's VJP divides Python ints: the mean of an empty "
          "array (test_grad_of_the_mean_of_an_empty_array_is_an_empty_contribution)", backend="python"),
)


def excused(program: Program, outcome: Outcome, backend: str) -> bool:
    """Whether a known failure explains this outcome of this program on ``backend``."""
    return any(known.excuses(program, outcome, backend) for known in KNOWN_FAILURES)


def unexplained(program: Program, outcomes: List[Outcome], backend: str) -> List[Outcome]:
    """The wrong or internal outcomes that no known failure excuses."""
    return [o for o in outcomes if o.kind in FAILURES and not excused(program, o, backend)]
