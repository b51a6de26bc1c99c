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
- a division of Python numbers: ``rt.check_divisor(d, message, where)``; a power of integers:
  ``rt.check_power(b, e, message, where)``; a shift of integers: ``rt.check_shift(k, bits, where)``; a Python
  int cast to a narrow integer dtype: ``rt.check_weak_int(k, low, high, message, where)``;
- an in-place operation on an array, ``x op= y`` (the mark is on ``x``):
  ``rt.check_in_place(x, y, where)``; an array written into a slice,
  ``x[i:j] = y`` (on the target, after its index checks): ``rt.check_store(x[i:j], y, where)``;
- an operation on arrays: ``rt.check_broadcast(a, b, where)``,
  ``rt.check_dot``, ``rt.check_matmul`` or ``rt.check_reshape(x, shape, where)``;
- ``x.item()``: ``rt.check_item(x, where)``; ``np.where(c, x, y)``: ``rt.check_where(c, x, y, where)``;
  a join of arrays: ``rt.check_concatenate(arrays, axis, where)``, ``rt.check_stack(arrays, where)``,
  ``rt.check_hstack`` or ``rt.check_vstack``.

No check stands where ``extents`` proves an index in bounds (``for j in
range(x.shape[1])`` indexing ``x[:, j]``, ``y = np.zeros_like(x)`` indexed
``y[i + 1]`` in ``range(len(x) - 1)``, ``x[1]`` after ``x[3]`` was checked), nor
where ``divisors`` proves a divisor nonzero (``if d != 0:``). In a ``for`` over
``range`` whose every iteration runs (nothing in it breaks, returns, raises or
holds a ``while``), a check that each iteration makes (before any ``continue``)
of an array the loop does not assign, at ``i + c`` or at an index the loop does
not assign, becomes one ``rt.check_span(x, start, stop, scale, shift, axis,
where)`` before the loop: the same error for the first index out of bounds,
raised before the first iteration instead of at the failing one. Each mark is
consumed, so applying the pass twice changes nothing. It runs
before the transformations: the checks are effects that carry no derivative,
and every index or operation that ``grad`` or ``vmap`` generates comes after
it, unchecked.

    >>> import gast
    >>> from numbax.origin import Origin
    >>> from numbax.ast_passes.unparse import unparse
    >>> f = gast.parse("def f(a, i):\\n    t = a[i, :, -1]\\n    return t").body[0]
    >>> mark(f.body[0].value, "check_index", Origin("demo.py", 2, 8, ""))
    >>> print(unparse(transform(f)))
    def f(a, i):
        rt.check_index(a, i, 0, 'demo.py:2:8')
        rt.check_index(a, -1, 2, 'demo.py:2:8')
        t = a[i, :, -1]
        return t
    >>> f = gast.parse("def f(a, n):\\n    for i in range(n):\\n        a[i] = 0.0").body[0]
    >>> mark(f.body[0].body[0].targets[0], "check_index", Origin("demo.py", 3, 8, ""))
    >>> print(unparse(transform(f)))
    def f(a, n):
        rt.check_span(a, 0, n, 1, 0, 0, 'demo.py:3:8')
        for i in range(n):
            a[i] = 0.0
"""
from __future__ import annotations

import dataclasses
import os
from typing import List, Optional, Set, Tuple

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.ast_passes.anf import MODULES
from numbax.ast_passes.divisors import Divisors
from numbax.ast_passes.extents import Extents, range_bounds, rebound_names
from numbax.ast_passes.tree_copy import walk
from numbax.origin import Origin
from numbax.ast_passes.unparse import unparse

# the checks of joins of arrays -> whether the helper takes the axis
_JOINS = {"check_concatenate": True, "check_stack": False, "check_hstack": False, "check_vstack": False}
# evaluated once, before the block (A-normal form leaves no subscript in a ``while`` test)
_HEADERS = {gast.If: ("test",), gast.While: ("test",), gast.For: ("iter",)}
_UNCHECKED: Set[str] = set()  # the files of ``unchecked_source``


@dataclasses.dataclass(frozen=True)
class Check:
    """The ``numbax.runtime.checks`` helper that checks a node before it runs, where the user wrote it, and
    the constant message it raises (for ``check_divisor``)."""

    helper: str
    origin: Origin
    message: str = ""


def unchecked_source(path: str) -> None:
    """Ask for no checks of the code in the file ``path``: numbax's own code that ``specialize`` compiles as a
    user's (a Jacobian's sweeps of a basis), every index and shape of which holds by construction, where a
    check could not fail and would only be compiled (each call in generated code costs Numba and LLVM about
    10 ms)."""
    _UNCHECKED.add(os.path.abspath(path))


def checked(origin: Optional[Origin]) -> bool:
    """Whether code at ``origin`` gets run-time checks: a user's line, not one of an ``unchecked_source``."""
    return origin is not None and os.path.abspath(origin.filename) not in _UNCHECKED


