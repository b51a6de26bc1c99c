"""one_hot_products: a matrix product whose left factor is rows of an identity, as a selection of rows.

Expects any function. ``jacfwd`` sweeps the rows of an identity: ``vmap`` makes a block of them and the
forward mode multiplies the block by what the function multiplies its input by (``e @ a.T`` for ``a @ x``),
``n`` multiplications and additions per entry for one nonzero term. Within one block of statements, this pass
follows the arrays known to hold rows of an identity, from the statements that make them::

    e = np.zeros((rows, n))                       # all zero
    for k in range(rows):                         # row k: column index[k] of the identity
        e[k, index[k]] = 1.0
    v = e[:, start:stop]                          # the columns from start on (a row may be zero)
    t = rt.reshape(v, (rows, m)).astype(np.float64)   # the same rows, the same numbers

and writes a product of such an array by any ``b``, ``t @ b``, as ``rt.one_hot_product(t, b, index, n,
start)``, which selects the rows of ``b`` and gives the same numbers (``runtime.one_hot``). A fact is dropped
at any statement that assigns, or writes into an array that may share memory with (``aliasing``), a name it
depends on; anything else (another dtype, another shape, a step in the slice, a statement in the loop) is
left as it is. Reports whether it changed anything.

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> src = ("def f(i, a):\\n    e = np.zeros((4, 3))\\n    for k in range(4):\\n        e[k, i[k]] = 1.0\\n"
    ...        "    t = e[:, 0:3].astype(np.float64)\\n    d = t @ a\\n    return d")
    >>> print(unparse(transform(gast.parse(src).body[0])[0]).splitlines()[-2])
        d = rt.one_hot_product(t, a, i, 3, 0)
"""
from __future__ import annotations

import dataclasses
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import gast

from numbax.ast_passes.analyses.aliasing import linked, sharing
from numbax.ast_passes.analyses.nodes import loads, name, rt_call
from numbax.ast_passes.optimizations.hoist_invariants import stored_in, updated_in_place
from numbax.ast_passes.optimizations.purity import is_pure
from numbax.ast_passes.tree_copy import copy_tree

_FLOATS = {"float64", "float32"}


@dataclasses.dataclass(frozen=True)
class _Rows:
    """An array of ``rows`` rows (the text of that expression), each zero (``index`` None) or, from column
    ``start`` of an identity of ``n`` columns, column ``index[k]``; ``depends``: the names it is made from."""

    rows: str
    n: gast.expr
    index: Optional[str]
    start: gast.expr
    depends: FrozenSet[str]
    array: str = ""  # the array the loop that made it wrote into


def _text(node: gast.AST) -> str:
    return gast.dump(node)


def _zeros(value: gast.expr) -> Optional[_Rows]:
    """``np.zeros((rows, n))``: zero rows."""
    if not (isinstance(value, gast.Call) and _is_np(value.func, "zeros") and len(value.args) == 1
            and not value.keywords and isinstance(value.args[0], gast.Tuple) and len(value.args[0].elts) == 2):
        return None
    rows, n = value.args[0].elts
    if not (is_pure(rows) and is_pure(n)):
        return None
    return _Rows(_text(rows), n, None, gast.Constant(value=0, kind=None), frozenset(loads(rows) | loads(n)))


def _is_np(func: gast.expr, attr: str) -> bool:
    return isinstance(func, gast.Attribute) and func.attr == attr and isinstance(func.value, gast.Name) \
        and func.value.id == "np"


