"""direct_rows: a row a fused loop writes out only for the tape is written into the tape's row.

Reverse mode saves a 1-D array a loop iteration makes by copying it into a row table after the
fused loop that computed it (``rt.save_row(t5_rows, row, _t5)``). When the array is read by
nothing else, the loop stores each element in the table at once::

    for j in range(logits.shape[1]):
        ...
        t5_rows[row, j] = t5_j

and neither the array nor the copy is made. Only where the table's width is, as code, the loop's
extent, and that extent reads unchanged parameters alone (the two lengths are then one).
"""
from __future__ import annotations

from typing import Dict, List, Optional

import gast

from numbax.ast_passes.analyses.nodes import name
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.usage import count_in
from numbax.ast_passes.optimizations.fusion.recompute import remove_statements
from numbax.ast_passes.unparse import unparse


def _save(stmt: gast.stmt) -> Optional[List[gast.expr]]:
    """``[table, row, array]`` of ``rt.save_row(table, row, array)`` with names for table and array."""
    if not isinstance(stmt, gast.Expr) or not isinstance(stmt.value, gast.Call):
        return None
    app = application(stmt.value)
    if app is None or app.name != "rt.save_row" or len(app.args) != 3 or \
            not all(isinstance(a, gast.Name) for a in (app.args[0], app.args[2])):
        return None
    return app.args


def _widths(fdef: gast.FunctionDef) -> Dict[str, str]:
    """Each table made once as ``np.empty((rows, width))``: its width as code."""
    out, made = {}, count_in([fdef])[0]
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) \
                and made[node.targets[0].id] == 1 and isinstance(node.value, gast.Call):
            app = application(node.value)
            shape = app.args[0] if app is not None and app.name == "np.empty" and len(app.args) == 1 else None
            if isinstance(shape, gast.Tuple) and len(shape.elts) == 2:
                out[node.targets[0].id] = unparse(shape.elts[1])
    return out


def _store(loop: gast.For, array: str) -> Optional[gast.Assign]:
    """The loop's one ``array[j] = value`` at its index, at the top level of its body."""
    stores = [s for s in loop.body if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript)
              and isinstance(s.targets[0].value, gast.Name) and s.targets[0].value.id == array]
    index = loop.target
    if len(stores) != 1 or not isinstance(index, gast.Name) or not isinstance(stores[0].targets[0].slice, gast.Name) \
            or stores[0].targets[0].slice.id != index.id:
        return None
    return stores[0]


def _extent(loop: gast.stmt, unchanged) -> Optional[str]:
    if not (isinstance(loop, gast.For) and isinstance(loop.iter, gast.Call) and isinstance(loop.iter.func, gast.Name)
            and loop.iter.func.id == "range" and len(loop.iter.args) == 1):
        return None
    extent = loop.iter.args[0]
    if not {n.id for n in gast.walk(extent) if isinstance(n, gast.Name)} <= set(unchanged):
        return None
    return unparse(extent)


def _direct(fdef, loop: gast.stmt, save: List[gast.expr], widths, unchanged) -> bool:
    """Whether the loop just before ``rt.save_row(table, row, array)`` can store in the table itself."""
    table, row, array = save
    extent = _extent(loop, unchanged)
    return extent is not None and widths.get(table.id) == extent and isinstance(row, gast.Name) and \
        _store(loop, array.id) is not None and count_in([fdef])[1][array.id] == 2 and \
        count_in([loop])[0][row.id] == 0


def _block(stmts: List[gast.stmt], fdef, widths, unchanged, doomed: List[str]) -> List[gast.stmt]:
    out: List[gast.stmt] = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                setattr(stmt, field, _block(inner, fdef, widths, unchanged, doomed))
        save = _save(stmt)
        loop = out[-1] if out else None
        if save is not None and loop is not None and _direct(fdef, loop, save, widths, unchanged):
            table, row, array = save
            store = _store(loop, array.id)
            store.targets[0] = gast.Subscript(value=name(table.id), ctx=gast.Store(),
                                              slice=gast.Tuple(elts=[row, name(loop.target.id)], ctx=gast.Load()))
            doomed.append(array.id)
            continue
        out.append(stmt)
    return out


def write_rows(fdef: gast.FunctionDef, unchanged) -> bool:
    """Store the rows that ``fdef``'s fused loops compute only for a tape in the tape; whether any.
    ``unchanged``: the parameters assigned nowhere."""
    doomed: List[str] = []
    fdef.body = _block(fdef.body, fdef, _widths(fdef), unchanged, doomed)
    allocations = {id(n) for n in gast.walk(fdef) if isinstance(n, gast.Assign) and
                   isinstance(n.targets[0], gast.Name) and n.targets[0].id in doomed}
    remove_statements(fdef, allocations)
    return bool(doomed)
