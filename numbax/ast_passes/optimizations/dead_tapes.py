"""dead_tapes: remove a list that is only appended to and popped from where nothing reads what is popped.

Reverse mode keeps arrays of a loop on a list tape (``t = []``, ``t.append(x)`` forward, ``x1 = t.pop()``
backward). Where the backward code no longer reads the items (``scalarize`` knows their length and made the
code that needed their shape numbers), the list, its appends and its pops are dead together; dead-code
elimination cannot see it, as each append and pop has an effect on the list. Reports whether it changed
anything.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> f = gast.parse("def f(x):\\n    t = []\\n    t.append(x)\\n    y = t.pop()\\n    return x").body[0]
    >>> print(unparse(transform(f)[0]))
    def f(x):
        return x
"""
from __future__ import annotations

from typing import Optional, Set, Tuple

import gast

from numbax.ast_passes.analyses.avals import tape_of
from numbax.ast_passes.analyses.usage import count_names
from numbax.ast_passes.tree_copy import walk


def _use(stmt: gast.stmt) -> Optional[Tuple[str, str]]:
    """``("t", "append")`` for ``t.append(x)``, ``("t", "pop")`` for ``t.pop()`` or ``y = t.pop()``."""
    if isinstance(stmt, gast.Expr) and tape_of(stmt.value, "append"):
        return tape_of(stmt.value, "append"), "append"
    if isinstance(stmt, gast.Expr) or isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], gast.Name):
        return (tape_of(stmt.value, "pop"), "pop") if tape_of(stmt.value, "pop") else None
    return None


def transform(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """``fdef`` without its dead tapes; whether it changed."""
    stores, loads = count_names(fdef)
    lists = {s.targets[0].id for s in walk(fdef) if isinstance(s, gast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.List) and not s.value.elts
             and stores[s.targets[0].id] == 1}
    counted = {t: 0 for t in lists}
    for stmt in walk(fdef):
        use = _use(stmt) if isinstance(stmt, gast.stmt) else None
        if use is None or use[0] not in lists:
            continue
        if use[1] == "pop" and isinstance(stmt, gast.Assign) and loads[stmt.targets[0].id]:
            lists.discard(use[0])  # what it pops is read
        counted[use[0]] += 1
    dead: Set[str] = {t for t in lists if counted[t] == loads[t]}  # read by nothing but its appends and pops
    if not dead:
        return fdef, False

    def keep(stmt: gast.stmt) -> bool:
        use = _use(stmt)
        if use is not None and use[0] in dead:
            return False
        return not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
                    and stmt.targets[0].id in dead)

    def prune(block: list) -> list:
        out = []
        for stmt in block:
            if not keep(stmt):
                continue
            for field in ("body", "orelse"):
                if isinstance(getattr(stmt, field, None), list):
                    setattr(stmt, field, prune(getattr(stmt, field)) or [gast.Pass()])
            out.append(stmt)
        return out

    fdef.body = prune(fdef.body)
    return fdef, True
