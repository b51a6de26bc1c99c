"""alias_checks: refuse writes into an array that may share memory with another one.

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
the write, with the definition it came from -- unless every array the
definition may share memory with is read nowhere else (``_private``: a
temporary only that definition reads, such as the cotangent a reverse sweep
hands to ``rt.unbroadcast``), when the write changes nothing that is read.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.aliasing import definitions, linked, may_alias, sources, subscript_writes, \
    view_links
from numbax.ast_passes.analyses.nodes import base, in_order, own_expressions
from numbax.errors import NumbaxDifferentiationError

_SHAPE_ATTRIBUTES = {"shape", "ndim", "size", "dtype"}


def _updates(fdef: gast.FunctionDef, avals: Dict[str, tuple]):
    """``subscript_writes``' triples for the in-place updates of arrays, ``x += y`` (``x_1 = x + y`` by now).

    Generated code that is differentiated again (``jvp`` of ``grad``) keeps the mark on statements that its
    optimizations rewrote into other values (``dx = dt``): those rebind a name, as the code runs them, and
    write into no array."""
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign) and anno.hasanno(node, anno.Key.IN_PLACE) and \
                isinstance(node.value, gast.BinOp) and isinstance(node.value.left, gast.Name):
            array = node.value.left
            if (avals.get(array.id) or ("", 1))[1]:  # an array, or a value whose rank is not known
                symbol = ast.unparse(gast.gast_to_ast(node.value)).split()[1]  # ``x + y``: ``+``
                yield node, array, f"{array.id} {symbol}= ..."


def _array_reads(fdef: gast.FunctionDef) -> Dict[str, int]:
    """How many times each name is read, leaving out the run-time checks (``rt.check_reshape(x, ...)``), which
    read arrays' shapes and indices, not the arrays' elements."""
    checks = {id(n) for stmt in gast.walk(fdef) if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)
              and isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr.startswith("check_")
              and isinstance(stmt.value.func.value, gast.Name) and stmt.value.func.value.id == "rt"
              for n in gast.walk(stmt)}
    reads: Dict[str, int] = {}
    for node in gast.walk(fdef):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and id(node) not in checks:
            reads[node.id] = reads.get(node.id, 0) + 1
    return reads


def _private(definition: gast.Assign, name: str, defs: Dict[str, List[gast.Assign]], loads: Dict[str, int],
             params: Set[str]) -> bool:
    """Whether the arrays ``name``'s ``definition`` may share memory with are read nowhere else: each is a
    fresh array (assigned once, not itself a possible alias, not a parameter) whose every read is in a
    definition of ``name`` (``dx = rt.unbroadcast(t, x)`` of a temporary ``t``). A write into ``name`` then
    changes nothing that anything reads."""
    for source in sources(definition.value):
        found = defs.get(source, ())
        if source in params or len(found) != 1 or may_alias(found[0].value):
            return False
        within = sum(1 for d in defs.get(name, ()) for n in gast.walk(d.value)
                     if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id == source)
        if loads.get(source, 0) != within:
            return False
    return True


def check(fdef: gast.FunctionDef, active: Set[str], avals: Dict[str, tuple]) -> None:
    """Raise ``NumbaxDifferentiationError`` at the first active write through a possible alias in ``fdef``,
    or into an array a view of which is read after the write (``avals``: which names hold arrays). An update in
    place (``v += 1``) through a possible alias is refused active or not: ``canonicalize`` made it a new value
    (``v_1 = v + 1``), so the array it shares memory with (``v = x[1]``) would keep its old elements."""
    defs = definitions(fdef)
    _check_views_read_later(fdef, active, avals, defs)
    loads = _array_reads(fdef)
    params = {a.id for a in fdef.args.args}
    updates = list(_updates(fdef, avals))
    rebound = {id(stmt) for stmt, _, _ in updates}  # ``x += y`` made ``x_1 = x + y``: no write, active or not
    for stmt, target, written in [*subscript_writes(fdef), *updates]:
        name = base(target)
        if name not in active and id(stmt) not in rebound:
            continue
        source: Optional[gast.Assign] = next((d for d in defs.get(name, ()) if may_alias(d.value) and
                                              not _private(d, name, defs, loads, params)), None)
        if source is None:
            continue
        defined = ast.unparse(gast.gast_to_ast(source.value))
        origin = anno.getanno(source, anno.Key.ORIGIN)
        where = f" (line {origin.lineno})" if origin is not None else ""
        raise NumbaxDifferentiationError(
            f"`{written}` writes into `{name}`, which may share memory with another array "
            f"(`{name} = {defined}`{where}); numbax's differentiation cannot follow writes through views or aliases",
            anno.getanno(stmt, anno.Key.ORIGIN),
            hint=f"write into the original array directly, or copy first: `{name} = np.copy({defined})`.")


def _reads(stmt: gast.stmt) -> Set[str]:
    """The names ``stmt`` itself reads the elements of (not ``v.shape`` and the like, which writes keep)."""
    shapes = {id(n.value) for part in own_expressions(stmt) for n in gast.walk(part)
              if isinstance(n, gast.Attribute) and n.attr in _SHAPE_ATTRIBUTES}
    return {n.id for part in own_expressions(stmt) for n in gast.walk(part)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in shapes}


def _check_views_read_later(fdef: gast.FunctionDef, active: Set[str], avals: Dict[str, tuple],
                            defs: Dict[str, List[gast.Assign]]) -> None:
    """A view ``v = x[:-1]`` (or ``v = x``) defined before ``x[1:] = ...`` or ``x += ...`` and read after it
    sees the new elements, which reverse mode, keeping one adjoint per variable, would send to the old ones (and
    forward mode's ``x = x + ...`` never writes into ``v``): refuse the write.

    The statements that run after the write are those that follow it in the source, then (in a loop) those
    of the loop before it, in the next iteration; a view is stale after the write if one of its definitions
    may have run before it, until a definition that surely runs replaces it. The write's own right side is
    read before it (NumPy copies an overlapping right side first)."""
    links = view_links(defs, avals)
    views = {name: linked({name}, links) - {name} for name in links}
    written_as = {id(stmt): (target, text) for stmt, target, text in [*subscript_writes(fdef), *_updates(fdef, avals)]}
    targets = {key: target for key, (target, _) in written_as.items()}
    order = list(in_order(fdef.body))
    for k, (stmt, around) in enumerate(order):
        written = base(targets[id(stmt)]) if id(stmt) in targets else None
        if written not in active or not views.get(written):
            continue
        loops = {id(s) for s in around if isinstance(s, (gast.For, gast.While))}
        defined = {id(d) for v in views[written] for d in defs[v]}
        stale = {v for v in views[written] for j, (other, other_around) in enumerate(order)
                 if id(other) in {id(d) for d in defs[v]} and (j < k or loops & {id(s) for s in other_around})}
        first = next((j for j, (_, a) in enumerate(order) if loops & {id(s) for s in a}), k)
        last = max((j for j, (_, a) in enumerate(order) if loops & {id(s) for s in a}), default=k)
        after = order[k + 1:last + 1] + order[first:k] + order[last + 1:]
        for other, other_around in after:
            read = _reads(other) & stale
            if read:
                _refuse(stmt, written_as[id(stmt)][1], written, sorted(read)[0], other, defs)
            if id(other) in defined and {id(s) for s in other_around} <= loops:
                stale -= {other.targets[0].id}


def _refuse(stmt, text, written, view, reader, defs) -> None:
    source = next(d for d in defs[view] if may_alias(d.value))
    line = anno.getanno(reader, anno.Key.ORIGIN)
    raise NumbaxDifferentiationError(
        f"`{text}` writes into `{written}`, and `{view}` "
        f"(`{view} = {ast.unparse(gast.gast_to_ast(source.value))}`), which may share its memory, is read after "
        f"the write{f' (line {line.lineno})' if line is not None else ''}; numbax's differentiation cannot follow "
        f"reads of a view whose array changed", anno.getanno(stmt, anno.Key.ORIGIN),
        hint=f"copy the view before the write (`{view} = np.copy(...)`), or index `{written}` itself after it.")
