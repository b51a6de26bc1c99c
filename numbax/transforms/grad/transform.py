"""Reverse mode for one function: forward sweep with saves, then the backward sweep, in one function.

Expects the main function in A-normal form, the names of the parameters to
differentiate, and how outputs are seeded. Produces a function with the same
parameters (plus one cotangent per output for ``vjp``) that returns the
primal outputs followed by one adjoint per differentiated parameter, or, for
``grad`` and ``value_and_grad`` of a scalar function (``GradSpec.direct``),
exactly the leaves the user receives: the adjoints, after the value with
``value``, so that Numba's dispatcher can hand its result straight back::

    def grad_f(x, w):                       # for f(x, w) = np.sum(np.tanh(x @ w))
        _t1 = x @ w
        _t2 = np.tanh(_t1)
        _t3 = np.sum(_t2)
        _dt3 = rt.ones_like(_t3)
        # grad of: return np.sum(np.tanh(x @ w))
        _dt2 = rt.unreduce(_dt3, _t2, None, False)
        ...
        return (_t3, dw)                    # direct: ``return dw`` (``grad``)
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Sequence, Set

import gast

from numbax.ast_passes.analyses import aliasing
from numbax.ast_passes.analyses.assigned import definitely_assigned
from numbax.ast_passes.analyses.activity import active_names
from numbax.ast_passes.analyses.avals import infer as infer_avals
from numbax.ast_passes.analyses.nodes import assign as _assign
from numbax.ast_passes.analyses.nodes import name as _name
from numbax.ast_passes.analyses.nodes import rt_call as _rt
from numbax.ast_passes.analyses.shapes import assumed_equal, guard
from numbax.ast_passes.analyses.shapes import infer as infer_shapes
from numbax.ast_passes.naming import Namer
from numbax.ast_passes.optimizations import copy_propagation, dead_code, hoist_invariants
from numbax.transforms.grad import alias_checks, canonicalize, complex_checks, contraction_checks, proven_checks
from numbax.transforms.grad.adjoint import Adjoint
from numbax.transforms.grad.differentiable import is_differentiable
from numbax.transforms.grad.raising import may_raise
from numbax.transforms.grad.recompute import readonly_names
from numbax.transforms.grad.saves import Saves, row_widths


@dataclasses.dataclass
class GradSpec:
    """What to differentiate: parameter names, which outputs are seeded, and how."""

    wrt: Sequence[str]
    seeded_outputs: Sequence[int]  # indices into the returned leaves
    cotangents: Optional[Sequence[str]] = None  # vjp: one parameter per seeded output; grad: ones
    param_avals: Optional[Dict[str, tuple]] = None  # parameter -> (kind, ndim)
    direct: bool = False  # return the user's result: the adjoints (after the value with ``value``)
    value: bool = False
    float64: bool = False  # every float input is float64: arrays saved in loops may go in float64 row tables
    rows: bool = True  # row tables may be made (not in one GPU thread's code, whose lowering has none)
    narrow: bool = False  # a float input narrower than float64: cotangents come in widened, gradients go out cast
    higher_order: bool = False  # the result is to be differentiated again (``nested``): no writes through views
    assume_shapes: bool = False  # take parameters' dims that the code combines as equal, checked at the entry
    same: Dict[str, str] = dataclasses.field(default_factory=dict)  # out: the dims taken as equal


def _all_names(fdef: gast.FunctionDef) -> Set[str]:
    return {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)}


def _assignment_sites(fdef: gast.FunctionDef):
    """Where names are assigned and where statements sit.

    Returns (name -> number of assignments, names assigned inside loops,
    statement id -> loop depth, statement id -> (innermost loop id, index of
    the loop-body statement containing it), name -> (loop id, index, key) for
    the names assigned once, at the top level of a loop body or as its target).
    """
    counts: Dict[str, int] = {a.id: 1 for a in fdef.args.args}
    in_loop: Set[str] = set()
    depth: Dict[int, int] = {}
    position: Dict[int, tuple] = {}
    defs: Dict[str, tuple] = {}
    blocks: Dict[int, tuple] = {}

    def visit(stmts: List[gast.stmt], level: int, where=None) -> None:
        for index, stmt in enumerate(stmts):
            depth[id(stmt)] = level
            blocks[id(stmt)] = (stmts, index)
            here = where if where is None or where[1] is not None else (where[0], index)
            position[id(stmt)] = here
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) and where is not None \
                    and where[1] is None:
                defs.setdefault(stmt.targets[0].id, (where[0], index, id(stmt)))
            targets = []
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                targets = [stmt.targets[0].id]
            elif isinstance(stmt, gast.For):
                targets = [stmt.target.id]
            for t in targets:
                counts[t] = counts.get(t, 0) + 1
                if level or isinstance(stmt, gast.For):
                    in_loop.add(t)
            if isinstance(stmt, gast.For):
                defs.setdefault(stmt.target.id, (id(stmt), -1, ("body", id(stmt))))
            if isinstance(stmt, gast.If):
                visit(stmt.body, level, here)
                visit(stmt.orelse, level, here)
            elif isinstance(stmt, (gast.For, gast.While)):
                visit(stmt.body, level + 1, (id(stmt), None))

    visit(fdef.body, 0)
    once = {n: d for n, d in defs.items() if counts.get(n) == 1}
    return counts, in_loop, depth, position, once, blocks


def _innermost_loops(fdef: gast.FunctionDef, position: Dict[int, tuple]) -> Dict[object, gast.stmt]:
    """Statement id (and ``("body", id(loop))``) -> the innermost loop around it."""
    loops = {id(n): n for n in gast.walk(fdef) if isinstance(n, (gast.For, gast.While))}
    out: Dict[object, gast.stmt] = {}
    for key, where in position.items():
        if where is not None and where[0] in loops:
            out[key] = loops[where[0]]
    for loop_id, loop in loops.items():
        out[("body", loop_id)] = loop
    return out


class _Forward:
    """The forward sweep: the primal statements with the saves and trip counters the backward reads."""

    def __init__(self, saves: Saves, counters: Dict[int, str]):
        self.saves = saves
        self.counters = counters

    def block(self, stmts: List[gast.stmt]) -> List[gast.stmt]:
        out: List[gast.stmt] = []
        for stmt in stmts:
            out += self.saves.before.get(id(stmt), [])
            out += self.statement(stmt)
            out += self.saves.after.get(id(stmt), [])
        return out

    def statement(self, stmt: gast.stmt) -> List[gast.stmt]:
        if isinstance(stmt, gast.If):
            stmt.body = self.block(stmt.body) or [gast.Pass()]
            stmt.orelse = self.block(stmt.orelse)
            return [stmt]
        if isinstance(stmt, (gast.For, gast.While)):
            body = self.saves.begin_iteration(stmt) + self.saves.after.get(("body", id(stmt)), []) + \
                self.block(stmt.body)
            counter = self.counters.get(id(stmt))
            pre = self.saves.enter(stmt)
            if counter:
                pre.append(_assign(counter, gast.Constant(value=0, kind=None)))
                body.append(_assign(counter, gast.BinOp(left=_name(counter), op=gast.Add(),
                                                         right=gast.Constant(value=1, kind=None))))
            stmt.body = body + self.saves.end_iteration(stmt)
            return pre + [stmt]
        return [stmt]


def prepare(fdef: gast.FunctionDef) -> gast.FunctionDef:
    """Copies propagated, loop invariants hoisted, dead code gone: less for the tape to keep (and for
    forward mode to follow)."""
    for _ in range(10):
        changed = False
        for opt in (copy_propagation, hoist_invariants, dead_code):
            fdef, did = opt.transform(fdef)
            changed |= did
        if not changed:
            break
    return fdef


_OUTPUT_HINTS = {"c": " numbax does not implement holomorphic differentiation; for differentiating functions "
                      "involving complex outputs, use numbax.vjp directly.",
                 "i": " For differentiation of functions with integer outputs, use numbax.vjp directly.",
                 "b": " For differentiation of functions with integer outputs, use numbax.vjp directly."}
_KIND_NAMES = {"c": "complex128", "i": "int64", "b": "bool"}


def _known_array(aval) -> bool:
    """Whether an abstract value is known to be an array (of one dimension at least)."""
    return aval is not None and isinstance(aval[1], int) and aval[1] > 0


def _check_real_output(out: gast.expr, avals, body: List[gast.stmt], ret: gast.Return,
                       seeds: List[gast.stmt]) -> None:
    """``grad``'s output must be a real float, as JAX requires (JAX's TypeError, at the line computing it).

    Where its dtype kind was not inferred, the generated code checks it (``rt.real_output``, appended to
    ``seeds``) before anything reads the output: fail closed."""
    from numbax.ast_passes import anno
    from numbax.errors import NumbaxDifferentiationError

    if isinstance(out, gast.Constant):
        kind = {bool: "b", int: "i", complex: "c"}.get(type(out.value))
    else:
        kind = (avals.get(out.id) or (None,))[0] if isinstance(out, gast.Name) else None
    origin = _origin_of(out, body) or anno.getanno(ret, anno.Key.ORIGIN)
    if kind in _OUTPUT_HINTS:
        raise NumbaxDifferentiationError(
            f"grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got "
            f"{_KIND_NAMES[kind]}.{_OUTPUT_HINTS[kind]}", origin)
    if kind is None and isinstance(out, gast.Name):
        where = origin.position() if origin is not None else "grad's output"
        seeds.append(gast.Expr(value=_rt("real_output", out, gast.Constant(value=where, kind=None))))


def _origin_of(out: gast.expr, body: List[gast.stmt]):
    """The user's line of the last top-level statement assigning ``out``."""
    from numbax.ast_passes import anno

    for stmt in reversed(body):
        if isinstance(out, gast.Name) and isinstance(stmt, gast.Assign) and \
                any(isinstance(t, gast.Name) and t.id == out.id for t in stmt.targets):
            return anno.getanno(stmt, anno.Key.ORIGIN)
    return None


