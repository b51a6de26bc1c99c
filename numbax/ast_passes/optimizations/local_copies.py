"""local_copies: copies of a name that is assigned more than once, resolved within one block.

``copy_propagation`` needs both names assigned once. Reverse mode also makes
copies of adjoints that loops update, ``dy_out = dy`` followed by
``dy = dy_out`` and reads of ``dy_out`` before ``dy`` changes again. Within one
block, the copy back is a no-op and goes, and a once-assigned copy whose every
read comes before its source is assigned again reads the source instead.
Expects any function; reports whether it changed anything.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> f = gast.parse("def f(dy, n):\\n    for i in range(n):\\n        d = dy\\n        dy = d\\n"
    ...                "        g = d * 2.0\\n        dy = dy + g\\n    return dy").body[0]
    >>> print(unparse(transform(f)[0]))
    def f(dy, n):
        for i in range(n):
            g = dy * 2.0
            dy = dy + g
        return dy
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import gast

from numbax.ast_passes.analyses.usage import count_names
from numbax.ast_passes.tree_copy import walk


def _copy(stmt: gast.stmt) -> Optional[Tuple[str, str]]:
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
            and isinstance(stmt.value, gast.Name):
        return stmt.targets[0].id, stmt.value.id
    return None


def _assigns(stmt: gast.stmt, name: str) -> bool:
    for node in walk(stmt):
        if isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, (gast.Store, gast.Del)):
            return True
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) and node.target.id == name:
            return True
    return False


def _reads(stmt: gast.stmt, name: str) -> List[gast.Name]:
    found = [n for n in walk(stmt) if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)]
    augmented = [n for n in walk(stmt) if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)
                 and n.target.id == name]
    return found if not augmented else found + [None]


def _block(stmts: List[gast.stmt], stores, loads) -> Tuple[List[gast.stmt], bool]:
    changed = False
    for stmt in stmts:
        for field in ("body", "orelse"):
            block = getattr(stmt, field, None)
            if isinstance(block, list) and block:
                new, did = _block(block, stores, loads)
                setattr(stmt, field, new)
                changed |= did
    out: List[gast.stmt] = []
    i = 0
    while i < len(stmts):
        stmt = stmts[i]
        copy = _copy(stmt)
        if copy is None or copy[0] == copy[1]:
            out.append(stmt)
            i += 1
            continue
        a, b = copy
        rest = stmts[i + 1:]
        if rest and _copy(rest[0]) == (b, a):  # ``a = b; b = a``: the second changes nothing
            rest = rest[1:]
            stores[b] -= 1
            loads[a] -= 1
            changed = True
        if stores[a] == 1 and _forward(a, b, rest, loads):
            stores[a] -= 1
            changed = True
        else:
            out.append(stmt)
        stmts = stmts[:i + 1] + rest
        i += 1
    return out, changed


def _forward(a: str, b: str, rest: List[gast.stmt], loads) -> bool:
    """Make every read of ``a`` read ``b`` when all of them come before ``b`` is next assigned."""
    reads: List[gast.Name] = []
    for stmt in rest:
        found = _reads(stmt, a)
        if found and isinstance(stmt, gast.Return):
            return False  # ``dy0 = dy; return dy0``: the returned gradient keeps its parameter's name
        if None in found:
            return False
        if _assigns(stmt, b):
            if found and not (isinstance(stmt, gast.Assign) and not any(
                    n.id == a for t in stmt.targets for n in walk(t) if isinstance(n, gast.Name))):
                return False
            reads += found
            break
        reads += found
    if len(reads) != loads[a]:
        return False  # read somewhere else too (after b changes, or around a loop)
    for node in reads:
        node.id = b
    loads[b] += len(reads)
    loads[a] = 0
    return True


def transform(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """Resolve ``fdef``'s block-local copies; ``(fdef, changed)``."""
    stores, loads = count_names(fdef)
    fdef.body, changed = _block(fdef.body, stores, loads)
    return fdef, changed
