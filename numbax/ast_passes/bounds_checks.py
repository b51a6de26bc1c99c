"""bounds_checks: check each integer index the user wrote before the statement that uses it.

Expects A-normal form, whose subscripts have atoms for their indices, and the
``anno.Key.USER_INDEX`` marks that ``specialize`` puts on the subscripts the
user wrote (and on no subscript numbax generates). Guarantees that before each
statement holding such subscripts (reads first, then writes, in Python's
order of evaluation) stands one call per index that is not a slice, ``None``
or ``...``,

    rt.check_index(x, i, 0, 'demo.py:12:8')

naming the array, the index, its axis (counted from the end after ``...``)
and the user's ``file:line:column``; the mark is consumed, so applying the
pass twice changes nothing. It runs before the transformations: the checks
are effects that carry no derivative, and every index ``grad`` or ``vmap``
generates comes after it, unchecked. ``rt.check_index`` decides by type
whether there is anything to check (an integer into an array).

    >>> import gast
    >>> from numbax.ast_passes import anno
    >>> from numbax.ast_passes.origin import Origin
    >>> from numbax.ast_passes.unparse import unparse
    >>> f = gast.parse("def f(a, i):\\n    t = a[i, :, -1]\\n    return t").body[0]
    >>> anno.setanno(f.body[0].value, anno.Key.USER_INDEX, Origin("demo.py", 2, 8, ""))
    >>> print(unparse(transform(f)))
    def f(a, i):
        rt.check_index(a, i, 0, 'demo.py:2:8')
        rt.check_index(a, -1, 2, 'demo.py:2:8')
        t = a[i, :, -1]
        return t
"""
from __future__ import annotations

from typing import List, Tuple

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.unparse import unparse

# evaluated once, before the block (A-normal form leaves no subscript in a ``while`` test)
_HEADERS = {gast.If: ("test",), gast.While: ("test",), gast.For: ("iter",)}


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


def _marked(nodes) -> List[gast.Subscript]:
    subscripts = [n for root in nodes for n in gast.walk(root)
                  if isinstance(n, gast.Subscript) and anno.hasanno(n, anno.Key.USER_INDEX)]
    return sorted(subscripts, key=lambda n: isinstance(n.ctx, gast.Store))  # Python reads before it writes


def _checks(stmt: gast.stmt, subscripts: List[gast.Subscript]) -> List[gast.stmt]:
    out = []
    for subscript in subscripts:
        origin = anno.getanno(subscript, anno.Key.USER_INDEX)
        anno.delanno(subscript, anno.Key.USER_INDEX)
        where = f"{origin.filename}:{origin.lineno}:{origin.col_offset}"
        for part, axis in _positions(subscript.slice):
            check = gast.parse(f"rt.check_index({unparse(subscript.value)}, {unparse(part)}, {axis}, "
                               f"{where!r})").body[0]
            out.append(anno.copyanno(stmt, gast.copy_location(check, stmt)))
    return out


def _block(stmts: List[gast.stmt]) -> List[gast.stmt]:
    out: List[gast.stmt] = []
    for stmt in stmts:
        headers = _HEADERS.get(type(stmt))
        if headers is None:
            out.extend(_checks(stmt, _marked([stmt])))
        else:
            out.extend(_checks(stmt, _marked([getattr(stmt, h) for h in headers])))
            stmt.body, stmt.orelse = _block(stmt.body), _block(stmt.orelse)
        out.append(stmt)
    return out


def transform(fdef: gast.FunctionDef) -> gast.FunctionDef:
    """Insert the checks of the user's integer indices into ``fdef``."""
    fdef.body = _block(fdef.body)
    return fdef
