"""activity: which variables carry a derivative of the differentiated inputs.

A variable is active when some assignment gives it a value computed by a
differentiable operation from an active operand (or stores an active value
into it, ``x[i] = v``). Comparisons, shapes, indices and calls with no
derivative give inactive values. Loops are iterated to a fixpoint. The result
is per name, hence conservative: an adjoint that is always zero at run time
is pruned later by the adjoint generator, which only propagates nonzero ones.
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Set

import gast

from numbax.transforms.grad.nodes import base as _base
from numbax.transforms.grad.nodes import loads as _names


class _Activity:
    def __init__(self, active: Iterable[str], differentiable: Callable[[gast.expr], bool]):
        self.active: Set[str] = set(active)
        self.differentiable = differentiable

    def mark(self, name: str) -> None:
        self.active.add(name)

    def block(self, stmts: List[gast.stmt]) -> None:
        for stmt in stmts:
            if isinstance(stmt, gast.Assign):
                self.assign(stmt)
            elif isinstance(stmt, gast.AugAssign):
                if _names(stmt.value) & self.active:
                    self.mark(_base(stmt.target))
            elif isinstance(stmt, gast.If):
                self.block(stmt.body)
                self.block(stmt.orelse)
            elif isinstance(stmt, (gast.For, gast.While)):
                size = -1
                while size != len(self.active):
                    size = len(self.active)
                    self.block(stmt.body)

    def assign(self, stmt: gast.Assign) -> None:
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, gast.Tuple):
            values = value.elts if isinstance(value, gast.Tuple) else [value] * len(target.elts)
            for t, v in zip(target.elts, values):
                self.assign(gast.Assign(targets=[t], value=v, type_comment=None))
            return
        if isinstance(target, gast.Subscript):
            if _names(value) & self.active:
                self.mark(_base(target))
            return
        if not isinstance(target, gast.Name):
            return
        if isinstance(value, gast.Name):
            active = value.id in self.active
        elif isinstance(value, gast.Subscript):
            active = _names(value.value) & self.active
        else:
            active = bool(_names(value) & self.active) and self.differentiable(value)
        if active:
            self.mark(target.id)


def active_names(fdef: gast.FunctionDef, inputs: Iterable[str], differentiable: Callable[[gast.expr], bool]) -> Set[str]:
    """The names in ``fdef`` (canonical form) that depend differentiably on ``inputs``."""
    analysis = _Activity(inputs, differentiable)
    size = -1
    while size != len(analysis.active):
        size = len(analysis.active)
        analysis.block(fdef.body)
    return analysis.active