def mark(node: gast.expr, helper: str, origin: Origin, message: str = "") -> None:
    """Ask for ``helper``'s check of ``node`` (a subscript, an operation or a call the user wrote), after
    those asked for before; none where the code is not ``checked``."""
    if checked(origin):
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
    ``stmt`` (an operation, or the target of an in-place update or of a store)."""
    if check.helper in ("check_in_place", "check_store"):  # ``x op= y``, ``x[i] = y``: ``node`` is the target
        return [[unparse(node), unparse(stmt.value)]]
    if check.helper == "check_divisor":
        return [[unparse(node.right), repr(check.message)]]
    if check.helper == "check_weak_int":  # ``np.uint8(k)``: ``k`` within the dtype's range
        info = np.iinfo(check.message)
        return [[unparse(node.args[0]), str(info.min), str(info.max),
                 repr(f"Python integer {{}} out of bounds for {check.message}")]]
    if check.helper in ("check_power", "check_shift"):  # ``b ** e``, ``x << k`` or their NumPy functions
        operands = [node.left, node.right] if isinstance(node, gast.BinOp) else node.args[:2]
        if check.helper == "check_shift":  # the count and the integers' bits
            return [[unparse(operands[1]), check.message]]
        return [[unparse(operands[0]), unparse(operands[1]), repr(check.message)]]
    if isinstance(node, gast.BinOp):
        return [[unparse(node.left), unparse(node.right)]]
    if check.helper in _JOINS:  # ``np.concatenate(arrays, axis)``, ``np.hstack(arrays)``
        args = [unparse(node.args[0])]
        if _JOINS[check.helper]:
            axis = node.args[1:] + [k.value for k in node.keywords if k.arg == "axis"]
            args.append(unparse(axis[0]) if axis else "0")
        return [args]
    if check.helper == "check_item":  # ``x.item()``
        return [[unparse(node.func.value)]]
    if check.helper == "check_where":
        return [[unparse(a) for a in node.args]]
    if check.helper == "check_reshape":  # ``x.reshape(2, 3)`` or ``np.reshape(x, (2, 3))``
        owner = node.func.value
        function = isinstance(owner, gast.Name) and owner.id in MODULES
        array, shape = (node.args[0], node.args[1:]) if function else (owner, node.args)
        return [[unparse(array), _as_tuple(shape)]]
    return [[unparse(node.args[0]), unparse(node.args[1])]]


@dataclasses.dataclass
class _Facts:
    """What is known where a check would stand: extents and indices, and divisors proven nonzero."""

    extents: Extents = dataclasses.field(default_factory=Extents)
    divisors: Divisors = dataclasses.field(default_factory=Divisors)

    def assign(self, stmt: gast.stmt) -> None:
        self.extents.assign(stmt)
        self.divisors.assign(stmt)

    def entering(self, stmt: gast.stmt, body: bool = True) -> "_Facts":
        return _Facts(self.extents.entering(stmt, body), self.divisors.entering(stmt, body))

    def forget(self, names) -> None:
        self.extents.forget(names)
        self.divisors.forget(names)


def _marked(nodes) -> List[gast.expr]:
    found = [n for root in nodes for n in gast.walk(root) if anno.hasanno(n, anno.Key.CHECK)]
    return sorted(found, key=lambda n: isinstance(getattr(n, "ctx", None), gast.Store))  # reads before writes


def _call(stmt: gast.stmt, helper: str, args: List[str]) -> gast.stmt:
    call = gast.parse(f"rt.{helper}({', '.join(args)})").body[0]
    return anno.copyanno(stmt, gast.copy_location(call, stmt))


def _index_checks(stmt: gast.stmt, node: gast.Subscript, where: str, extents: Extents,
                  loop: Optional[gast.For]) -> Tuple[List[gast.stmt], List[gast.stmt]]:
    """The checks of a subscript's indices: none where proven in bounds, one before ``loop`` where the
    array and the index's step along the loop's index do not change in it, else one here."""
    here: List[gast.stmt] = []
    hoisted: List[gast.stmt] = []
    array = node.value.id if isinstance(node.value, gast.Name) else None
    for part, axis in _positions(node.slice):
        if array is not None and extents.in_bounds(array, axis, part):
            continue
        span = extents.span(loop, array, part) if array is not None and loop is not None else None
        if span is not None:
            start, stop = (unparse(b) for b in range_bounds(loop))
            hoisted.append(_call(loop, "check_span", [span[0], start, stop, str(span[1]), span[2], str(axis), where]))
        else:
            here.append(_call(stmt, "check_index", [unparse(node.value), unparse(part), str(axis), where]))
        if array is not None:
            extents.note_checked(array, axis, part)
    return here, hoisted


def _checks(stmt: gast.stmt, nodes: List[gast.expr], facts: _Facts,
            loop: Optional[gast.For]) -> Tuple[List[gast.stmt], List[gast.stmt]]:
    """The checks of ``nodes`` (marked in ``stmt``): those to stand before ``stmt``, and those to stand
    before ``loop`` (each iteration of it runs ``stmt``)."""
    here: List[gast.stmt] = []
    hoisted: List[gast.stmt] = []
    for node in nodes:
        checks = anno.getanno(node, anno.Key.CHECK)
        anno.delanno(node, anno.Key.CHECK)
        for check in checks:
            where = repr(check.origin.position())
            if check.helper == "check_index":
                now, before = _index_checks(stmt, node, where, facts.extents, loop)
                here.extend(now)
                hoisted.extend(before)
            elif not (check.helper == "check_divisor" and isinstance(node.right, gast.Name) and
                      node.right.id in facts.divisors.nonzero or
                      check.helper == "check_broadcast" and _one_shape(node, facts.extents)):
                here.extend(_call(stmt, check.helper, args + [where]) for args in _operands(node, check, stmt))
    return here, hoisted


def _one_shape(node: gast.expr, extents: Extents) -> bool:
    """Whether the two arrays of an elementwise operation are known to have one shape."""
    a, b = (node.left, node.right) if isinstance(node, gast.BinOp) else node.args[:2]
    return isinstance(a, gast.Name) and isinstance(b, gast.Name) and extents.broadcasts(a.id, b.id)


def _runs_every_iteration(loop: gast.stmt) -> bool:
    """Whether ``loop`` is a ``for`` over ``range`` whose every iteration runs unless an error stops it:
    nothing in it breaks, returns, raises or waits on a ``while``."""
    return range_bounds(loop) is not None and not any(
        isinstance(n, (gast.Break, gast.Return, gast.Raise, gast.While)) for n in walk(loop))


def _continues(stmt: gast.stmt) -> bool:
    """Whether ``stmt`` may end its loop's iteration early (a check after it may not run)."""
    return any(isinstance(n, gast.Continue) for n in walk(stmt))


