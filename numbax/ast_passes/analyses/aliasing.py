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
from numbax.ast_passes.tree_copy import walk

# (a real array's ``conj()`` is the array itself)
_VIEW_METHODS = {"reshape", "transpose", "ravel", "view", "swapaxes", "squeeze", "diagonal", "T", "real", "imag",
                 "flat", "conj", "conjugate"}
# the runtime helpers that may return an argument itself (or a view of it): which one
RUNTIME_PASSTHROUGH = {"unbroadcast": 0, "unbroadcast_rows": 0, "stored_cotangent": 0, "scalar_output": 0, "real_output": 0,
                       "reserve_rows": 0, "stop_gradient": 0, "custom_input": 0, "custom_input_seen": 0, "custom_primal": 0,
                       "unaliased": 0, "custom_rule": 1, "flip": 0, "diag": 0, "conj": 0,
                       "view_of": 0}
# the NumPy functions that may return their first argument itself, a view of it, or views of it
_VIEW_FUNCTIONS = {"reshape", "transpose", "permute_dims", "matrix_transpose", "ravel", "swapaxes", "moveaxis",
                   "squeeze", "expand_dims", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "diag",
                   "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to", "broadcast_arrays", "diagonal", "real",
                   "imag", "flip", "flipud", "fliplr", "rot90", "split", "array_split", "hsplit", "vsplit", "dsplit"}


def sources(value: gast.expr) -> Set[str]:
    """The names whose arrays ``value`` may be, or be a view of: the array a subscript, a view attribute
    (``.T``) or a view function or method (``reshape``, ``transpose``...) is applied to, each side of a
    conditional expression, the elements of a tuple or list; never an index, a shape or another argument."""
    if isinstance(value, gast.Name):
        return {value.id}
    if isinstance(value, gast.Subscript):
        return sources(value.value)
    if isinstance(value, gast.Attribute):
        return sources(value.value) if value.attr in _VIEW_METHODS else set()
    if isinstance(value, gast.IfExp):
        return sources(value.body) | sources(value.orelse)
    if isinstance(value, (gast.Tuple, gast.List)):
        return set().union(*(sources(e) for e in value.elts))
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
        func = value.func
        if isinstance(func.value, gast.Name) and func.value.id == "np":
            known = func.attr in _VIEW_FUNCTIONS and hasattr(np, func.attr)
            return sources(value.args[0]) if known and value.args else set()
        if isinstance(func.value, gast.Name) and func.value.id == "rt":
            position = 0 if func.attr in _VIEW_METHODS else RUNTIME_PASSTHROUGH.get(func.attr)
            return sources(value.args[position]) if position is not None and len(value.args) > position else set()
        return sources(func.value) if func.attr in _VIEW_METHODS else set()
    return set()


def may_alias(value: gast.expr) -> bool:
    """Whether ``value`` may be an existing array, or a view of one."""
    return bool(sources(value))


def definitions(fdef: gast.FunctionDef) -> Dict[str, List[gast.Assign]]:
    """For each name ``fdef`` assigns, its assignments (``x = ...``) in walk order."""
    defs: Dict[str, List[gast.Assign]] = {}
    for node in walk(fdef):
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
            for other in sources(d.value):
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
    any name a bare call statement reads (``x.sort()``, ``np.copyto(x, y)``) but a run-time check, which only
    reads its operands (``rt.check_broadcast(a, b, where)``).
    """
    from numbax.ast_passes.optimizations.purity import is_check, is_pure

    written = {base(target) for _, target, _ in subscript_writes(fdef)}
    written |= {n.id for node in gast.walk(fdef) if isinstance(node, gast.Expr) and
                not (is_check(node.value) and all(map(is_pure, node.value.args)) and not node.value.keywords)
                for n in gast.walk(node.value) if isinstance(n, gast.Name)}
    written |= {n.id for node in gast.walk(fdef) if isinstance(node, gast.keyword) and node.arg == "out"
                for n in gast.walk(node.value) if isinstance(n, gast.Name)}
    return set(definitions(fdef)) - linked(written, sharing(fdef))
