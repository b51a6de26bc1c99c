"""fusion: runs of elementwise array statements over one shape become one loop nest.

Numba fuses the operations of one array expression into a single loop, but
not across statements, and reverse mode writes one statement per adjoint:
the gradient of ``np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)``
would make a dozen temporary arrays. This pass finds, in each block, runs of
statements that compute elementwise over arrays of one symbolic shape
(``shapes``), accumulate into such arrays (``dx_view += g``), read arrays
that broadcast to that shape (a row's maximum kept with ``keepdims=True``), or
sum them whole or along axes (``np.sum(e, axis=1, keepdims=True)``, a
broadcast's adjoint; a sum that the innermost loop does not index adds up in a
scalar over that loop), and writes each run as one loop nest with a scalar per
array::

    dx = rt.zeros_like(x)
    for j in range(x.shape[0] - 1):
        t4_j = x[j + 1] - x[j] ** 2
        ...
        dx[j] += dt4_j

Dims that broadcast join (``symbolic.joining``): ``-y * z`` of a ``y`` and a
``z`` whose lengths nothing proves equal is one loop over the length NumPy
broadcasts them to, each read at its index clamped to its own length
(``fusion.versions`` then writes the loop a second time for equal lengths).

Statements of the run that take no part move before the loop when they
commute with the fused statements before them, or after it when they commute
with those after them (``group``); arrays read outside the loop are written
out; a statement that can do neither ends the run. Expects the generated code
after ``optimize``, and is applied to programs whose floating-point inputs are
all float64, where every float array the code makes is float64 too, so that
written-out arrays and sums can be made without knowing dtypes. Reports whether it changed anything.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Set, Tuple

import gast

from numbax.ast_passes.analyses import avals as avals_analysis
from numbax.ast_passes.analyses import shapes as shapes_analysis
from numbax.ast_passes.analyses.nodes import loads
from numbax.ast_passes.analyses.usage import count_names
from numbax.ast_passes.naming import Namer
from numbax.ast_passes.optimizations.fusion import buffers, direct_rows, shared_scalars
from numbax.ast_passes.optimizations.fusion import group as groups
from numbax.ast_passes.optimizations.fusion.effects import Aliases
from numbax.ast_passes.optimizations.fusion.loops import bounds, emit, worth_fusing
from numbax.ast_passes.optimizations.fusion.recompute import Recomputable, drop_unread
from numbax.primitives import symbolic


def _varying(fdef: gast.FunctionDef, varying: Set[str]) -> Set[str]:
    """The names whose values read one of ``varying``, directly or not (every assignment and loop at any
    depth, to a fixpoint; a store through a subscript changes its array)."""
    out = set(varying)
    stmts = [n for n in gast.walk(fdef) if isinstance(n, (gast.Assign, gast.AugAssign, gast.For))]
    while True:
        before = len(out)
        for stmt in stmts:
            read = stmt.iter if isinstance(stmt, gast.For) else stmt.value
            targets = [stmt.target] if isinstance(stmt, (gast.AugAssign, gast.For)) else stmt.targets
            if loads(read) & out or any(loads(t) & out for t in targets if isinstance(t, gast.Subscript)):
                out |= {n.id for t in targets for n in gast.walk(t) if isinstance(n, gast.Name)}
        if len(out) == before:
            return out


class Facts:
    """What the pass knows of the whole function: abstract values, symbolic shapes, aliases, name counts, and
    (``varying``) the names that change from call to call where only their statements are to be fused."""

    def __init__(self, fdef: gast.FunctionDef, param_avals: Dict[str, tuple], same: Dict[str, str],
                 varying: Optional[Set[str]] = None):
        params = {a.id for a in fdef.args.args}
        self.avals = avals_analysis.infer(fdef, {p: a for p, a in param_avals.items() if p in params})
        ndims = {p: a[1] for p, a in self.avals.items() if p in params}
        self.shapes = shapes_analysis.infer(fdef, ndims, self.avals, same)
        self.aliases = Aliases(fdef, {n for n, a in self.avals.items() if a[1] == 0})
        stores, _ = count_names(fdef)
        self.fdef = fdef
        self.params = params
        self.unchanged_params = {p for p in params if stores[p] == 1}
        self.namer = Namer(n.id for n in gast.walk(fdef) if isinstance(n, gast.Name))
        self.written_out: List[Tuple[str, gast.stmt, gast.stmt]] = []  # (array, allocation, store)
        self.varying = None if varying is None else _varying(fdef, varying)

    def total_loads(self, name: str) -> int:
        """How many times the function, as it stands now, reads ``name``."""
        return count_names(self.fdef)[1][name]

    def aval(self, node: gast.expr):
        """The (kind, ndim) of an expression, or None."""
        return avals_analysis.expr_aval(node, self.avals)

    def shape(self, node: gast.expr):
        """The symbolic shape of an expression, or None."""
        shape = shapes_analysis.expr_shape(node, self.shapes, self.avals)
        if shape is None and (self.aval(node) or ("", -1))[1] == 0:
            return ()
        return shape


@dataclasses.dataclass
class Block:
    """A list of statements and the part of it a group took."""

    stmts: List[gast.stmt]
    start: int
    end: int


def _block(stmts: List[gast.stmt], facts: Facts, changed: List[bool], in_loop: bool) -> List[gast.stmt]:
    for stmt in stmts:
        inner = in_loop or isinstance(stmt, (gast.For, gast.While))
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list) and getattr(stmt, field):
                setattr(stmt, field, _block(getattr(stmt, field), facts, changed, inner))
    out: List[gast.stmt] = []
    views: Dict[str, gast.Subscript] = {}
    again = Recomputable(facts.aliases)
    i = 0
    while i < len(stmts):
        group = groups.Group(facts, views, again.elements)
        names_before = set(facts.namer.used)
        end = i
        if group.try_fuse(stmts[i]):
            end = i + 1
            while end < len(stmts) and (group.try_fuse(stmts[end]) or group.try_move(stmts[end])):
                end += 1
        extents = bounds(group) if worth_fusing(group, Block(stmts, i, end), in_loop) \
            else None
        if extents is None:  # nothing fused: the names it took are free again
            facts.namer.used = names_before
            end = i + 1
            out.append(stmts[i])
            again.after([stmts[i]])
        else:
            out += emit(group, extents, Block(stmts, i, end), in_loop)
            again.after(group.taken)
            again.record(group)
            again.after([stmt for stmt, _ in group.deferred])
            changed[0] = True
        for stmt in stmts[i:end]:
            groups.update_views(views, stmt)
        i = end
    return out


def transform(fdef: gast.FunctionDef, param_avals: Dict[str, tuple], same: Dict[str, str] = None,
              varying: Optional[Set[str]] = None) -> Tuple[gast.FunctionDef, bool]:
    """Fuse ``fdef``'s elementwise runs; ``param_avals`` gives each parameter's (kind, ndim), ``same`` the dims
    of parameters that the function checks are equal before it runs (``shapes.assumed_equal``). With
    ``varying`` (parameters), only statements that read a value computed from them are fused: the function
    is inlined into a loop over values of those parameters alone (``jacfwd``'s tangents), whose invariant
    array statements ``hoist_invariants`` then takes out of the loop, where a fused loop would stay."""
    changed = [False]
    with symbolic.joining():  # ``-y * z`` of unrelated lengths fused, each read as NumPy broadcasts it
        facts = Facts(fdef, param_avals, same or {}, varying)
        fdef.body = _block(fdef.body, facts, changed, False)
        drop_unread(fdef, facts.written_out)
        changed[0] |= direct_rows.write_rows(fdef, facts.unchanged_params)
        changed[0] |= buffers.reuse(fdef, facts)
        changed[0] |= shared_scalars.share(fdef, facts)
    gast.fix_missing_locations(fdef)
    return fdef, changed[0]