def _block(stmts: List[gast.stmt], facts: _Facts,
           loop: Optional[gast.For] = None) -> Tuple[List[gast.stmt], List[gast.stmt]]:
    """``stmts`` with their checks, and the checks to stand before ``loop`` (``stmts`` is its body)."""
    out: List[gast.stmt] = []
    hoisted: List[gast.stmt] = []
    for stmt in stmts:
        headers = _HEADERS.get(type(stmt))
        here, before = _checks(stmt, _marked([stmt] if headers is None else [getattr(stmt, h) for h in headers]),
                               facts, loop)
        out.extend(here)
        hoisted.extend(before)
        if headers is None:
            facts.assign(stmt)
        else:
            out.extend(_blocks(stmt, facts))
        out.append(stmt)
        if _continues(stmt):
            loop = None
    return out, hoisted


def _blocks(stmt: gast.stmt, facts: _Facts) -> List[gast.stmt]:
    """Check ``stmt``'s blocks; the checks its body's iterations share, to stand before it."""
    body_loop = stmt if _runs_every_iteration(stmt) else None
    stmt.body, hoisted = _block(stmt.body, facts.entering(stmt), body_loop)
    stmt.orelse, _ = _block(stmt.orelse, facts.entering(stmt, body=False))
    facts.forget(rebound_names(stmt))
    return hoisted


def transform(fdef: gast.FunctionDef) -> gast.FunctionDef:
    """Insert the run-time checks that ``fdef``'s marks ask for."""
    fdef.body, _ = _block(fdef.body, _Facts())
    return fdef
