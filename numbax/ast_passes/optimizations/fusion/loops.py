"""Write a group out: what runs before the loop nest, the nest itself, and what runs after it."""
from __future__ import annotations

from typing import List, Optional

import gast

from numbax.ast_passes.analyses.nodes import assign, name, rt_call
from numbax.ast_passes.analyses.shapes import axis_length, dim_length
from numbax.ast_passes.analyses.usage import count_in
from numbax.ast_passes.optimizations.fusion.recompute import scalar_reads
from numbax.ast_passes.tree_copy import copy_tree


def bounds(group) -> Optional[List[gast.expr]]:
    """The extent of each axis of the group's shape: from a parameter's shape where the symbol names one
    (``x.shape[0] - 1``), else from an array the loop reads; None when neither is at hand."""
    out = []
    for axis, dim in enumerate(group.shape):
        length = dim_length(dim, group.facts.unchanged_params)
        if length is None and group.references:
            length = axis_length(copy_tree(next(iter(group.references.values()))), axis)
        if length is None:
            return None
        out.append(length)
    return out


def _loads(stmts: List[gast.stmt], array: str) -> int:
    """How many times the statements read ``array`` (``array += g`` counts as a read)."""
    return count_in(stmts)[1][array]


def _read_after(group, array: str, block, in_loop: bool) -> bool:
    """Whether a statement may read the value the loop gives ``array``: one after the group, one moved
    after the loop, one outside this block, or, in a loop, one earlier in the block or the group's own
    statements that read ``array`` before they define it (``dv = dz * w; dz = dv``), in the next iteration."""
    start, end = block.start, block.end
    if _loads(block.stmts[end:] + [stmt for stmt, _ in group.deferred], array):
        return True
    if group.facts.total_loads(array) > _loads(block.stmts, array):
        return True
    if in_loop:
        for stmt in block.stmts[:start]:
            if _loads([stmt], array):
                return True
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) and \
                    stmt.targets[0].id == array:
                return False
        return array in group.read_then_defined
    return False


def _operations(node: gast.expr) -> int:
    """The arithmetic operations and calls in an element's expression (its subscripts not counted)."""
    if isinstance(node, gast.Subscript):
        return 0
    own = isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Call))
    return own + sum(_operations(child) for child in gast.iter_child_nodes(node) if isinstance(child, gast.expr))


def worth_fusing(group, block, in_loop: bool) -> bool:
    """Whether the loop does more than one array operation whose result is kept: at least two statements of
    its body that accumulate or make a value another statement of the body or code after the loop reads, or
    one such statement of two operations or more (``np.tanh(x @ w + b)``, which Numba would compile as an
    array expression, and whose ``np.tanh`` is then no ufunc to fuse). One operation alone Numba does as well."""
    body_reads = [n.id for stmt in group.body for n in gast.walk(stmt)
                  if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]
    kept = [stmt for stmt in group.body if isinstance(stmt, gast.AugAssign)]
    for array, element in group.defined.items():
        if isinstance(element, gast.Name) and (element.id in body_reads or _read_after(group, array, block, in_loop)):
            kept += [stmt for stmt in group.body if isinstance(stmt, gast.Assign) and stmt.targets[0].id == element.id]
    return len(kept) >= 2 or (len(kept) == 1 and _operations(kept[0].value) >= 2)


def allocation(maker: str, extents: List[gast.expr]) -> gast.Call:
    """``np.<maker>(n)`` or ``np.<maker>((n0, n1))`` (``empty``, ``zeros``) of float64 over ``extents``."""
    shape = copy_tree(extents[0]) if len(extents) == 1 else \
        gast.Tuple(elts=[copy_tree(e) for e in extents], ctx=gast.Load())
    return gast.Call(func=gast.Attribute(value=name("np"), attr=maker, ctx=gast.Load()), args=[shape], keywords=[])


