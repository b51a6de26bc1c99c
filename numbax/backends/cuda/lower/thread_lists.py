"""thread_lists: reverse mode's list tapes in one example's body (``threads``), held in device memory.

Reverse mode saves what a loop overwrites and that has no table of its own (arrays per example, whose
shapes ``thread_arrays`` knows) on a list: ``t = []`` at the start of the example, ``t.append(v)`` in the
forward sweep, ``v_2 = t.pop()`` in the backward sweep. A thread cannot allocate, so the driver allocates one
tape per list for all examples, as long as the appends can make it (each append times the trip counts of
the ``for ... in range`` loops around it, known on the host), the element's shape next and the example's
index last; the kernel keeps the list's length in a counter::

    t = []                      _top_1 = 0
    t.append(y)                 for _j_1 in range(3):
                                    t[_top_1, _j_1, i] = y[_j_1]
                                _top_1 = _top_1 + 1
    y_2 = t.pop()               _top_1 = _top_1 - 1
                                for _j_1 in range(3):
                                    y_2[_j_1] = t[_top_1, _j_1, i]

Refused at the user's line: a list made other than at the start of the example, used otherwise than so, or
appended to in a ``while`` loop or a loop whose trip count one example computes.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.backends.cuda.lower.state import LoweringState, parse as _parse, text as _text


def made(stmts: List[gast.stmt]) -> Dict[str, gast.Assign]:
    """The lists ``stmts`` make, ``t = []``, each by its statement (the body's own, not nested)."""
    return {stmt.targets[0].id: stmt for stmt in stmts
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.List) and not stmt.value.elts}


def appended(stmt: gast.stmt, lists) -> Optional[Tuple[str, gast.expr]]:
    """``t.append(v)`` of a list of ``lists``: ``t`` and ``v``."""
    call = stmt.value if isinstance(stmt, gast.Expr) else None
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "append" and \
            isinstance(call.func.value, gast.Name) and call.func.value.id in lists and len(call.args) == 1 and \
            not call.keywords:
        return call.func.value.id, call.args[0]
    return None


def popped(stmt: gast.stmt, lists) -> Optional[Tuple[str, str]]:
    """``v = t.pop()`` of a list of ``lists``: ``v`` and ``t``."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
        return None
    call = stmt.value
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "pop" and \
            isinstance(call.func.value, gast.Name) and call.func.value.id in lists and not call.args and \
            not call.keywords:
        return stmt.targets[0].id, call.func.value.id
    return None


def capacity(state: LoweringState, body: List[gast.stmt], name: str, local: Set[str]) -> str:
    """The driver's expression of how many elements the appends to ``name`` in ``body`` can make (``local``:
    the names the host does not have)."""
    terms = []
    for stmt, loops in _appends(body, name, []):
        counts = []
        for loop in loops:
            state.origin = anno.getanno(stmt, anno.Key.ORIGIN) or anno.getanno(loop, anno.Key.ORIGIN) or \
                state.origin
            bounds = loop.iter.args if isinstance(loop, gast.For) and isinstance(loop.iter, gast.Call) and \
                _text(loop.iter.func) == "range" and not loop.iter.keywords else None
            if bounds is None or {n.id for b in bounds for n in gast.walk(b) if isinstance(n, gast.Name)} & local:
                raise state.refuse(f"reverse mode's record of an array per example in the loop `{_text(loop)}` "
                                   "(only `for` loops over a range the host knows have tapes of arrays per "
                                   "example),")
            for bound in bounds:
                state.check_host(bound)
            counts.append(f"len(range({', '.join(_text(b) for b in bounds)}))")
        terms.append(" * ".join(counts) or "1")
    return " + ".join(terms) or "0"


def _appends(stmts: List[gast.stmt], name: str, loops: list) -> List[Tuple[gast.stmt, list]]:
    out = []
    for stmt in stmts:
        if appended(stmt, {name}):
            out.append((stmt, loops))
        inner = loops + [stmt] if isinstance(stmt, (gast.For, gast.While)) else loops
        for field in ("body", "orelse"):
            out += _appends(getattr(stmt, field, None) or [], name, inner)
    return out


def allocation(name: str, count: str, element: Tuple[Tuple[int, ...], np.dtype], examples: str) -> List[gast.stmt]:
    """The driver's allocation of the tape of list ``name``: ``count`` elements of shape and dtype ``element``
    for each of ``examples`` examples."""
    shape, dtype = element
    extents = ", ".join([f"max({count}, 1)"] + [str(n) for n in shape] + [examples])
    return _parse(f"{name} = gr.empty(({extents}), np.{np.dtype(dtype).name})")


def push(tape: str, top: str, index: str, dims: List[str], shape, value: str) -> List[gast.stmt]:
    """The kernel's ``t.append(v)``: ``value`` (the element's text at ``dims``) into the next slot."""
    at = ", ".join([top] + dims[:len(shape)] + [index])
    return _nest(f"{tape}[{at}] = {value}", dims, shape) + _parse(f"{top} = {top} + 1")


def pull(tape: str, top: str, index: str, dims: List[str], shape, target: str) -> List[gast.stmt]:
    """The kernel's ``v = t.pop()``: the last slot into ``target`` (a local array's elements, or a number)."""
    at = ", ".join([top] + dims[:len(shape)] + [index])
    into = f"{target}[{', '.join(dims[:len(shape)])}]" if shape else target
    return _parse(f"{top} = {top} - 1") + _nest(f"{into} = {tape}[{at}]", dims, shape)


def _nest(line: str, dims: List[str], shape) -> List[gast.stmt]:
    lines = ["    " * k + f"for {d} in range({n}):" for k, (d, n) in enumerate(zip(dims, shape))]
    return _parse("\n".join(lines + ["    " * len(shape) + line]))
