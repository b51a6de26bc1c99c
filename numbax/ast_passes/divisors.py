"""Which divisors a comparison has proven nonzero at each statement (for ``run_time_checks``).

Reads A-normal form in order: after ``t = d != 0`` (or ``d > 0``, ``d < 0``, ``d >= 1``, ...), the body
of ``if t:`` divides by ``d`` without a check, and so does the ``else`` block of ``if t:`` after
``t = d == 0``, as long as neither ``d`` nor ``t`` is assigned again.
"""
from __future__ import annotations

import copy
import operator
from typing import Dict, Iterable, Set, Tuple

import gast

from numbax.ast_passes.extents import rebound_names

# ``d op c`` is true only where ``d != 0``: for which constants ``c``
_NONZERO_IF_TRUE = {gast.NotEq: operator.eq, gast.Gt: operator.ge, gast.Lt: operator.le, gast.GtE: operator.gt,
                    gast.LtE: operator.lt}
_SWAPPED = {gast.Gt: gast.Lt, gast.Lt: gast.Gt, gast.GtE: gast.LtE, gast.LtE: gast.GtE, gast.NotEq: gast.NotEq,
            gast.Eq: gast.Eq}


def _comparison(value: gast.expr):
    """``(d, op, c)`` for ``d op c`` or ``c op d`` (``d`` a name, ``c`` a number), else None."""
    if not (isinstance(value, gast.Compare) and len(value.ops) == 1 and type(value.ops[0]) in _SWAPPED):
        return None
    left, op, right = value.left, type(value.ops[0]), value.comparators[0]
    if isinstance(left, gast.Constant):
        left, op, right = right, _SWAPPED[op], left
    if isinstance(left, gast.Name) and isinstance(right, gast.Constant) and type(right.value) in (int, float):
        return left.id, op, right.value
    return None


class Divisors:
    """``tests``: ``t = d op c`` seen; ``nonzero``: names known nonzero here."""

    def __init__(self):
        self.tests: Dict[str, Tuple[str, type, float]] = {}
        self.nonzero: Set[str] = set()

    def assign(self, stmt: gast.stmt) -> None:
        """Update the facts after ``stmt``, a statement without blocks."""
        self.forget(rebound_names(stmt))
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
            test = _comparison(stmt.value)
            if test is not None:
                self.tests[stmt.targets[0].id] = test

    def forget(self, names: Iterable[str]) -> None:
        """Drop every fact about ``names`` (assigned again)."""
        names = set(names)
        self.tests = {k: v for k, v in self.tests.items() if k not in names and v[0] not in names}
        self.nonzero -= names

    def entering(self, stmt: gast.stmt, body: bool = True) -> "Divisors":
        """The facts inside ``stmt``'s ``body`` (else its ``orelse``)."""
        inner = copy.deepcopy(self)
        if isinstance(stmt, (gast.For, gast.While)):
            inner.forget(rebound_names(stmt))
        test = self.tests.get(stmt.test.id) if isinstance(stmt, gast.If) and isinstance(stmt.test, gast.Name) \
            else None
        if test is not None:
            name, op, c = test
            if body and op in _NONZERO_IF_TRUE and _NONZERO_IF_TRUE[op](c, 0) or not body and op is gast.Eq \
                    and c == 0:
                inner.nonzero.add(name)
        return inner
