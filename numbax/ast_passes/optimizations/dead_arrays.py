"""dead_arrays: an array that is made and written into but never read is not made.

The forward mode of a gradient (``jvp`` of ``grad``, a Hessian-vector product) computes the gradient
``dx`` beside its tangent ``ddx`` and returns only ``ddx``; the tangent's zeros are made from the
gradient's, ``ddx = rt.zeros_like(dx)``. This pass makes them from what ``dx``'s were made from
(``rt.zeros_like(x)``), and then removes every array that is allocated once, read by nothing but
writes into it (``dx[:-1] += g``, ``dx[j] = v``, reverse mode's ``rt.save_row(t_rows, row, v)`` into a table
whose rows nothing reads once their shapes are known), and written with values and indices without effects:
the allocation and the writes. Dead code then removes what computed the values. Expects any function;
reports whether it changed anything.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> f = gast.parse("def f(x, g):\\n    dx = rt.zeros_like(x)\\n    ddx = rt.zeros_like(dx)\\n"
    ...                "    dx[1:] += g\\n    ddx[1:] += 2.0 * g\\n    return ddx").body[0]
    >>> print(unparse(transform(f)[0]))
    def f(x, g):
        ddx = rt.zeros_like(x)
        ddx[1:] += 2.0 * g
        return ddx
"""
from __future__ import annotations

from typing import Dict, Set, Tuple

import gast

from numbax.ast_passes.analyses.avals import row_store
from numbax.ast_passes.analyses.nodes import in_order
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.usage import count_names
from numbax.ast_passes.optimizations.dead_code import remove_where
from numbax.ast_passes.optimizations.purity import is_pure

# calls that return a new array whose contents nothing else holds
ALLOCATIONS = frozenset({"rt.zeros_like", "np.zeros", "np.ones", "np.empty", "np.full", "np.zeros_like",
                          "np.ones_like", "np.empty_like", "np.full_like",
                          "rt.stack_buffer", "rt.stack_rows"})  # (vmap's outputs: a first example's nothing reads)


def _allocation(stmt: gast.stmt):
    """``(name, call)`` of ``name = <allocation>(...)``, else None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) and \
            isinstance(stmt.value, gast.Call):
        app = application(stmt.value)
        if app is not None and app.name in ALLOCATIONS and is_pure(stmt.value):
            return stmt.targets[0].id, stmt.value
    return None


def _zeros_of_name(call: gast.Call):
    """``y`` of ``rt.zeros_like(y)`` for a name ``y``, else None."""
    app = application(call)
    if app is None or app.name != "rt.zeros_like" or len(app.args) != 1 or app.keywords or \
            not isinstance(app.args[0], gast.Name):
        return None
    return app.args[0].id


def _shape_sources(fdef: gast.FunctionDef, stores) -> bool:
    """``b = rt.zeros_like(a)`` after ``a = rt.zeros_like(y)``, all three assigned once at the top level:
    ``b = rt.zeros_like(y)`` (the same shape and dtype; ``a`` no longer read for it)."""
    sources: Dict[str, str] = {}
    changed = False
    for stmt in fdef.body:
        made = _allocation(stmt)
        if made is None or stores[made[0]] != 1:
            continue
        target, call = made
        source = _zeros_of_name(call)
        if source is None or stores[source] > 1:
            continue
        if source in sources:
            call.args[0] = gast.Name(id=sources[source], ctx=gast.Load(), annotation=None, type_comment=None)
            changed = True
        sources[target] = sources.get(source, source)
    return changed


def _write(stmt: gast.stmt):
    """``array`` of ``array[index] = v``, ``array[index] op= v`` or ``rt.save_row(array, row, v)`` (reverse mode
    saving a row) with ``v`` and the index free of effects, else None."""
    if isinstance(stmt, gast.Expr) and row_store(stmt.value) and all(is_pure(a) for a in stmt.value.args[1:]):
        return row_store(stmt.value)
    if isinstance(stmt, gast.AugAssign):
        target = stmt.target
    elif isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    else:
        return None
    if not isinstance(target, gast.Subscript) or not isinstance(target.value, gast.Name) or \
            not is_pure(stmt.value) or not is_pure(target.slice):
        return None
    return target.value.id


def _doomed(dead: Set[str]):
    def doomed(stmt: gast.stmt) -> bool:
        made = _allocation(stmt)
        return (made is not None and made[0] in dead) or _write(stmt) in dead

    return doomed


def transform(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """Remove the arrays of ``fdef`` that are only written; ``(fdef, changed)``."""
    stores, _ = count_names(fdef)
    changed = _shape_sources(fdef, stores)
    _, loads = count_names(fdef)
    allocated, writes = set(), {}
    for stmt, _ in in_order(fdef.body):  # a write in a block it does not enter counts as a read: kept
        made = _allocation(stmt)
        if made is not None and stores[made[0]] == 1:
            allocated.add(made[0])
        array = _write(stmt)
        if array is not None:
            writes[array] = writes.get(array, 0) + 1
    dead = {a for a in allocated if a in writes and loads[a] == writes[a]}  # every read is a write into it
    if dead:
        fdef.body = remove_where(fdef.body, _doomed(dead)) or [gast.Pass()]
        changed = True
    return fdef, changed

