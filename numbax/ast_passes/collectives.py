"""The ``collectives`` pass: a ``vmap`` loop that holds collectives, run in stages that stop at each of them.

Expects A-normal form, inlined, with each collective a marker statement ``t = rt.collective_<kind>(x, tags,
*params)`` (``numbax.lax.collective_lowering``), and each loop that ``vmap`` wrote for an axis with
collectives tagged ``anno.Key.STAGED`` (its axis's tag and its outputs). Guarantees: no marker of such a
loop's axis remains, and its outputs are stacked in the names its annotation gives.

Each loop over the examples is cut at the markers at the top of its body. Stage ``k`` runs every example up
to marker ``k + 1``, storing each value a later stage reads in a buffer with one row per example (restored
from it there), and the marker's operand in a buffer of its own; between stages the collective runs over
that buffer's rows (``primitives.transports.BATCH``). A marker of an enclosing ``vmap``'s axis runs between
the stages too, over the buffer of this loop's examples (its parameters ``lifted``), and stays a marker:
the enclosing loop's stages lower it. Each stage is its first example, then a loop over the others (so
that each buffer is made from the first example's value, and ``hoist_invariants`` may read the loop as a
``vmap`` loop); a stage's own values are renamed, so that each buffer is written in one stage only::

    for i in range(0, batch):           # STAGED('i@0', outputs=(('res', 'out'),))
        y = x[i] * 2.0
        t = rt.collective_psum(y, ('i@0',))
        res = y / t

becomes::

    i = 0
    y = x[i] * 2.0
    y_rows = rt.stack_buffer(y, batch)     # y, read in the next stage
    y_rows[i] = y
    y_rows_1 = rt.stack_buffer(y, batch)   # the collective's operand, in rows of its own
    y_rows_1[i] = y
    for i in range(1, batch): ...          # the same, the buffers made already
    t = np.sum(y_rows_1, axis=0)
    i = 0
    y_1 = y_rows[i]
    res_1 = y_1 / t
    out = rt.stack_buffer(res_1, batch)
    ...

A loop of a known trip count (``lax.fori_loop(0, 3, ...)``, at most ``_UNROLL_LIMIT``) that holds markers of
this loop's axis is written out first, so that its markers are at the top of the body. Markers anywhere else
but at the top of the body (in a branch, a ``while``, a loop of a run-time trip count) are refused at the
user's line: the examples would have to stop there together.
"""
from __future__ import annotations

import ast
import dataclasses
from typing import Any, Dict, List, Optional, Set, Tuple

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.naming import Namer
from numbax.ast_passes.tree_copy import copy_nodes, copy_tree, walk
from numbax.errors import NumbaxBatchingError, NumbaxInternalError
from numbax.primitives.transports import TRANSPORTS

_PREFIX = "collective_"


@dataclasses.dataclass(frozen=True)
class Staged:
    """A ``vmap`` loop over an axis with collectives: the axis's tag, and (result, stacked output) names; the
    transport of its collectives (``primitives.transports``) and, where the loop runs this process's shards
    of an axis across processes (``"mpi"``), the axis's whole size and the name of this process's first
    shard's index; on threads (``"threads"``), the names of the number of shards, of this thread's shard's index
    and of the exchange (``transforms.pmap.thread_shards``)."""

    tag: str
    outputs: Tuple[Tuple[str, str], ...]
    transport: str = "batch"
    size: Any = None
    first_shard: Optional[str] = None
    exchange: Optional[str] = None

    def outputs_named(self) -> Set[str]:
        """The names of the outputs, results and stacked ones (which nothing assigns before this pass)."""
        return {name for pair in self.outputs for name in pair}

    def renamed(self, mapping: Dict[str, str]) -> "Staged":
        """The same loop after its code's names were renamed by ``mapping`` (``inline``, renaming a helper's
        locals apart from its caller's)."""
        def new(name):
            return mapping.get(name, name) if isinstance(name, str) else name

        return dataclasses.replace(self, outputs=tuple((new(r), new(o)) for r, o in self.outputs),
                                   size=new(self.size), first_shard=new(self.first_shard),
                                   exchange=new(self.exchange))


