"""activity: which variables carry a derivative of the differentiated inputs.

A variable is active when some assignment gives it a value computed from an
active operand (or stores an active value into it, ``x[i] = v``). Only the
operations verified to carry no derivative give inactive values: comparisons,
shape and dtype attributes, and the primitives registered as
non-differentiable (``def_nondifferentiable``); any other operation of an
active operand gives an active value, which the adjoint generator then
differentiates by its rule or refuses at the user's line. What no rule can
follow is refused here, where it is met: a statement that calls a function
for its effect on an active value (``np.copyto(y, x)``, an in-place method
other than those ``inplace`` rewrites), a result written through ``out=``,
and an active value stored anywhere but into a name or a subscript. Loops are
iterated to a fixpoint. The result is per name, hence conservative: an adjoint
that is always zero at run time is pruned later by the adjoint generator,
which only propagates nonzero ones. Which primitives carry no derivative is
the caller's predicate (reverse mode's is ``transforms.grad.differentiable``),
so the analysis reads no transform's table; reverse and forward mode both
call it, and its refusals name neither.
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Optional, Set

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.nodes import base as _base
from numbax.ast_passes.analyses.nodes import loads as _names
from numbax.errors import NumbaxDifferentiationError


class _Activity:
    def __init__(self, active: Iterable[str], differentiable: Callable[[gast.expr], bool],
                 carriers: Optional[Callable[[gast.expr], Set[str]]] = None):
        self.active: Set[str] = set(active)
        self.differentiable = differentiable
        self.carriers = carriers or _names

    def mark(self, name: str) -> None:
        self.active.add(name)

    def block(self, stmts: List[gast.stmt]) -> None:
        for stmt in stmts:
            if isinstance(stmt, gast.Assign):
                self.assign(stmt)
            elif isinstance(stmt, gast.AugAssign):
                if _names(stmt.value) & self.active:
                    self.mark(_base(stmt.target))
            elif isinstance(stmt, gast.Expr):
                self.effect(stmt)
            elif isinstance(stmt, gast.If):
                self.block(stmt.body)
                self.block(stmt.orelse)
            elif isinstance(stmt, (gast.For, gast.While)):
                size = -1
                while size != len(self.active):
                    size = len(self.active)
                    self.block(stmt.body)

    def effect(self, stmt: gast.Expr) -> None:
        """A call made for its effect: refused when it reads an active value, unless it is verified to carry
        no derivative (``numbax.debug.print``), since it may change that value where no adjoint follows."""
        if not _names(stmt.value) & self.active or isinstance(stmt.value, gast.Constant):
            return
        if isinstance(stmt.value, gast.Call) and not self.differentiable(stmt.value):
            self.written_out(stmt, stmt.value)
            return
        _refuse(stmt, "this statement calls a function for its effect on a differentiated value, which "
                      "numbax has no derivative rule for", "compute a new array instead, or write into it by indexing "
                                                       "(`y[:] = x` for `np.copyto(y, x)`).")

    def written_out(self, stmt: gast.stmt, value: gast.expr) -> None:
        """Refuse a call with an active operand that also writes its result through ``out=``."""
        out = next((k.value for k in getattr(value, "keywords", ()) if k.arg == "out"), None)
        if out is not None and not (isinstance(out, gast.Constant) and out.value is None) and \
                _names(value) & self.active:
            _refuse(stmt, "`out=` writes a differentiated result into an existing array, which numbax's "
                          "differentiation cannot follow", "assign the result instead: `y = f(x)`, or `y[...] = f(x)`.")

    def assign(self, stmt: gast.Assign) -> None:
        target, value = stmt.targets[0], stmt.value
        self.written_out(stmt, value)
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
            if _names(value) & self.active:
                _refuse(stmt, "numbax stores a differentiated value only into a name or a subscript",
                        "assign it to a name, or write it by indexing.")
            return
        if isinstance(value, gast.Name):
            active = value.id in self.active
        elif isinstance(value, gast.Subscript):
            active = _names(value.value) & self.active
        else:
            active = bool(self.carriers(value) & self.active) and self.differentiable(value)
        if active:
            self.mark(target.id)


def _refuse(stmt: gast.stmt, message: str, hint: str) -> None:
    raise NumbaxDifferentiationError(message, anno.getanno(stmt, anno.Key.ORIGIN), hint=hint)


def active_names(fdef: gast.FunctionDef, inputs: Iterable[str], differentiable: Callable[[gast.expr], bool],
                 carriers: Optional[Callable[[gast.expr], Set[str]]] = None) -> Set[str]:
    """The names in ``fdef`` (canonical form) that depend differentiably on ``inputs``; ``carriers(value)``:
    the names a right-hand side's derivative may flow from (every name it reads, unless given: forward mode
    leaves out the operands its rule reads for their shape only, ``d[x] = None``)."""
    analysis = _Activity(inputs, differentiable, carriers)
    size = -1
    while size != len(analysis.active):
        size = len(analysis.active)
        analysis.block(fdef.body)
    return analysis.active
