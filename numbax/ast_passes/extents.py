"""Which names hold an array's extent, and which loop indices therefore stay in bounds (for ``run_time_checks``).

Reads A-normal form in order: after ``t = x.shape`` and ``n = t[1]`` (or
``n = len(x)`` for axis 0), ``n`` is ``x``'s extent along axis 1 until ``n``,
``t`` or ``x`` is assigned again. In ``for j in range(n)`` or
``range(start, n)`` with a constant ``start >= 0``, ``x[..., j, ...]`` at that
axis is in bounds wherever neither ``j`` nor ``x`` is assigned in the loop.
A loop's body starts from what holds on every iteration: nothing it assigns.
"""
from __future__ import annotations

from typing import Dict, Iterable, Optional, Set, Tuple

import gast


def rebound_names(node: gast.AST) -> Set[str]:
    """The names a statement (with its blocks) binds again (an update through a subscript keeps the shape)."""
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _name(node: gast.expr) -> Optional[str]:
    return node.id if isinstance(node, gast.Name) else None


class Extents:
    """Facts ``name -> (array, axis)`` (``name`` is the array's extent) and ``name -> array`` (its shape)."""

    def __init__(self, extents: Optional[Dict[str, Tuple[str, int]]] = None,
                 shapes: Optional[Dict[str, str]] = None):
        self.extents = dict(extents or {})
        self.shapes = dict(shapes or {})

    def assign(self, stmt: gast.stmt) -> None:
        """Update the facts after ``stmt``, a statement without blocks."""
        self.forget(rebound_names(stmt))
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            return
        target, value = stmt.targets[0].id, stmt.value
        if isinstance(value, gast.Attribute) and value.attr == "shape" and _name(value.value):
            self.shapes[target] = value.value.id
        elif isinstance(value, gast.Subscript) and _name(value.value) in self.shapes and \
                isinstance(value.slice, gast.Constant) and type(value.slice.value) is int and value.slice.value >= 0:
            self.extents[target] = (self.shapes[value.value.id], value.slice.value)
        elif isinstance(value, gast.Call) and _name(value.func) == "len" and len(value.args) == 1 and \
                _name(value.args[0]):
            self.extents[target] = (value.args[0].id, 0)

    def forget(self, names: Iterable[str]) -> None:
        """Drop every fact about ``names`` (assigned again)."""
        names = set(names)
        self.extents = {k: v for k, v in self.extents.items() if k not in names and v[0] not in names}
        self.shapes = {k: v for k, v in self.shapes.items() if k not in names and v not in names}

    def entering(self, stmt: gast.stmt) -> "Extents":
        """The facts that hold inside ``stmt``'s blocks: a loop may have assigned anything it assigns."""
        inner = Extents(self.extents, self.shapes)
        if isinstance(stmt, (gast.For, gast.While)):
            inner.forget(rebound_names(stmt))
        return inner

    def safe_indices(self, stmt: gast.stmt) -> Set[Tuple[str, str, str]]:
        """``(array, index, axis)`` as ``run_time_checks`` writes them, in bounds in the body of ``stmt``."""
        if not isinstance(stmt, gast.For) or not isinstance(stmt.target, gast.Name):
            return set()
        call = stmt.iter
        if not (isinstance(call, gast.Call) and _name(call.func) == "range" and 1 <= len(call.args) <= 2
                and not call.keywords):
            return set()
        start = call.args[0] if len(call.args) == 2 else gast.Constant(value=0, kind=None)
        fact = self.extents.get(_name(call.args[-1]))
        if fact is None or not (isinstance(start, gast.Constant) and type(start.value) is int and start.value >= 0):
            return set()
        array, axis = fact
        index = stmt.target.id
        if {array, index} & rebound_names(gast.Module(body=stmt.body, type_ignores=[])):
            return set()
        return {(array, index, str(axis))}
