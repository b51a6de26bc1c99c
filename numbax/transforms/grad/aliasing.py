"""aliasing: refuse writes into an array that may share memory with another one.

Reverse mode keeps one adjoint per variable. ``row = out[i]; row[:] = v`` changes
``out`` through ``row``, and the adjoint of ``out`` would never see it -- a
wrong gradient, silently. Copy propagation has already replaced plain aliases
assigned once (``b = a``), so what is left here is a variable written through
subscripts (``b[...] = v`` or ``b[...] += v``), or an array updated in place
(``b += v``, which ``canonicalize`` has made ``b_1 = b + v``), with an active value or adjoint,
one of whose definitions may be a view of, or the same object as, another
array: a name, a subscript, an attribute such as ``.T``, a conditional
expression choosing one, or a call that returns a view (``reshape``,
``transpose``, ``ravel``...). Such code gets a ``NumbaxDifferentiationError`` at
the write, with the definition it came from.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.errors import NumbaxDifferentiationError
from numbax.transforms.grad.nodes import base

_VIEW_METHODS = {"reshape", "transpose", "ravel", "view", "swapaxes", "squeeze", "diagonal", "T", "real", "imag",
                 "flat"}
_VIEW_FUNCTIONS = {"reshape", "transpose", "ravel", "swapaxes", "moveaxis", "squeeze", "expand_dims", "asarray",
                   "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to", "diagonal", "real", "imag"}


def _may_alias(value: gast.expr) -> bool:
    """Whether ``value`` may be an existing array, or a view of one."""
    if isinstance(value, (gast.Name, gast.Subscript)):
        return True
    if isinstance(value, gast.Attribute):
        return value.attr in _VIEW_METHODS
    if isinstance(value, gast.IfExp):
        return _may_alias(value.body) or _may_alias(value.orelse)
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
        func = value.func
        if isinstance(func.value, gast.Name) and func.value.id == "np":
            return func.attr in _VIEW_FUNCTIONS and hasattr(np, func.attr)
        return func.attr in _VIEW_METHODS
    return False


def _definitions(fdef: gast.FunctionDef) -> Dict[str, List[gast.Assign]]:
    defs: Dict[str, List[gast.Assign]] = {}
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            defs.setdefault(node.targets[0].id, []).append(node)
    return defs


def _writes(fdef: gast.FunctionDef):
    """``(statement, what it writes into, how the user wrote it)`` for each subscript write."""
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Subscript):
            yield node, node.targets[0], ast.unparse(gast.gast_to_ast(node.targets[0])) + " = ..."
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Subscript):
            yield node, node.target, ast.unparse(gast.gast_to_ast(node.target)) + " = ..."


def _updates(fdef: gast.FunctionDef, avals: Dict[str, tuple]):
    """``_writes``' triples for the in-place updates of arrays, ``x += y`` (``x_1 = x + y`` by now)."""
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign) and anno.hasanno(node, anno.Key.IN_PLACE):
            array = node.value.left
            if (avals.get(array.id) or ("", 0))[1]:
                symbol = ast.unparse(gast.gast_to_ast(node.value)).split()[1]  # ``x + y``: ``+``
                yield node, array, f"{array.id} {symbol}= ..."


def check(fdef: gast.FunctionDef, active: Set[str], avals: Dict[str, tuple]) -> None:
    """Raise ``NumbaxDifferentiationError`` at the first active write through a possible alias in ``fdef``
    (``avals``: which names hold arrays)."""
    defs = _definitions(fdef)
    for stmt, target, written in [*_writes(fdef), *_updates(fdef, avals)]:
        name = base(target)
        if name not in active:
            continue
        source: Optional[gast.Assign] = next((d for d in defs.get(name, ()) if _may_alias(d.value)), None)
        if source is None:
            continue
        defined = ast.unparse(gast.gast_to_ast(source.value))
        origin = anno.getanno(source, anno.Key.ORIGIN)
        where = f" (line {origin.lineno})" if origin is not None else ""
        raise NumbaxDifferentiationError(
            f"`{written}` writes into `{name}`, which may share memory with another array "
            f"(`{name} = {defined}`{where}); reverse mode cannot follow writes through views or aliases",
            anno.getanno(stmt, anno.Key.ORIGIN),
            hint=f"write into the original array directly, or copy first: `{name} = np.copy({defined})`.")


def unwritten(fdef: gast.FunctionDef) -> Set[str]:
    """The names whose arrays nothing writes into, directly or through a possible alias.

    A copy of such a value (a row of a loop's tape) reads the same as the value
    itself, whenever it is read. Writes are subscript stores, and, to be safe,
    any name a bare call statement reads (``x.sort()``, ``np.copyto(x, y)``).
    """
    links: Dict[str, Set[str]] = {}
    for name, defs in _definitions(fdef).items():
        for d in defs:
            if _may_alias(d.value):
                for other in {n.id for n in gast.walk(d.value) if isinstance(n, gast.Name)}:
                    links.setdefault(name, set()).add(other)
                    links.setdefault(other, set()).add(name)
    written = {base(target) for _, target, _ in _writes(fdef)}
    written |= {n.id for node in gast.walk(fdef) if isinstance(node, gast.Expr)
                for n in gast.walk(node.value) if isinstance(n, gast.Name)}
    written |= {n.id for node in gast.walk(fdef) if isinstance(node, gast.keyword) and node.arg == "out"
                for n in gast.walk(node.value) if isinstance(n, gast.Name)}
    todo = list(written)
    while todo:
        for other in links.get(todo.pop(), ()):
            if other not in written:
                written.add(other)
                todo.append(other)
    return set(_definitions(fdef)) - written