@dataclasses.dataclass
class _Marker:
    stmt: gast.Assign
    target: str
    kind: str
    operand: str
    tags: Tuple[str, ...]
    params: tuple


def _literal(node: gast.expr) -> Any:
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.Tuple):
        return tuple(_literal(e) for e in node.elts)
    source = ast.unparse(gast.gast_to_ast(node))
    raise NumbaxInternalError(f"a collective marker's parameter is not a literal: {source}")


def marker(stmt: gast.stmt) -> Optional[_Marker]:
    """The collective a statement is the marker of, or None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
        return None
    call = stmt.value
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and isinstance(call.func.value, gast.Name) and call.func.value.id == "rt"
            and call.func.attr.startswith(_PREFIX)):
        return None
    operand = call.args[0]
    if not isinstance(operand, gast.Name):
        raise NumbaxInternalError("a collective marker's operand is not a name: A-normal form was expected",
                                  anno.getanno(stmt, anno.Key.ORIGIN))
    return _Marker(stmt, stmt.targets[0].id, call.func.attr[len(_PREFIX):], operand.id, _literal(call.args[1]),
                   tuple(_literal(a) for a in call.args[2:]))


def _names(stmts: List[gast.stmt], ctx: type) -> Set[str]:
    return {n.id for s in stmts for n in gast.walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, ctx)}


_UNROLL_LIMIT = 64  # trips of a loop with collectives that are written out, at most


def _holds_marker(stmt: gast.stmt, tag: str) -> bool:
    return any(isinstance(n, gast.stmt) and n is not stmt and (marker(n) is not None and tag in marker(n).tags)
               for n in gast.walk(stmt))


def _static_trips(loop: gast.For) -> Optional[range]:
    """The values of a ``for`` over ``range`` of constants (``lax.fori_loop(0, 3, ...)``) without ``break``,
    ``continue`` or ``else``; None for any other loop."""
    it = loop.iter
    if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range"
            and not it.keywords and 1 <= len(it.args) <= 3 and isinstance(loop.target, gast.Name)
            and all(isinstance(a, gast.Constant) and type(a.value) is int for a in it.args) and not loop.orelse):
        return None
    if any(isinstance(n, (gast.Break, gast.Continue)) for n in gast.walk(loop)):
        return None
    trips = range(*(a.value for a in it.args))
    return trips if len(trips) <= _UNROLL_LIMIT else None


def _unrolled(stmts: List[gast.stmt], tag: str) -> List[gast.stmt]:
    """``stmts`` with each loop of a known trip count that holds a collective of the axis ``tag`` written out
    (every example runs it the same number of times, so the examples reach each collective together); the
    collectives of its body are then at the top, where the stages stop."""
    out: List[gast.stmt] = []
    for stmt in stmts:
        trips = _static_trips(stmt) if isinstance(stmt, gast.For) and _holds_marker(stmt, tag) else None
        if trips is None:
            out.append(stmt)
            continue
        for value in trips:
            out += _parse(f"{stmt.target.id} = {value}", stmt) + _unrolled(copy_nodes(stmt.body), tag)
    return out


def _refuse_nested(stmts: List[gast.stmt], tag: str) -> None:
    """A marker of this axis inside a branch or a loop of the body."""
    for stmt in stmts:
        for node in gast.walk(stmt):
            if node is stmt or not isinstance(node, gast.stmt):
                continue
            found = marker(node)
            if found is not None and tag in found.tags:
                raise NumbaxBatchingError(
                    f"numbax.lax.{found.kind} inside a branch or a loop of a vmapped function is not supported: "
                    "every example must reach the collective together",
                    anno.getanno(node, anno.Key.ORIGIN),
                    hint="call the collective at the top level of the mapped function, or in a loop of at most "
                    f"{_UNROLL_LIMIT} trips known when compiling (lax.fori_loop(0, 10, ...)); compute both branches "
                    "and select with np.where.")


def _parse(source: str, where: gast.stmt) -> List[gast.stmt]:
    stmts = gast.parse(source).body
    for stmt in stmts:
        for node in gast.walk(stmt):
            if isinstance(node, (gast.stmt, gast.expr)):
                gast.copy_location(node, where)
        anno.copyanno(where, stmt)
    return stmts


class _Splitter:
    """One staged loop, cut into stages."""

    def __init__(self, loop: gast.For, staged: Staged, namer: Namer):
        self.loop, self.staged, self.namer = loop, staged, namer
        self.index = loop.target.id
        self.size_source = ast.unparse(gast.gast_to_ast(self.size()))
        self.rows: Dict[str, str] = {}  # variable -> the rows of the latest stage that stored it

    def size(self) -> gast.expr:
        """The axis size, as the loop's ``range`` has it."""
        return copy_tree(self.loop.iter.args[1])

    def split(self) -> List[gast.stmt]:
        """The stages and the collectives between them, in place of the loop."""
        segments: List[List[gast.stmt]] = [[]]
        markers: List[_Marker] = []
        for stmt in _unrolled(self.loop.body, self.staged.tag):
            found = marker(stmt)
            if found is None:
                segments[-1].append(stmt)
            else:
                markers.append(found)
                segments.append([])
        for segment in segments:
            _refuse_nested(segment, self.staged.tag)
        heads: List[List[gast.stmt]] = [[] for _ in segments]  # per stage: each example's part of a collective
        between = [self._between(m, heads, k + 1) for k, m in enumerate(markers)]
        stages = [heads[k] + segments[k] for k in range(len(segments))]
        reads = [_names(stage, gast.Load) | ({markers[k].operand} if k < len(markers) else set())
                 for k, stage in enumerate(stages)]
        reads[-1] |= {res for res, _ in self.staged.outputs}
        writes = [_names(stage, gast.Store) - {self.index} for stage in stages]
        out: List[gast.stmt] = []
        for k, stage in enumerate(stages):
            earlier = set().union(*writes[:k])
            later = set().union(*reads[k + 1:])
            restores = sorted(earlier & (reads[k] | (writes[k] & later)))  # a value a branch may not write
            renamed = {v: self.namer.new(v) for v in sorted(writes[k] | set(restores))} if k else {}
            stage = _renamed(stage, renamed)
            restored = [(renamed[v], self.rows[v]) for v in restores]
            stores = [(renamed.get(v, v), self.namer.new(f"{v}_rows")) for v in sorted(writes[k] & later)]
            self.rows.update((v, rows) for v, (_, rows) in zip(sorted(writes[k] & later), stores))
            if k < len(markers):
                operand = markers[k].operand
                stores.append((renamed.get(operand, operand), self.namer.new(f"{operand}_rows")))
                between[k] = [s for text in between[k] for s in _parse(text.replace("{xs}", stores[-1][1]),
                                                                        markers[k].stmt)]
            if k == len(stages) - 1:
                stores += [(renamed.get(res, res), stacked) for res, stacked in self.staged.outputs]
            out += self._stage(stage, restored, stores)
            if k < len(markers):
                out += between[k]
        return out

    def _between(self, found: _Marker, heads: List[List[gast.stmt]], stage: int) -> List[str]:
        """The code between the stages for one marker (``{xs}`` left for its operand's rows); the read of each
        example's part added to the head of the stage after it."""
        size, rule = self.size_source, TRANSPORTS[self.staged.transport][found.kind]
        shard = self.index
        if self.staged.transport != "batch":
            size, shard = str(self.staged.size), f"({self.staged.first_shard} + {self.index})"
        if self.staged.tag not in found.tags:  # an enclosing axis's: over the stacked rows, lowered there
            shared = self.namer.new(found.target + "_stacked")
            params = "".join(f", {p!r}" for p in rule.lifted(*found.params))
            heads[stage].extend(_parse(f"{found.target} = {shared}[{self.index}]", found.stmt))
            return [f"{shared} = rt.{_PREFIX}{found.kind}({{xs}}, {found.tags!r}{params})"]
        rest = tuple(t for t in found.tags if t != self.staged.tag)
        if rest and self.staged.transport != "batch":
            raise NumbaxBatchingError(f"numbax.lax.{found.kind} over a pmap's axis across processes and another "
                                      "axis at once is not supported", anno.getanno(found.stmt, anno.Key.ORIGIN),
                                      hint="call the collective once per axis name.")
        out = self.namer.new(found.target + "_all") if rule.per_example or rest else found.target
        self.namer.reserve([out + "_moved", out + "_gathered"])
        origin = anno.getanno(found.stmt, anno.Key.ORIGIN)
        where = repr(origin.position() if origin is not None else "")
        code = [rule.shared(*found.params).format(out=out, xs="{xs}", n=size, where=where, shards=self.staged.exchange)]
        if rest:
            code.append(f"{found.target} = rt.{_PREFIX}{found.kind}({out}, {rest!r})")
        if rule.per_example is not None:
            read = rule.per_example(*found.params).format(out=out, i=self.index, g=shard, n=size)
            heads[stage].extend(_parse(f"{found.target} = {read}", found.stmt))
        return code

    def _stage(self, stage: List[gast.stmt], restored: List[Tuple[str, str]],
               stores: List[Tuple[str, str]]) -> List[gast.stmt]:
        """The first example (making the buffers) and the loop over the others."""
        where = self.loop
        body = [s for v, rows in restored for s in _parse(f"{v} = {rows}[{self.index}]", where)]
        first = _parse(f"{self.index} = 0", where) + copy_nodes(body) + copy_nodes(stage)
        for value, rows in stores:
            first += _parse(f"{rows} = rt.stack_buffer({value}, {self.size_source})\n{rows}[{self.index}] = {value}",
                            where)
        origin = anno.getanno(where, anno.Key.ORIGIN)
        checked = repr(origin.position() if origin is not None else "")  # an example's value of another shape
        rest = body + stage + [s for value, rows in stores
                               for s in _parse(f"rt.check_row({rows}, {value}, {checked})\n"
                                               f"{rows}[{self.index}] = {value}", where)]
        loop = gast.For(target=gast.Name(id=self.index, ctx=gast.Store(), annotation=None, type_comment=None),
                        iter=gast.Call(func=gast.Name(id="range", ctx=gast.Load(), annotation=None,
                                                      type_comment=None),
                                       args=[gast.Constant(value=1, kind=None), self.size()], keywords=[]),
                        body=rest, orelse=[], type_comment=None)
        gast.copy_location(loop, where)
        anno.copyanno(where, loop)
        anno.delanno(loop, anno.Key.STAGED)
        anno.setanno(loop, anno.Key.BATCH_LOOP, True)
        return first + [loop]


