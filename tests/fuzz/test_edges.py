"""The edge sweep in the suite (``edges.py``): ``jit`` of NumPy calls on edge operands against NumPy, seeded, on
the python backend (cheap: no compilation) and a few on cpu. 0 wrong values, values where NumPy raises, or errors
where NumPy gives a value. ``python -m tests.fuzz.edges`` runs thousands."""
from __future__ import annotations

import random

import pytest

from . import edges

FAILURES = ("wrong", "value", "error")


def _sweep(backend: str, seed: int, n: int) -> None:
    rng = random.Random(seed)
    failures = []
    for _ in range(n):
        call = edges.draw(rng)
        kind, detail = edges.classify(call, backend)
        if kind in FAILURES:
            failures.append(f"{kind}: {call.describe()}\n    {detail}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("seed", [1, 2])
def test_python_backend(seed):
    _sweep("python", seed, 300)


def test_cpu_backend():
    _sweep("cpu", 3, 25)
