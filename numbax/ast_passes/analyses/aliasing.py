"""aliasing: which names of a function may share memory, and which arrays nothing writes into.

A name may be a view of, or the same object as, another array when one of its
definitions is a name, a subscript, an attribute such as ``.T``, a conditional
expression choosing one, or a call that returns a view (``reshape``,
``transpose``, ``ravel``...). Copy propagation has replaced plain aliases
assigned once (``b = a``) before reverse mode asks (its ``alias_checks`` refuse
writes through such views); loop-invariant hoisting asks which names a write
may change.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set

import gast
import numpy as np

from numbax.ast_passes.analyses.nodes import base

_VIEW_METHODS = {"reshape", "transpose", "ravel", "view", "swapaxes", "squeeze", "diagonal", "T", "real", "imag",
                 "flat"}
_VIEW_FUNCTIONS = {"reshape", "transpose", "ravel", "swapaxes", "moveaxis", "squeeze", "expand_dims", "asarray",
                   "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to", "diagonal", "real", "imag"}


def may_alias(value: gast.expr) -> bool:
    """Whether ``value`` may be an existing array, or a view of one."""
    if isinstance(value, (gast.Name, gast.Subscript)):
        return True
    if isinstance(value, gast.Attribute):
        return value.attr in _VIEW_METHODS
    if isinstance(value, gast.IfExp):
        return may_alias(value.body) or may_alias(value.orelse)
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
        func = value.func
        if isinstance(func.value, gast.Name) and func.value.id == "np":
            return func.attr in _VIEW_FUNCTIONS and hasattr(np, func.attr)
        return func.attr in _VIEW_METHODS
    return False


def definitions(fdef: gast.FunctionDef) -> Dict[str, List[gast.Assign]]:
    """For each name ``fdef`` assigns, its assignments (``x = ...``) in walk order."""
    defs: Dict[str, List[gast.Assign]] = {}
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            defs.setdefault(node.targets[0].id, []).append(node)
    return defs


def subscript_writes(fdef: gast.FunctionDef):
    """``(statement, what it writes into, how the user wrote it)`` for each subscript write."""
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Subscript):
            yield node, node.targets[0], ast.unparse(gast.gast_to_ast(node.targets[0])) + " = ..."
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Subscript):
            yield node, node.target, ast.unparse(gast.gast_to_ast(node.target)) + " = ..."


def view_links(defs: Dict[str, List[gast.Assign]], avals: Optional[Dict[str, tuple]] = None,
               both_ways: bool = False) -> Dict[str, Set[str]]:
    """For each name, the names defined as possible views of it (``v = x[:-1]`` links ``x`` to ``v``), and
    with ``both_ways`` the names it may be a view of too; a name ``avals`` knows to hold a scalar is a copy."""
    links: Dict[str, Set[str]] = {}
    for name, found in defs.items():
        if avals is not None and (avals.get(name) or ("", 1))[1] == 0:
            continue
        for d in found:
            if may_alias(d.value):
                for other in {n.id for n in gast.walk(d.value) if isinstance(n, gast.Name)}:
                    links.setdefault(other, set()).add(name)
                    if both_ways:
                        links.setdefault(name, set()).add(other)
    return links


def linked(names: Set[str], links: Dict[str, Set[str]]) -> Set[str]:
    """``names`` and every name ``links`` reaches from them, transitively."""
    out, todo = set(names), list(names)
    while todo:
        for other in links.get(todo.pop(), ()):
            if other not in out:
                out.add(other)
                todo.append(other)
    return out


def sharing(fdef: gast.FunctionDef) -> Dict[str, Set[str]]:
    """The names of ``fdef`` that may share memory, linked both ways (``linked`` closes a set under it)."""
    return view_links(definitions(fdef), both_ways=True)


def unwritten(fdef: gast.FunctionDef) -> Set[str]:
    """The names whose arrays nothing writes into, directly or through a possible alias.

    A copy of such a value (a row of a loop's tape) reads the same as the value
    itself, whenever it is read. Writes are subscript stores, and, to be safe,
    any name a bare call statement reads (``x.sort()``, ``np.copyto(x, y)``).
    """
    written = {base(target) for _, target, _ in subscript_writes(fdef)}
    written |= {n.id for node in gast.walk(fdef) if isinstance(node, gast.Expr)
                for n in gast.walk(node.value) if isinstance(n, gast.Name)}
    written |= {n.id for node in gast.walk(fdef) if isinstance(node, gast.keyword) and node.arg == "out"
                for n in gast.walk(node.value) if isinstance(n, gast.Name)}
    return set(definitions(fdef)) - linked(written, sharing(fdef))
