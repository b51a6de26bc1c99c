"""What ``vmap``'s loops over examples look like to the passes that rewrite them (``vectorize``,
``first_example``) and to ``row_checks``: the loop's bounds, the first example computed before it to size the
outputs, and the branch that sizes them on the first iteration instead. Reads the tree, never changes it."""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import gast

from numbax.ast_passes.analyses.nodes import loads
from numbax.ast_passes.analyses.primitives import application


def bounds(loop: gast.For) -> Optional[Tuple[gast.expr, gast.expr]]:
    """``(first, last)`` of ``for i in range(first, last):``, else None."""
    it = loop.iter
    if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range" \
            and len(it.args) == 2 and not it.keywords and isinstance(loop.target, gast.Name):
        return it.args[0], it.args[1]
    return None


def peeled(before: List[gast.stmt], first: gast.expr, outputs: Set[str]) \
        -> Optional[Dict[str, Tuple[gast.Assign, gast.Assign]]]:
    """``vmap``'s first example, computed before a loop from 1 to learn the outputs' shapes: for each array the
    loop fills, ``(out = rt.stack_buffer(first, n), out[0] = first)`` among the statements ``before`` it, when
    those two are all that they do with ``out``; else None."""
    if not (isinstance(first, gast.Constant) and first.value == 1) or not outputs:
        return None
    found = {}
    for out in outputs:
        using = [stmt for stmt in before if any(isinstance(n, gast.Name) and n.id == out for n in gast.walk(stmt))]
        if len(using) != 2 or not all(isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 for stmt in using):
            return None
        allocation, store = using
        app = application(allocation.value) if isinstance(allocation.value, gast.Call) else None
        target = store.targets[0]
        if app is None or app.name != "rt.stack_buffer" or len(app.args) != 2 or app.keywords or \
                not isinstance(allocation.targets[0], gast.Name) or not isinstance(target, gast.Subscript) or \
                not (isinstance(target.slice, gast.Constant) and target.slice.value == 0) or \
                not (isinstance(store.value, gast.Name) and isinstance(app.args[0], gast.Name)
                     and store.value.id == app.args[0].id):
            return None
        found[out] = (allocation, store)
    return found


def carried(stmts: List[gast.stmt], assigned: Set[str], seen: Set[str]) -> bool:
    """Whether a statement reads a name assigned in the loop before the loop assigns it (a value carried from
    the example before), inner loops' bodies in order too."""
    for stmt in stmts:
        if isinstance(stmt, gast.For):
            if loads(stmt.iter) & (assigned - seen):
                return True
            seen |= {n.id for n in gast.walk(stmt.target) if isinstance(n, gast.Name)}
            if carried(stmt.body, assigned, seen):
                return True
            continue
        if loads(stmt) & (assigned - seen):
            return True
        seen |= {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return False


def on_first_iteration(stmt: gast.stmt) -> bool:
    """Whether ``stmt`` is ``if i == 0:``, the branch in which a loop over examples sizes its outputs from the
    first example's values (``first_example``): what it allocates is sized by one example, not proven to fit
    every example."""
    test = stmt.test if isinstance(stmt, gast.If) else None
    return isinstance(test, gast.Compare) and isinstance(test.left, gast.Name) and len(test.ops) == 1 and \
        isinstance(test.ops[0], gast.Eq) and isinstance(test.comparators[0], gast.Constant) and \
        test.comparators[0].value == 0 and not isinstance(test.comparators[0].value, bool)
