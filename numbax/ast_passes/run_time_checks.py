"""run_time_checks: before each statement, the run-time checks of what the user wrote in it.

Expects A-normal form, whose operations have atoms for operands, and the
``anno.Key.CHECK`` marks (a tuple of ``Check``) that ``specialize`` puts on the
subscripts, operations and calls the user wrote (and on none that numbax
generates). Guarantees that before each statement holding marked nodes (in
Python's order of evaluation: reads before writes) stands one call of a
``numbax.runtime.checks`` helper per check, naming the operands and the user's
``file:line:column``:

- a subscript: one ``rt.check_index(x, i, axis, where)`` per index that is not
  a slice, ``None`` or ``...`` (``axis`` counted from the end after ``...``);
- a division of Python numbers: ``rt.check_divisor(d, message, where)``;
- an in-place operation on an array, ``x op= y`` (the mark is on ``x``):
  ``rt.check_in_place(x, y, where)``; an array written into a slice,
  ``x[i:j] = y`` (on the target, after its index checks): ``rt.check_store(x[i:j], y, where)``;
- an operation on arrays: ``rt.check_broadcast(a, b, where)``,
  ``rt.check_dot``, ``rt.check_matmul`` or ``rt.check_reshape(x, shape, where)``;
- ``np.where(c, x, y)``: ``rt.check_where(c, x, y, where)``; a join of arrays:
  ``rt.check_concatenate(arrays, axis, where)``, ``rt.check_stack(arrays, where)``,
  ``rt.check_hstack`` or ``rt.check_vstack``.

An index that is the variable of a ``for`` loop over ``range`` of the
array's own extent (``for j in range(x.shape[1])``, ``range(1, len(x))``),
with neither rebound in the loop, is in bounds and not checked. Each mark is
consumed, so applying the pass twice changes nothing. It runs
before the transformations: the checks are effects that carry no derivative,
and every index or operation that ``grad`` or ``vmap`` generates comes after
it, unchecked.

    >>> import gast
    >>> from numbax.ast_passes.origin import Origin
    >>> from numbax.ast_passes.unparse import unparse
    >>> f = gast.parse("def f(a, i):\\n    t = a[i, :, -1]\\n    return t").body[0]
    >>> mark(f.body[0].value, "check_index", Origin("demo.py", 2, 8, ""))
    >>> print(unparse(transform(f)))
    def f(a, i):
        rt.check_index(a, i, 0, 'demo.py:2:8')
        rt.check_index(a, -1, 2, 'demo.py:2:8')
        t = a[i, :, -1]
        return t
"""
from __future__ import annotations

import dataclasses
from typing import List, Set, Tuple

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.anf import MODULES
from numbax.ast_passes.extents import Extents, rebound_names
from numbax.ast_passes.origin import Origin
from numbax.ast_passes.unparse import unparse

# the checks of joins of arrays -> whether the helper takes the axis
_JOINS = {"check_concatenate": True, "check_stack": False, "check_hstack": False, "check_vstack": False}
# evaluated once, before the block (A-normal form leaves no subscript in a ``while`` test)
_HEADERS = {gast.If: ("test",), gast.While: ("test",), gast.For: ("iter",)}


@dataclasses.dataclass(frozen=True)
class Check:
    """The ``numbax.runtime.checks`` helper that checks a node before it runs, where the user wrote it, and
    the constant message it raises (for ``check_divisor``)."""

    helper: str
    origin: Origin
    message: str = ""


def mark(node: gast.expr, helper: str, origin: Origin, message: str = "") -> None:
    """Ask for ``helper``'s check of ``node`` (a subscript, an operation or a call the user wrote), after
    those asked for before."""
    if origin is not None:
        checks = anno.getanno(node, anno.Key.CHECK, ())
        anno.setanno(node, anno.Key.CHECK, checks + (Check(helper, origin, message),))


