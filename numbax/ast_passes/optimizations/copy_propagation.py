"""copy_propagation: remove ``a = b`` copies between names that are each assigned once.

Expects any function; guarantees that a copy between two single-assignment
names is gone, keeping the more readable name: a parameter keeps its name, a
temporary gives way to the user's name. Parallel copies ``a, b = (c, d)`` are
first split when that cannot change their meaning. Reports whether it changed anything.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> f = gast.parse("def f(x):\\n    _t1 = x * 2\\n    y = _t1\\n    return y").body[0]
    >>> print(unparse(transform(f)[0]))
    def f(x):
        y = x * 2
        return y
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.usage import count_names
from numbax.ast_passes.naming import is_temp
from numbax.ast_passes.tree_copy import names


def _names(expr) -> List[str]:
    if isinstance(expr, gast.Name):
        return [expr.id]
    if isinstance(expr, gast.Tuple) and all(isinstance(e, gast.Name) for e in expr.elts):
        return [e.id for e in expr.elts]
    return []


def _split_parallel(stmts: List[gast.stmt]) -> List[gast.stmt]:
    """``a, b = (c, d)`` -> ``a = c; b = d`` when no target is read on the right."""
    out = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list):
                setattr(stmt, field, _split_parallel(getattr(stmt, field)))
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Tuple) \
                and isinstance(stmt.value, gast.Tuple) and len(stmt.value.elts) == len(stmt.targets[0].elts):
            targets = _names(stmt.targets[0])
            reads = {n.id for n in names(stmt.value)}
            if targets and not reads.intersection(targets) and len(set(targets)) == len(targets):
                for t, v in zip(stmt.targets[0].elts, stmt.value.elts):
                    split = gast.Assign(targets=[t], value=v, type_comment=None)
                    out.append(gast.copy_location(anno.copyanno(stmt, split), stmt))
                continue
        out.append(stmt)
    return out


def _removable(a: str, b: str, stores, loads) -> bool:
    """Both names assigned once, or a temporary (assigned on several paths) read only by this copy."""
    if a == b or stores[a] != 1:
        return False
    return stores[b] == 1 or (is_temp(b) and loads[b] == 1)


def _find_copy(stmts, stores, loads, owner=None) -> Optional[Tuple[gast.Assign, str, str, list, Optional[gast.stmt]]]:
    """The first removable copy ``a = b`` at any depth: ``(stmt, a, b, the block holding it, the statement whose
    ``body`` or ``orelse`` that block is, None at the top)``."""
    for stmt in stmts:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and isinstance(stmt.value, gast.Name):
            a, b = stmt.targets[0].id, stmt.value.id
            if _removable(a, b, stores, loads):
                return stmt, a, b, stmts, owner
        for field in ("body", "orelse"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                found = _find_copy(block, stores, loads, stmt)
                if found:
                    return found
    return None


def _remove(stmt: gast.stmt, block: list, owner: Optional[gast.stmt]) -> None:
    """Take ``stmt`` out of ``block``; an emptied ``body`` of ``owner`` becomes ``pass``."""
    del block[next(i for i, s in enumerate(block) if s is stmt)]
    if not block and owner is not None and owner.body is block:
        owner.body = [gast.Pass()]


def transform(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """Propagate copies in ``fdef``; ``(fdef, changed)``."""
    fdef.body = _split_parallel(fdef.body)
    params = {a.id for a in fdef.args.args}
    changed = False
    stores, loads = count_names(fdef)
    occurrences: Dict[str, List[gast.Name]] = {}  # renaming rewrites these nodes, not the whole tree
    for node in names(fdef):
        occurrences.setdefault(node.id, []).append(node)
    while True:
        found = _find_copy(fdef.body, stores, loads)
        if found is None:
            return fdef, changed
        stmt, a, b, block, owner = found
        _remove(stmt, block, owner)
        stores[a] -= 1
        loads[b] -= 1
        keep_a = b not in params and (is_temp(b) or loads[b] == 0) and not is_temp(a) or stores[b] > 1
        old, new = (b, a) if keep_a else (a, b)
        moved = occurrences.pop(old, [])
        for node in moved:
            node.id = new
        occurrences.setdefault(new, []).extend(moved)
        stores[new] += stores.pop(old, 0)
        loads[new] += loads.pop(old, 0)
        if old in params:
            params = (params - {old}) | {new}
        changed = True