class _Facts:
    """The arrays of one block known to be rows of an identity, by name."""

    def __init__(self, links: Dict[str, Set[str]]):
        self.links = links
        self.known: Dict[str, _Rows] = {}

    def of(self, value: gast.expr) -> Optional[_Rows]:
        """What ``value`` is: a known name, or one of them cut, reshaped or converted as the docstring says."""
        if isinstance(value, gast.Name):
            return self.known.get(value.id)
        if isinstance(value, gast.Subscript):
            return self._columns(value)
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr == "astype":
            if len(value.args) == 1 and not value.keywords and any(_is_np(value.args[0], t) for t in _FLOATS):
                return self.of(value.func.value)
            return None
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr == "reshape" \
                and not value.keywords:  # a view, or a copy: the same numbers
            runtime = isinstance(value.func.value, gast.Name) and value.func.value.id == "rt"
            operands = value.args if runtime else [value.func.value] + value.args
            return self._reshaped(*operands) if len(operands) == 2 else None
        return None

    def _reshaped(self, array: gast.expr, shape: gast.expr) -> Optional[_Rows]:
        """``array.reshape((rows, m))`` (``rt.reshape(array, (rows, m))``): the same rows."""
        found = self.of(array)
        if found is not None and isinstance(shape, gast.Tuple) and len(shape.elts) == 2 \
                and _text(shape.elts[0]) == found.rows and is_pure(shape.elts[1]):
            return found
        return None

    def _columns(self, value: gast.Subscript) -> Optional[_Rows]:
        """``e[:, start:stop]`` of rows of an identity cut at no column yet."""
        found = self.of(value.value)
        index = value.slice
        if found is None or found.index is None or not isinstance(found.start, gast.Constant) \
                or found.start.value != 0 or not (isinstance(index, gast.Tuple) and len(index.elts) == 2):
            return None
        every, cut = index.elts
        if not (isinstance(every, gast.Slice) and every.lower is None and every.upper is None and every.step is None
                and isinstance(cut, gast.Slice) and cut.step is None and is_pure(cut)):
            return None
        start = cut.lower if cut.lower is not None else gast.Constant(value=0, kind=None)
        return dataclasses.replace(found, start=start, depends=found.depends | loads(cut))

    def scatter(self, loop: gast.stmt) -> Optional[_Rows]:
        """``for k in range(rows): e[k, index[k]] = 1.0`` of zero rows ``e``: each row's one."""
        if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name) and not loop.orelse
                and len(loop.body) == 1 and isinstance(loop.body[0], gast.Assign)
                and isinstance(loop.iter, gast.Call) and isinstance(loop.iter.func, gast.Name)
                and loop.iter.func.id == "range" and len(loop.iter.args) == 1 and not loop.iter.keywords):
            return None
        k, (target,), value = loop.target.id, loop.body[0].targets, loop.body[0].value
        if not (isinstance(value, gast.Constant) and value.value == 1 and isinstance(target, gast.Subscript)
                and isinstance(target.value, gast.Name) and isinstance(target.slice, gast.Tuple)
                and len(target.slice.elts) == 2):
            return None
        row, column = target.slice.elts
        found = self.known.get(target.value.id)
        if found is None or found.index is not None or _text(loop.iter.args[0]) != found.rows \
                or not (isinstance(row, gast.Name) and row.id == k and isinstance(column, gast.Subscript)
                        and isinstance(column.value, gast.Name) and isinstance(column.slice, gast.Name)
                        and column.slice.id == k and column.value.id not in (k, target.value.id)):
            return None
        index = column.value.id
        return dataclasses.replace(found, index=index, depends=found.depends | {index}, array=target.value.id)

    def forget(self, stmt: gast.stmt) -> None:
        """Drop the facts that ``stmt`` may falsify."""
        if not self.known:
            return
        changed = stored_in([stmt]) | linked(updated_in_place([stmt]), self.links)
        self.known = {name: fact for name, fact in self.known.items()
                      if name not in changed and not fact.depends & changed}


def _product(value: gast.expr, facts: _Facts) -> Optional[gast.Call]:
    """``t @ b`` of rows of an identity ``t``, as the selection."""
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult)):
        return None
    found = facts.of(value.left)
    if found is None or found.index is None:
        return None
    return rt_call("one_hot_product", value.left, value.right, name(found.index), copy_tree(found.n),
                   copy_tree(found.start))


def _made(stmt: gast.stmt, facts: _Facts) -> Optional[_Rows]:
    """What ``t = value`` makes: zero rows, or rows of an identity (cut, reshaped, converted), depending on
    every name ``value`` reads besides; None for anything else."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
        return None
    found = _zeros(stmt.value) or facts.of(stmt.value)
    if found is None or stmt.targets[0].id in loads(stmt.value):
        return None
    return dataclasses.replace(found, depends=found.depends | loads(stmt.value))


def _block(stmts: List[gast.stmt], links: Dict[str, Set[str]]) -> bool:
    changed = False
    facts = _Facts(links)
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                changed |= _block(inner, links)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
            selection = _product(stmt.value, facts)
            if selection is not None:
                stmt.value = selection
                changed = True
        made = facts.scatter(stmt) or _made(stmt, facts)
        facts.forget(stmt)
        if made is not None:
            facts.known[made.array if isinstance(stmt, gast.For) else stmt.targets[0].id] = made
    return changed


def transform(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """Select rows for the products by rows of an identity in ``fdef``; ``(fdef, changed)``. Not where the
    function binds ``rt`` itself (the runtime's name in generated code)."""
    if "rt" in {a.id for a in fdef.args.args} | stored_in(fdef.body):
        return fdef, False
    return fdef, _block(fdef.body, sharing(fdef))