def _positions(index: gast.expr) -> List[Tuple[gast.expr, int]]:
    """``(index atom, axis)`` for each part of ``index`` that selects one position along an axis."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    ellipsis = next((k for k, p in enumerate(parts) if isinstance(p, gast.Constant) and p.value is Ellipsis), None)
    out, axis = [], 0
    for k, part in enumerate(parts):
        if k == ellipsis:
            axis = -sum(1 for p in parts[k + 1:] if _takes_axis(p))
            continue
        if not _takes_axis(part):
            continue
        if not isinstance(part, gast.Slice) and not (isinstance(part, gast.Constant) and type(part.value) is not int):
            out.append((part, axis))
        axis += 1
    return out


def _takes_axis(part: gast.expr) -> bool:
    """Whether an index part consumes an axis of the array (``None`` adds one, ``...`` stands for several)."""
    return not (isinstance(part, gast.Constant) and (part.value is None or part.value is Ellipsis))


def _as_tuple(parts: List[gast.expr]) -> str:
    """A shape argument as a tuple: ``x.reshape(2, 3)``, ``x.reshape((2, 3))`` and ``x.reshape(6)``."""
    if len(parts) == 1 and isinstance(parts[0], gast.Tuple):
        return unparse(parts[0])
    return "(" + ", ".join(unparse(p) for p in parts) + ("," if len(parts) == 1 else "") + ")"


def _operands(node: gast.expr, check: Check, stmt: gast.stmt) -> List[List[str]]:
    """The argument lists (source text, ``where`` left out) of the helper calls that check ``node`` of
    ``stmt``."""
    if check.helper in ("check_in_place", "check_store"):  # ``x op= y``, ``x[i] = y``: ``node`` is the target
        return [[unparse(node), unparse(stmt.value)]]
    if isinstance(node, gast.Subscript):
        return [[unparse(node.value), unparse(part), str(axis)] for part, axis in _positions(node.slice)]
    if check.helper == "check_divisor":
        return [[unparse(node.right), repr(check.message)]]
    if isinstance(node, gast.BinOp):
        return [[unparse(node.left), unparse(node.right)]]
    if check.helper in _JOINS:  # ``np.concatenate(arrays, axis)``, ``np.hstack(arrays)``
        args = [unparse(node.args[0])]
        if _JOINS[check.helper]:
            axis = node.args[1:] + [k.value for k in node.keywords if k.arg == "axis"]
            args.append(unparse(axis[0]) if axis else "0")
        return [args]
    if check.helper == "check_where":
        return [[unparse(a) for a in node.args]]
    if check.helper == "check_reshape":  # ``x.reshape(2, 3)`` or ``np.reshape(x, (2, 3))``
        owner = node.func.value
        function = isinstance(owner, gast.Name) and owner.id in MODULES
        array, shape = (node.args[0], node.args[1:]) if function else (owner, node.args)
        return [[unparse(array), _as_tuple(shape)]]
    return [[unparse(node.args[0]), unparse(node.args[1])]]


def _marked(nodes) -> List[gast.expr]:
    found = [n for root in nodes for n in gast.walk(root) if anno.hasanno(n, anno.Key.CHECK)]
    return sorted(found, key=lambda n: isinstance(getattr(n, "ctx", None), gast.Store))  # reads before writes


def _checks(stmt: gast.stmt, nodes: List[gast.expr], safe: Set[Tuple[str, str, str]]) -> List[gast.stmt]:
    out = []
    for node in nodes:
        checks = anno.getanno(node, anno.Key.CHECK)
        anno.delanno(node, anno.Key.CHECK)
        for check in checks:
            where = repr(check.origin.position())
            for args in _operands(node, check, stmt):
                if check.helper == "check_index" and tuple(args) in safe:
                    continue
                call = gast.parse(f"rt.{check.helper}({', '.join(args + [where])})").body[0]
                out.append(anno.copyanno(stmt, gast.copy_location(call, stmt)))
    return out


def _block(stmts: List[gast.stmt], extents: Extents, safe: Set[Tuple[str, str, str]]) -> List[gast.stmt]:
    out: List[gast.stmt] = []
    for stmt in stmts:
        headers = _HEADERS.get(type(stmt))
        if headers is None:
            out.extend(_checks(stmt, _marked([stmt]), safe))
            extents.assign(stmt)
            out.append(stmt)
            continue
        out.extend(_checks(stmt, _marked([getattr(stmt, h) for h in headers]), safe))
        inner = extents.entering(stmt)
        stmt.body = _block(stmt.body, inner, safe | inner.safe_indices(stmt))
        stmt.orelse = _block(stmt.orelse, extents.entering(stmt), safe)
        extents.forget(rebound_names(stmt))
        out.append(stmt)
    return out


def transform(fdef: gast.FunctionDef) -> gast.FunctionDef:
    """Insert the run-time checks that ``fdef``'s marks ask for."""
    fdef.body = _block(fdef.body, Extents(), set())
    return fdef
