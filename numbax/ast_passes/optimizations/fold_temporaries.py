"""fold_temporaries: put single-use temporaries back into the statement that uses them.

A-normal form is for transformations; people read nested expressions. Expects
any function; guarantees that no pure temporary ``_tN`` that is assigned once
and read once, by the statement right after it (run-time checks between,
which only read, aside), remains. Reports whether it changed anything. Only
the parts of that statement evaluated first are candidates (never a ``while``
test or a nested block), so order is kept.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> f = gast.parse("def f(x, w):\\n    _t1 = x @ w\\n    _t2 = np.tanh(_t1)\\n    return _t2").body[0]
    >>> print(unparse(transform(f)[0]))
    def f(x, w):
        return np.tanh(x @ w)
"""
from __future__ import annotations

from typing import List, Tuple

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.usage import count_names
from numbax.ast_passes.naming import is_temp
from numbax.ast_passes.optimizations.purity import is_check, is_pure


def _immediate(stmt: gast.stmt) -> List[str]:
    """The fields of ``stmt`` holding what it evaluates before anything else it does."""
    if isinstance(stmt, gast.Assign):
        return ["value"] + (["targets"] if not isinstance(stmt.targets[0], gast.Name) else [])
    if isinstance(stmt, gast.AugAssign):
        return ["value", "target"]
    if isinstance(stmt, (gast.Return, gast.Expr)):
        return ["value"] if stmt.value is not None else []
    if isinstance(stmt, (gast.If, gast.Assert)):
        return ["test"]
    if isinstance(stmt, gast.For):
        return ["iter"]
    return []


class _Substitute(gast.NodeTransformer):
    def __init__(self, name: str, value: gast.expr):
        self.name, self.value, self.done = name, value, False

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, gast.Load):
            self.done = True
            return self.value
        return node


def _foldable(stmt, stores, loads) -> str:
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
        name = stmt.targets[0].id
        if is_temp(name) and stores[name] == 1 and loads[name] == 1 and is_pure(stmt.value):
            return name
    return ""


def _keep_origin(folded: gast.stmt, user: gast.stmt) -> None:
    """A statement of numbax's own (grad's output check) that takes in the user's expression takes its line
    too, so that an error compiling it names the user's line."""
    if not anno.hasanno(user, anno.Key.ORIGIN) and anno.hasanno(folded, anno.Key.ORIGIN):
        anno.setanno(user, anno.Key.ORIGIN, anno.getanno(folded, anno.Key.ORIGIN))


def _fold_block(stmts: List[gast.stmt], stores, loads) -> Tuple[List[gast.stmt], bool]:
    changed = False
    for stmt in stmts:
        for field in ("body", "orelse"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                new, sub = _fold_block(block, stores, loads)
                setattr(stmt, field, new)
                changed |= sub
    out: List[gast.stmt] = []
    for stmt in reversed(stmts):
        name = _foldable(stmt, stores, loads)
        users = [s for s in reversed(out) if not (isinstance(s, gast.Expr) and is_check(s.value))]
        if name and users:
            sub, user = _Substitute(name, stmt.value), users[0]
            for field in _immediate(user):
                value = getattr(user, field)
                if not sub.done:
                    setattr(user, field, [sub.visit(v) for v in value] if isinstance(value, list) else sub.visit(value))
            if sub.done:
                _keep_origin(stmt, user)
                changed = True
                continue
        out.append(stmt)
    return list(reversed(out)), changed


def transform(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """Fold single-use temporaries of ``fdef``; ``(fdef, changed)``."""
    stores, loads = count_names(fdef)
    fdef.body, changed = _fold_block(fdef.body, stores, loads)
    return fdef, changed
