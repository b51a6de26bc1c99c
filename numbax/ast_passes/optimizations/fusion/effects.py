"""What a simple statement reads and writes, and which array names may share memory.

Fusion moves statements past each other; two statements commute when neither
writes what the other reads or writes. Arrays complicate "what": a view
``dx_view = dx[:-1]`` shares ``dx``'s memory, so names are compared through
their alias classes, built once per function from every assignment whose
right-hand side may return (part of) an array it reads.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, FrozenSet, Iterable, Optional, Set

import gast

from numbax.ast_passes.analyses.avals import row_store
from numbax.ast_passes.analyses.nodes import base
from numbax.ast_passes.analyses.nodes import loads as _loads
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.optimizations.purity import is_check, is_pure

# runtime helpers and NumPy functions that return a new array, never one they were given
_FRESH = {"zeros_like", "ones_like", "empty_like", "zeros", "ones", "empty", "full", "full_like",
          "chooser_weights", "copy_of", "copy", "sum", "mean", "prod", "max", "min", "dot", "matmul", "outer"}
_TAPE_METHODS = {"append", "pop"}
_MODULES = frozenset({"np", "rt", "math", "cmath"})


def loads(node: gast.AST) -> Set[str]:
    """The variables ``node`` reads (the modules generated code imports left out)."""
    return _loads(node) - _MODULES


@dataclasses.dataclass(frozen=True)
class Effects:
    """The names a statement reads and the names it assigns or mutates."""

    reads: FrozenSet[str]
    writes: FrozenSet[str]


def _fresh(value: gast.expr) -> bool:
    """Whether ``value`` evaluates to a new array (or a scalar), never a view of a name it reads."""
    if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Constant)):
        return True
    app = application(value) if isinstance(value, gast.Call) else None
    if app is None:
        return False
    key = app.key
    name = key[1] if isinstance(key, tuple) else getattr(key, "__name__", "")
    return name.split(".")[-1] in _FRESH or type(key).__name__ == "ufunc"


class Aliases:
    """Union-find over array names: two names in one class may share memory."""

    def __init__(self, fdef: gast.FunctionDef, scalars: Set[str]):
        self.parent: Dict[str, str] = {}
        held: Dict[str, Set[str]] = {}  # tape -> the names appended to it
        for node in gast.walk(fdef):
            if isinstance(node, gast.Expr) and _tape_operation(node.value) and node.value.func.attr == "append":
                held.setdefault(node.value.func.value.id, set()).update(loads(node.value.args[0]) - scalars)
        for node in gast.walk(fdef):
            if isinstance(node, gast.Assign) and not _fresh(node.value):
                tape = _tape_operation(node.value)
                reads = set().union(*(held.get(t, set()) for t in tape)) if tape else loads(node.value) - scalars
                for target in gast.walk(node.targets[0]):
                    if isinstance(target, gast.Name) and target.id not in scalars:
                        for read in reads:
                            self._union(target.id, read)
        self.members: Dict[str, Set[str]] = {}  # root -> the names ``parent`` holds in its class
        for name in self.parent:
            self.members.setdefault(self._find(name), set()).add(name)

    def _find(self, name: str) -> str:
        while self.parent.get(name, name) != name:
            name = self.parent[name]
        return name

    def _union(self, a: str, b: str) -> None:
        self.parent[self._find(a)] = self._find(b)

    def closure(self, names: Iterable[str]) -> Set[str]:
        """``names`` and every name that may share memory with one of them."""
        roots = {self._find(n) for n in names}
        out = set(names) | roots  # a class's root is a member that ``parent`` may hold no entry for
        for root in roots:
            out |= self.members.get(root, set())
        return out


def statement_effects(stmt: gast.stmt) -> Optional[Effects]:
    """The effects of an assignment, a tape operation, a row save or a run-time check (it only reads: the loops
    fused around it raise nothing, their floats following NumPy's error model); None for anything else (control
    flow, effects)."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, (gast.Name, gast.Tuple)) and all(
                isinstance(n, (gast.Name, gast.Tuple, gast.Store)) for n in gast.walk(target)):
            writes = {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}
        elif isinstance(target, gast.Subscript):
            writes = {base(target)}
        else:
            return None
        tape = _tape_operation(stmt.value)
        if tape is None and not is_pure(stmt.value):
            return None
        reads = loads(stmt.value) | (loads(target) if isinstance(target, gast.Subscript) else set())
        return Effects(frozenset(reads), frozenset(writes | (tape or set())))
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, (gast.Name, gast.Subscript)):
        if not is_pure(stmt.value):
            return None
        return Effects(frozenset(loads(stmt.value) | loads(stmt.target) | {base(stmt.target)}),
                       frozenset({base(stmt.target)}))
    if isinstance(stmt, gast.Expr):
        tape = _tape_operation(stmt.value)
        table = row_store(stmt.value)
        if table is not None and all(is_pure(a) for a in stmt.value.args):  # a copy into a row of ``table``
            return Effects(frozenset(loads(stmt.value)), frozenset({table}))
        if is_check(stmt.value) and all(is_pure(a) for a in stmt.value.args):
            return Effects(frozenset(loads(stmt.value)), frozenset())
        if tape is None:
            return None
        return Effects(frozenset(loads(stmt.value)), frozenset(tape))
    return None


def _tape_operation(value: gast.expr) -> Optional[Set[str]]:
    """``{tape}`` for ``tape.append(v)`` or ``tape.pop()`` on a list of pure arguments, else None."""
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
            value.func.attr in _TAPE_METHODS and isinstance(value.func.value, gast.Name) and \
            all(is_pure(a) for a in value.args) and not value.keywords:
        return {value.func.value.id}
    return None
