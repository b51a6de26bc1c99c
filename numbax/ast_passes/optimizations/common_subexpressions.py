"""common_subexpressions: a pure call or operation computed again from the same values reads the first result.

Expects any function. A statement ``t = e``, ``e`` a pure call or operation (``a @ x``, ``np.exp(z)``,
``rt.unreduce(...)``) or a read of an element at constant indices (``x[0]``, ``x[1, 2]``), becomes ``t = s``
where an earlier statement ``s = e`` of its block, or of a block around it, computed the same expression, and:

- ``s`` and ``t`` are each assigned once, and every name ``e`` reads is assigned at most once (a parameter
  counts) and not since ``s = e`` (nor anywhere in a loop entered since);
- nothing writes into the arrays of ``s``, ``t`` or of what ``e`` reads, directly or through a name that may
  share their memory (``aliasing``): the two names then hold equal values for as long as they live.

Calls with effects (``purity``: ``np.random``, run-time checks, methods that change their receiver), calls
given an ``out=`` array and allocations of uninitialized memory (``np.empty``) are never merged. Where ``e``
raises, its first evaluation raises first. Copy propagation then removes ``t = s``. Jacobians profit: the
primal that a forward sweep and a reverse sweep each compute (``z = a @ x`` in ``hessian``) is computed
once. Reports whether it changed anything.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> src = "def f(a, x):\\n    z = a @ x\\n    w = a @ x\\n    return z + w"
    >>> print(unparse(transform(gast.parse(src).body[0])[0]))
    def f(a, x):
        z = a @ x
        w = z
        return z + w
"""
from __future__ import annotations

from typing import Dict, List, Set, Tuple

import gast

from numbax.ast_passes.analyses.aliasing import linked, sharing
from numbax.ast_passes.analyses.nodes import loads, name
from numbax.ast_passes.analyses.usage import count_names
from numbax.ast_passes.optimizations.hoist_invariants import stored_in, updated_in_place
from numbax.ast_passes.optimizations.purity import is_pure
from numbax.ast_passes.tree_copy import walk

_UNINITIALIZED = {"empty", "empty_like"}


def _mergeable(value: gast.expr) -> bool:
    """A call or an operation that only computes a value (writing into no ``out=``), a value defined by its
    inputs, or a read of an element at constant indices (each inlined copy of a helper reads ``params[0]``; a
    read at a loop's index stays where it is, folded into the expression that uses it)."""
    if isinstance(value, gast.Subscript):
        indices = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
        return isinstance(value.value, gast.Name) and \
            all(isinstance(i, gast.Constant) and type(i.value) is int for i in indices)
    if not isinstance(value, (gast.Call, gast.BinOp, gast.UnaryOp)) or not is_pure(value):
        return False
    return not any(isinstance(n, gast.Call) and (isinstance(n.func, gast.Attribute) and n.func.attr in _UNINITIALIZED
                                                 or any(k.arg == "out" for k in n.keywords))
                   for n in walk(value))


class _Merger:
    """The walk over blocks, with the available expressions: text -> (the name holding it, the names read)."""

    def __init__(self, fdef: gast.FunctionDef):
        self.stores, _ = count_names(fdef)
        self.written = linked(updated_in_place(fdef.body), sharing(fdef))
        self.changed = False

    def _fixed(self, names: Set[str]) -> bool:
        return all(self.stores[n] <= 1 and n not in self.written for n in names)

    def block(self, stmts: List[gast.stmt], available: Dict[str, Tuple[str, Set[str]]]) -> None:
        available = dict(available)
        for stmt in stmts:
            key = self._assignment(stmt)  # (merging inside a block changes only what pure values read)
            stored = stored_in([stmt]) if available or key is not None else set()
            if isinstance(stmt, (gast.For, gast.While)):  # what the loop assigns changes from one iteration on
                inner = {k: v for k, v in available.items() if not v[1] & stored}
                self.block(stmt.body, inner)
                self.block(stmt.orelse, inner)
            elif isinstance(stmt, gast.If):
                self.block(stmt.body, available)
                self.block(stmt.orelse, available)
            available = {k: v for k, v in available.items() if not v[1] & stored}
            if key is None:
                continue
            target, text, read = key
            if text in available:
                stmt.value = name(available[text][0])
                self.changed = True
            elif not read & stored:
                available[text] = (target, read)

    def _assignment(self, stmt: gast.stmt):
        """``(target, text of the value, names it reads)`` for ``t = e`` that may be merged, else None."""
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            return None
        target, value = stmt.targets[0].id, stmt.value
        read = loads(value)
        if not _mergeable(value) or not self._fixed(read | {target}):
            return None
        return target, gast.dump(value), read


def transform(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """Merge the repeated pure computations of ``fdef``; ``(fdef, changed)``."""
    merger = _Merger(fdef)
    merger.block(fdef.body, {})
    return fdef, merger.changed