def _renamed(stmts: List[gast.stmt], names: Dict[str, str]) -> List[gast.stmt]:
    """Copies of ``stmts`` with each variable in ``names`` renamed (one stage's own values, apart from the
    other stages': each buffer is written in one stage and read in later ones only)."""
    copies = copy_nodes(stmts)
    for stmt in copies:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and node.id in names:
                node.id = names[node.id]
    return copies


def _block(stmts: List[gast.stmt], namer: Namer) -> List[gast.stmt]:
    """``stmts`` with every staged loop in them (innermost first) cut into stages."""
    out: List[gast.stmt] = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list):
                setattr(stmt, field, _block(getattr(stmt, field), namer))
        staged = anno.getanno(stmt, anno.Key.STAGED) if isinstance(stmt, gast.For) else None
        out += _Splitter(stmt, staged, namer).split() if staged is not None else [stmt]
    return out


def transform(fdef: gast.FunctionDef) -> gast.FunctionDef:
    """Cut each staged ``vmap`` loop of ``fdef`` into stages at its collectives (see the module docstring)."""
    if not any(anno.hasanno(n, anno.Key.STAGED) for n in walk(fdef) if isinstance(n, gast.For)):
        return fdef
    namer = Namer(n.id for n in walk(fdef) if isinstance(n, gast.Name))
    fdef.body = _block(fdef.body, namer)
    return fdef