def _rows_in_scalars(group, body: List[gast.stmt]):
    """``body`` with each partial sum that the innermost loop does not index (a row's sum, ``s[j0, 0] += e``)
    summed in a scalar over that loop instead, with what starts those scalars before the innermost loop and
    what adds them in after it: no store per element, so the loop vectorizes."""
    innermost = len(group.shape) - 1
    before, after = [], []
    out = []
    for stmt in body:
        target = stmt.target if isinstance(stmt, gast.AugAssign) else None
        array = target.value.id if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) \
            else None
        if array not in group.partials or innermost in group.partials[array]:
            out.append(stmt)
            continue
        row = group.facts.namer.new(f"{array}_row")
        before.append(assign(row, gast.Constant(value=0.0, kind=None)))
        out.append(gast.copy_location(assign(row, rt_call("add_unordered", name(row), stmt.value)), stmt))
        after.append(gast.AugAssign(target=target, op=gast.Add(), value=name(row)))
    return out, before, after


def _partial_zeros(slots: List[Optional[int]], extents: List[gast.expr]) -> gast.Call:
    """The zeros a partial sum starts from: along each axis the extent of the loop's axis it takes (``slots``,
    ``elements.broadcast_slots``), or 1."""
    return allocation("zeros", [extents[k] if k is not None else gast.Constant(value=1, kind=None) for k in slots])


def loop_nest(index: List[str], extents: List[gast.expr], body: List[gast.stmt]) -> gast.For:
    """``for index[0] in range(extents[0]): for index[1] ...: body``."""
    for i, extent in reversed(list(zip(index, extents))):
        body = [gast.For(target=name(i, True), iter=gast.Call(func=name("range"), args=[copy_tree(extent)],
                                                               keywords=[]), body=body, orelse=[], type_comment=None)]
    return body[0]


def _unordered(group, stmt: gast.stmt) -> gast.stmt:
    """A scalar sum's step ``total += x`` as ``total = rt.add_unordered(total, x)``: a sum of array elements
    in no promised order, which LLVM may then vectorize with a partial sum per lane."""
    if not (isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add) and isinstance(stmt.target, gast.Name)
            and stmt.target.id in group.accumulators and stmt.target.id not in group.partials):
        return stmt
    step = rt_call("add_unordered", name(stmt.target.id), stmt.value)
    return gast.copy_location(assign(stmt.target.id, step), stmt)


def emit(group, extents: List[gast.expr], block, in_loop: bool) -> List[gast.stmt]:
    """The group's statements, fused: moved-before, setup, the loop nest (over ``extents``), moved-after.

    ``block`` holds the statements around the group (``stmts``, and the group's ``start`` and ``end``);
    ``in_loop``: whether the block runs in a loop.
    """
    facts = group.facts
    deferred = [stmt for stmt, _ in group.deferred]
    for k, stmt in enumerate(deferred):
        scalar_reads(group, extents, stmt, deferred[:k])
    setup: List[gast.stmt] = [assign(acc, _partial_zeros(group.partials[acc], extents) if acc in group.partials else
                                     gast.Constant(value=0.0, kind=None)) for acc in sorted(group.accumulators)]
    stores: List[gast.stmt] = []
    after: List[gast.stmt] = []
    for array, scalar in group.defined.items():
        if not _read_after(group, array, block, in_loop):
            continue
        out = facts.namer.new(array) if array in group.read_then_defined else array
        setup.append(assign(out, allocation("empty", extents)))
        stores.append(assign(gast.Subscript(value=name(out), slice=group.index_tuple(), ctx=gast.Store()),
                             copy_tree(scalar)))
        facts.written_out.append((out, setup[-1], stores[-1]))
        if out != array:
            after.append(assign(array, name(out)))
    body, before, after_inner = _rows_in_scalars(group, [_unordered(group, stmt) for stmt in group.body])
    inner = loop_nest(group.index[-1:], extents[-1:], body + stores)
    nest = loop_nest(group.index[:-1], extents[:-1], before + [inner] + after_inner) if len(extents) > 1 else inner
    outer = [] if len(extents) > 1 else before
    return group.hoisted + setup + outer + [nest] + after_inner * (len(extents) == 1) + after + deferred
