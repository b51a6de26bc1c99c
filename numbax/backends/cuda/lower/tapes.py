"""tapes: reverse mode's tapes in one example's body (``threads``), held in device memory for all examples.

Reverse mode saves what a ``for`` loop overwrites in a tape allocated before the loop,
``tape = np.empty((len(range(steps)), 1))``, its size known on the host. A thread cannot allocate, so the
driver allocates the tapes of all examples at once, the example's index last (neighbouring threads write
neighbouring slots), and the kernel reads and writes ``tape[row, 0]`` as ``tape[row, 0, i]``.

A ``while`` loop's tape starts with a few rows and grows when full (``if row == len(tape): tape =
rt.grow_rows(tape)``). In the kernel, a full tape sets an overflow flag and ends the thread; the driver
launches again with every growing tape twice as long until no thread overflows (each launch computes every
example anew, so no result of an overflowed launch is kept).
"""
from __future__ import annotations

import collections
from typing import Dict, List, Set, Tuple

import gast

from numbax.ast_passes import anno
from numbax.backends.cuda.lower.state import LoweringState, parse as _parse, text as _text

_RESIZING = frozenset({"rt.grow_rows", "rt.reserve_rows"})  # reverse mode's tapes of while loops


def stored(stmts: List[gast.stmt]) -> Set[str]:
    """The names ``stmts`` assign."""
    return {n.id for n in gast.walk(gast.Module(body=stmts, type_ignores=[]))
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _is_allocation(stmt: gast.stmt) -> bool:
    """``t = np.empty(shape)`` (``dtype=`` allowed): how reverse mode allocates a ``for`` loop's tape."""
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
        and isinstance(stmt.value, gast.Call) and _text(stmt.value.func) == "np.empty" and \
        len(stmt.value.args) == 1 and {k.arg for k in stmt.value.keywords} <= {"dtype"}


def is_growth(stmt: gast.stmt) -> bool:
    """``tape = rt.grow_rows(tape)``: a ``while`` loop's full tape made twice as long."""
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
        and isinstance(stmt.value, gast.Call) and _text(stmt.value.func) == "rt.grow_rows" and \
        len(stmt.value.args) == 1 and isinstance(stmt.value.args[0], gast.Name) and \
        stmt.value.args[0].id == stmt.targets[0].id


def of_body(body: List[gast.stmt]) -> Tuple[Dict[str, gast.Assign], Set[str]]:
    """Tape name -> its allocation (a statement of the body's own, run once per example, that alone assigns
    the name, besides its growth), and the names of the tapes that grow."""
    nodes = list(gast.walk(gast.Module(body=body, type_ignores=[])))
    stores = collections.Counter(n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    growths = collections.Counter(n.targets[0].id for n in nodes if is_growth(n))
    tapes = {stmt.targets[0].id: stmt for stmt in body
             if _is_allocation(stmt) and stores[stmt.targets[0].id] == 1 + growths[stmt.targets[0].id]}
    return tapes, {name for name in growths if name in tapes}


def _extents(allocation: gast.Assign) -> List[gast.expr]:
    shape = allocation.value.args[0]
    return list(shape.elts) if isinstance(shape, gast.Tuple) else [shape]


def is_slot(node: gast.Subscript, allocation: gast.Assign) -> bool:
    """Whether ``node`` indexes one slot of the tape ``allocation`` makes (an index per dimension)."""
    indices = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
    return len(indices) == len(_extents(allocation)) and not any(isinstance(i, gast.Slice) for i in indices)


def refuse_resizing(state: LoweringState, body: List[gast.stmt], tapes: Dict[str, gast.Assign]) -> None:
    """Refuse, at the user's loop, a tape resized otherwise than a growing tape of ``tapes``."""
    loops = [n for n in gast.walk(gast.Module(body=body, type_ignores=[])) if isinstance(n, (gast.While, gast.For))]
    for stmt in gast.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Call) and \
                _text(stmt.value.func) in _RESIZING and not (is_growth(stmt) and stmt.targets[0].id in tapes):
            around = [anno.getanno(w, anno.Key.ORIGIN) for w in loops if any(n is stmt for n in gast.walk(w))]
            state.origin = anno.getanno(stmt, anno.Key.ORIGIN) or next(
                (o for o in reversed(around) if o is not None), state.origin)
            raise state.refuse(f"reverse mode's tape resized as `{_text(stmt)}` in one example's body (a thread "
                               "cannot allocate)")


def allocation(state: LoweringState, stmt: gast.Assign, local: Set[str], count: str, scale: str = "") -> \
        List[gast.stmt]:
    """The driver's allocation of the tape ``stmt`` allocates in one example's body (whose ``local`` names
    the host does not have), for ``count`` examples, the example's index last; a growing tape's rows times
    the host number ``scale``."""
    state.origin = anno.getanno(stmt, anno.Key.ORIGIN) or state.origin
    shape = stmt.value.args[0]
    if {n.id for n in gast.walk(shape) if isinstance(n, gast.Name)} & local:
        raise state.refuse(f"`{_text(stmt)}`, a tape whose size one example computes,")
    state.check_host(shape)
    dtype = state.probe(stmt.value).dtype.name
    extents = [_text(e) for e in _extents(stmt)]
    if scale:
        extents[0] = f"{extents[0]} * {scale}"
    return _parse(f"{stmt.targets[0].id} = gr.empty(({', '.join(extents + [count])}), np.{dtype})")