def transform(fdef: gast.FunctionDef, spec: GradSpec, namer: Optional[Namer] = None) -> gast.FunctionDef:
    """The reverse-mode function of ``fdef``; see the module docstring."""
    namer = namer or Namer()
    namer.reserve(_all_names(fdef) | set(spec.cotangents or ()) | {"rt", "np", "math"})
    fdef = prepare(fdef)
    fdef = canonicalize.transform(fdef, namer, spec.wrt)
    avals = infer_avals(fdef, dict(spec.param_avals or {}))
    fdef = contraction_checks.transform(fdef, avals)
    params = {a.id for a in fdef.args.args}
    ndims = {p: a[1] for p, a in (spec.param_avals or {}).items() if p in params}
    if spec.assume_shapes:
        counts = _assignment_sites(fdef)[0]
        spec.same = assumed_equal(fdef, ndims, avals, {p for p in params if counts.get(p) == 1})
    shapes = infer_shapes(fdef, ndims, avals, spec.same)
    fdef = proven_checks.transform(fdef, shapes)  # before the sites below, which index the blocks
    ret = fdef.body[-1]
    body = fdef.body[:-1]
    outputs = list(ret.value.elts) if isinstance(ret.value, gast.Tuple) else [ret.value]
    active = active_names(fdef, spec.wrt, is_differentiable)
    alias_checks.check(fdef, active, avals)
    counts, in_loop, depth, position, once, blocks = _assignment_sites(fdef)
    single = {n for n, c in counts.items() if c == 1 and n not in in_loop}
    saves = Saves(namer, single, avals, params)
    saves.higher_order = spec.higher_order
    saves.loop_of = _innermost_loops(fdef, position)
    saves.outermost = {id(n) for n in gast.walk(fdef) if isinstance(n, (gast.For, gast.While)) and not depth.get(id(n))}
    constants = complex_checks.constants_of_complex(fdef, active, lambda n: (avals.get(n) or (None,))[0])
    for key, checks in constants.items():
        saves.after.setdefault(key, []).extend(checks)
    adjoint = Adjoint(namer, active, saves, depth, position, once, blocks, avals)
    adjoint.readonly = readonly_names(fdef, single)
    adjoint.higher_order = spec.higher_order
    adjoint.params = params
    adjoint.shapes = shapes
    adjoint.assigned = definitely_assigned(fdef)
    if spec.float64 and spec.rows:  # the row tables are float64
        top = {t.id for stmt in body if isinstance(stmt, gast.Assign) for t in stmt.targets if isinstance(t, gast.Name)}
        saves.row_widths = row_widths(adjoint.shapes, avals, set(ndims) | (single & top), aliasing.unwritten(fdef))
    entry = gast.Pass()
    depth[id(entry)] = 0
    blocks[id(entry)] = ([entry], 0)
    depth[id(ret)] = 0

    adjoint.check_rules(body)
    seeds: List[gast.stmt] = []
    for position, index in enumerate(spec.seeded_outputs):
        out = outputs[index]
        if not spec.cotangents:
            _check_real_output(out, avals, body, ret, seeds)
        unchecked = spec.direct and isinstance(out, gast.Name) and (avals.get(out.id) or (None, -1))[1] != 0
        # grad returns no value: it still evaluates the output where computing it may raise, so that it raises
        # (through the seed where the output is active: a second reverse mode reads no statement for effect)
        evaluated = spec.direct and not spec.value and isinstance(out, gast.Name) and \
            may_raise(body, adjoint.shapes, avals)
        if not spec.cotangents and not spec.higher_order and isinstance(out, gast.Name) and \
                _known_array(avals.get(out.id)):
            # always raises JAX's TypeError, where the output is computed in full (no backend fuses it away; a
            # gradient to be differentiated again checks in its seed, which has a rule)
            seeds.append(gast.Expr(value=_rt("scalar_output", out)))
            if out.id in active:
                seeds.append(adjoint.accumulate(out.id, _rt("ones_like", out), ret))
            continue
        if not (isinstance(out, gast.Name) and out.id in active):
            if unchecked or evaluated:  # a constant output still has to be a scalar
                seeds.append(gast.Expr(value=_rt("scalar_output", out)))
            continue
        if spec.cotangents:
            seed = _name(spec.cotangents[position])
            seed = _rt("widen", seed) if spec.narrow else seed
        elif avals.get(out.id) == ("f", 0) and not evaluated:
            seed = gast.Constant(value=1.0, kind=None)
        elif unchecked or evaluated:
            seed = _rt("ones_like", _rt("scalar_output", out))  # no value is returned for Python to check
        else:
            seed = _rt("ones_like", out)
        seeds.append(adjoint.accumulate(out.id, seed, ret))
    backward = adjoint.block(body)
    results: List[gast.expr] = []
    for param in spec.wrt:
        if param in adjoint.state:
            result = _name(adjoint.adj(param))
        else:
            result = adjoint.zero(param, adjoint.need(param, entry))
        if spec.narrow:  # computed in float64 (``rt.cotangent_dtype``), returned in the parameter's dtype
            result = _rt("primal_dtype", result, adjoint.need(param, entry))
        results.append(result)
    forward = _Forward(saves, adjoint.counters).block(body)
    results = results if spec.direct and not spec.value else outputs + results
    returned = results[0] if len(results) == 1 else gast.Tuple(elts=results, ctx=gast.Load())
    fdef.body = saves.drop_unread(saves.initial() + saves.before.get(id(entry), []) + forward + seeds + backward +
                                  [gast.Return(value=returned)])
    fdef.body = guard(spec.same) + fdef.body  # where one fails, numbax runs code generated without them
    gast.fix_missing_locations(fdef)
    if spec.cotangents:
        fdef.args.args = fdef.args.args + [_name(c, False) for c in spec.cotangents]
        for arg in fdef.args.args:
            arg.ctx = gast.Param()
    return fdef
