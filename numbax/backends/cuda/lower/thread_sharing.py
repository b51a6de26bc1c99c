"""thread_sharing: which arrays of one example's body NumPy would have share memory, and what is read later.

A thread's arrays are values (``thread_arrays``): ``z = y`` copies, where NumPy makes ``z`` another name of
the memory of ``y``. The two agree until one of them is written into while the other is still read, so
``thread_arrays`` follows which names may share memory (joined where paths meet: ``joined``) and refuses a
write into an array only where a name sharing its memory may be read afterwards (``read_after``). Reverse
mode keeps such a name to undo writes (``y_3 = y`` ... ``y_3[2] = y_old``) and never reads it, so its
code passes.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, List, Set

import gast


def read_after(body: List[gast.stmt], stmt: gast.stmt) -> Set[str]:
    """The names that may be read after ``stmt`` runs in ``body``: in the statements that follow it, and
    anywhere in the loops around it (their next iterations). The array written at an element, ``y`` of
    ``y[k] = v``, is not read there."""
    after: Set[str] = set()
    found = _reads_after(body, stmt, after)
    assert found, "read_after of a statement outside the body"
    return after


def _reads_after(stmts: List[gast.stmt], stmt: gast.stmt, after: Set[str]) -> bool:
    """Add to ``after`` what ``stmts`` read after ``stmt`` (see ``read_after``); whether ``stmt`` is there."""
    for k, current in enumerate(stmts):
        inner = [getattr(current, field) for field in ("body", "orelse") if isinstance(getattr(current, field, None),
                                                                                      list)]
        if current is stmt or any(_reads_after(block, stmt, after) for block in inner):
            after |= _reads(stmts[k + 1:])
            if isinstance(current, (gast.For, gast.While)) and current is not stmt:
                after |= _reads([current])
            return True
    return False


def _reads(stmts: List[gast.stmt]) -> Set[str]:
    nodes = list(gast.walk(gast.Module(body=stmts, type_ignores=[])))
    written = {id(n.value) for n in nodes if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)}
    return {n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in written}


def joined(a: Dict[str, FrozenSet[str]], b: Dict[str, FrozenSet[str]]) -> Dict[str, FrozenSet[str]]:
    """What may share memory where two paths join: what does on either."""
    return {name: a.get(name, frozenset()) | b.get(name, frozenset()) for name in set(a) | set(b)}
