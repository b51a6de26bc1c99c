"""row_checks: the checks that ``vmap``'s examples (``lax.scan``'s steps) give outputs of one shape, dropped
where symbolic shapes prove that they do.

``vmap`` stacks each example's output into a row of the array its first example sized, and ``lax.scan`` each
step's ``ys`` likewise (``out = rt.stack_buffer(first, n)``). NumPy's assignment ``out[i] = value`` would
broadcast a value of another shape into the row (``x[:n]`` with ``n`` mapped), where JAX traces one shape for
every example, so the store follows ``rt.check_row(out, value, where)``. Where ``shapes.infer`` knows
``value``'s shape and it is ``first``'s, the check cannot fail and goes (dims that broadcast are read as their
join, ``symbolic.joining``: both values were made, so their operands did broadcast, to the same lengths): code whose shapes follow from its
parameters' runs as it did without the check, and reads as before::

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> src = '''def f(x, n):
    ...     first = x[0] * 2.0
    ...     out = rt.stack_buffer(first, 3)
    ...     for i in range(1, 3):
    ...         row = x[i]
    ...         value = row * 2.0
    ...         rt.check_row(out, value, 'f.py:2:4')
    ...         out[i] = value
    ...         part = row[:n]
    ...         rt.check_row(out, part, 'f.py:2:4')
    ...     return out'''
    >>> print(unparse(transform(gast.parse(src).body[0], {"x": ("f", 2), "n": ("i", 0)})))
    def f(x, n):
        first = x[0] * 2.0
        out = rt.stack_buffer(first, 3)
        for i in range(1, 3):
            row = x[i]
            value = row * 2.0
            out[i] = value
            part = row[:n]
            rt.check_row(out, part, 'f.py:2:4')
        return out
"""
from __future__ import annotations

from typing import Dict, Iterator, List, Optional

import gast

from numbax.ast_passes.analyses import avals as avals_analysis
from numbax.ast_passes.analyses import batch_loops
from numbax.ast_passes.analyses import shapes
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.usage import count_names
from numbax.primitives import symbolic


def _call_of(stmt: gast.stmt, name: str):
    """``stmt``'s call of ``rt.<name>`` (an expression statement or an assignment's value), else None."""
    value = stmt.value if isinstance(stmt, (gast.Expr, gast.Assign)) else None
    app = application(value) if isinstance(value, gast.Call) else None
    return app if app is not None and app.name == f"rt.{name}" and not app.keywords else None


def _firsts(fdef: gast.FunctionDef) -> Dict[str, str]:
    """Each stacking array (``out = rt.stack_buffer(first, n)``, its only assignment) -> the name of the value
    that sized it; not one sized on a loop's first iteration (``first_example``), whose value is any example's
    as the loop reads it."""
    found, stores = {}, count_names(fdef)[0]
    for stmt in _outside_first_iterations(fdef.body):
        app = _call_of(stmt, "stack_buffer") if isinstance(stmt, gast.Assign) else None
        if app is not None and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) and \
                len(app.args) == 2 and isinstance(app.args[0], gast.Name) and stores[stmt.targets[0].id] == 1:
            found[stmt.targets[0].id] = app.args[0].id
    return found


def _outside_first_iterations(stmts: List[gast.stmt]) -> Iterator[gast.stmt]:
    """The statements of ``stmts`` and of their blocks but those in ``if i == 0:`` branches."""
    for stmt in stmts:
        yield stmt
        if not batch_loops.on_first_iteration(stmt):
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list):
                    yield from _outside_first_iterations(inner)


def _proven(stmt: gast.stmt, firsts: Dict[str, str], known: Dict[str, shapes.Shape]) -> bool:
    """Whether ``stmt`` is a ``rt.check_row(out, value, where)`` that cannot fail: ``value`` has the shape of
    the value that sized ``out``."""
    app = _call_of(stmt, "check_row") if isinstance(stmt, gast.Expr) else None
    if app is None or len(app.args) != 3 or not isinstance(app.args[0], gast.Name):
        return False
    first = firsts.get(app.args[0].id)
    shape: Optional[shapes.Shape] = known.get(first) if first is not None else None
    return shape is not None and shapes.expr_shape(app.args[1], known) == shape


def _drop(stmts: List[gast.stmt], firsts: Dict[str, str], known: Dict[str, shapes.Shape]) -> List[gast.stmt]:
    kept = []
    for stmt in stmts:
        if _proven(stmt, firsts, known):
            continue
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list):
                setattr(stmt, field, _drop(getattr(stmt, field), firsts, known))
        kept.append(stmt)
    return kept


def transform(fdef: gast.FunctionDef, param_avals: Dict[str, tuple]) -> gast.FunctionDef:
    """``fdef`` without the ``rt.check_row`` checks that its parameters' abstract values (``param_avals``:
    name -> (kind, ndim)) prove idle."""
    firsts = _firsts(fdef)
    if firsts:
        avals = avals_analysis.infer(fdef, param_avals)
        with symbolic.joining():  # both values were made, so their dims did broadcast to the joins' lengths
            known = shapes.infer(fdef, {name: aval[1] for name, aval in param_avals.items()}, avals)
        fdef.body = _drop(fdef.body, firsts, known)
    return fdef
