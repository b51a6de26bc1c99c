"""Forward mode for one function: each statement followed by its tangent, in one function.

Expects the main function in A-normal form and the names of the parameters whose tangents are given.
Produces a function with the same parameters plus one tangent per differentiated parameter (``dx`` for
``x``), returning the primal outputs followed by one tangent per output::

    def jvp_f(x, w, dx, dw):                # for f(x, w) = np.sum(np.tanh(x @ w))
        _t1 = x @ w
        # tangent of: return np.sum(np.tanh(x @ w))
        dt1 = dx @ w + x @ dw
        _t2 = np.tanh(_t1)
        dt2 = dt1 * (1.0 - _t2 * _t2)
        ...
        return (_t3, dt3)

Control flow stays control flow (the tangent of a loop is computed inside it, with no tape), and
``x[i] = v`` writes ``dx[i] = dv``. A statement gets its tangent from its primitive's forward rule in the
registry (``numbax.primitives``: an explicit template, or an elementwise primitive's reverse-mode template
read with the tangent for the cotangent); a primitive without one, complex values, and what forward mode
cannot follow yet are refused at the user's line.
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Dict, List, Optional, Sequence, Set

import gast

from numbax.ast_passes import anno, entry_checks
from numbax.ast_passes.analyses import primitives
from numbax.ast_passes.analyses.activity import active_names
from numbax.ast_passes.analyses.aliasing import may_alias
from numbax.ast_passes.analyses.avals import expr_aval
from numbax.ast_passes.analyses.avals import infer as infer_avals
from numbax.ast_passes.analyses.nodes import assign as _assign
from numbax.ast_passes.analyses.nodes import base as _base
from numbax.ast_passes.analyses.nodes import loads as _loads
from numbax.ast_passes.analyses.nodes import name as _name
from numbax.ast_passes.analyses.nodes import Substitute
from numbax.ast_passes.analyses.nodes import rt_call as _rt
from numbax.ast_passes.analyses.shapes import expr_shape
from numbax.ast_passes.analyses.shapes import infer as infer_shapes
from numbax.ast_passes.naming import Namer
from numbax.ast_passes.tree_copy import walk
from numbax.ast_passes.unparse import unparse
from numbax.errors import NumbaxDifferentiationError, NumbaxInternalError
from numbax.primitives import symbolic
from numbax.primitives.registry import NONDIFFERENTIABLE, TRANSPOSED, entry, refusal
from numbax.primitives.templates import FoldTests, Rule, bind_arguments, instantiate
from numbax.transforms.grad import alias_checks, canonicalize, complex_checks
from numbax.transforms.grad.differentiable import is_differentiable
from numbax.transforms.grad.transform import prepare

_MODULES = frozenset({"np", "math", "rt"})  # the modules generated code names the functions of


@dataclasses.dataclass
class JvpSpec:
    """What to differentiate: the parameters with tangents, and their abstract values."""

    wrt: Sequence[str]
    param_avals: Dict[str, tuple]
    narrow: Set[str] = dataclasses.field(default_factory=set)  # parameters of floats narrower than float64
    # filled by ``transform``: the parameters' dims that contraction checks at the entry equate (``entry_checks``)
    same: Dict[str, str] = dataclasses.field(default_factory=dict)


def _fail(stmt: gast.AST, message: str, hint: str) -> None:
    raise NumbaxDifferentiationError(message, anno.getanno(stmt, anno.Key.ORIGIN), hint=hint)


class _Linearize(gast.NodeTransformer):
    """A rule's line as forward mode writes it: ``np.conj(e)`` and ``np.real(e)`` of a real ``e`` are ``e`` (a
    rule written for complex operands, ``np.real(g * np.conj(rt.abs_slope(x)))``, reads as the real one on
    real operands), and for an elementwise primitive's reverse-mode line (``TRANSPOSED``) ``rt.unbroadcast(e,
    x)`` is ``e`` (the tangent broadcasts as the operation does). ``real(e)`` tells whether ``e`` is real."""

    def __init__(self, real, transposed: bool):
        self.real = real
        self.transposed = transposed

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and node.args):
            return node
        if self.transposed and (func.value.id, func.attr) == ("rt", "unbroadcast"):
            return node.args[0]
        if (func.value.id, func.attr) in (("np", "conj"), ("np", "real")) and len(node.args) == 1 and \
                self.real(node.args[0]):
            return node.args[0]
        return node


class Tangents:
    """The tangent statements of a canonical function, statement by statement."""

    def __init__(self, namer: Namer, active: Set[str], avals: Dict[str, tuple], shapes: Dict[str, tuple],
                 written: Set[str]):
        self.namer = namer
        self.active = active
        self.written = written  # arrays written through subscripts: their tangents must own their memory
        self.avals = avals
        self.shapes = shapes
        self.names: Dict[str, str] = {}
        self.primals: Dict[str, str] = {}  # tangent -> its primal
        self.pending: List[gast.stmt] = []  # a rule's temporaries, written before the tangent that reads them
        self.checks_after: Dict[int, List[gast.stmt]] = {}  # complex_checks.constants_of_complex's, by statement

    def tangent(self, name: str) -> str:
        """The name of ``name``'s tangent (``dx`` for ``x``)."""
        if name not in self.names:
            self.names[name] = self.namer.new("d" + name.lstrip("_"))
            self.primals[self.names[name]] = name
        return self.names[name]

    def kind(self, name: str) -> Optional[str]:
        """The kind (``"f"``, ``"c"``, ...) of a primal or a tangent (its primal's), None where unknown."""
        primal = self.primals.get(name, name)
        return (self.avals.get(primal) or (None,))[0]

    def is_real(self, expr: gast.expr) -> bool:
        """Whether ``expr`` is known to be real: not complex, and every name's kind known."""
        return not self.is_complex(expr) and all(self.kind(n) is not None for n in _loads(expr) - {"np", "rt", "math"})

    def is_complex(self, expr: gast.expr) -> bool:
        """Whether ``expr`` holds a complex constant or a name known to be complex."""
        return any(isinstance(n, gast.Constant) and isinstance(n.value, complex) for n in gast.walk(expr)) or \
            any(self.kind(n) == "c" for n in _loads(expr))

    def zero(self, name: str) -> gast.expr:
        """A zero tangent for ``name`` (after its primal value is computed)."""
        if self.avals.get(name) == ("f", 0):
            return gast.Constant(value=0.0, kind=None)
        return _rt("zeros_like", _name(name))

    @staticmethod
    def _mark(stmt: gast.stmt, origin: gast.stmt) -> gast.stmt:
        return anno.derived(stmt, origin, anno.Key.TANGENT_OF)

    def block(self, stmts: List[gast.stmt]) -> List[gast.stmt]:
        """``stmts``, each followed by its tangent statements."""
        out: List[gast.stmt] = []
        for stmt in stmts:
            out += self.statement(stmt)
            out += self.checks_after.get(id(stmt), [])
        return out

    def statement(self, stmt: gast.stmt) -> List[gast.stmt]:
        """One statement and its tangent (a branch or loop with the tangents inside), or a refusal."""
        if isinstance(stmt, gast.If):
            stmt.body = self.block(stmt.body) or [gast.Pass()]
            stmt.orelse = self.block(stmt.orelse)
            return [stmt]
        if isinstance(stmt, (gast.For, gast.While)):
            stmt.body = self.block(stmt.body) or [gast.Pass()]
            return [stmt]
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            return self.assignment(stmt)
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
            return self.store(stmt)
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript):
            return self.update(stmt)
        if isinstance(stmt, (gast.Expr, gast.Pass)) or not (_loads(stmt) & self.active):
            return [stmt]
        _fail(stmt, "forward mode has no rule for this statement with a differentiated value",
              "assign the value to a name, or write it into an array by indexing.")

    # ---- assignments
    def assignment(self, stmt: gast.Assign) -> List[gast.stmt]:
        """``y = value`` and ``dy = ...`` (a zero where ``value`` carries no derivative)."""
        target = stmt.targets[0].id
        if target not in self.active:
            return [stmt]
        value = stmt.value
        if target not in _loads(value):
            tangent = self.owned(target, value, self.value_tangent(stmt, target, value, target))
            return [stmt] + self._temporaries(stmt) + [self._mark(_assign(
                self.tangent(target), tangent if tangent is not None else self.zero(target)), stmt)]
        # ``x = x * x``: the new value goes to a temporary first, since its tangent reads the old x
        fresh = self.namer.new(target)
        moved = _assign(fresh, value)
        gast.copy_location(moved, stmt)
        anno.copyanno(stmt, moved)
        tangent = self.owned(target, value, self.value_tangent(stmt, target, value, fresh))
        return [moved] + self._temporaries(stmt) + [
            self._mark(_assign(self.tangent(target), tangent if tangent is not None else self.zero(fresh)), stmt),
            self._mark(_assign(target, _name(fresh)), stmt)]

    def _temporaries(self, stmt: gast.stmt) -> List[gast.stmt]:
        out, self.pending = [self._mark(t, stmt) for t in self.pending], []
        return out

    def owned(self, target: str, value: gast.expr, tangent: Optional[gast.expr]) -> Optional[gast.expr]:
        """``tangent``, copied where it may share another tangent's memory and either ``target`` is written
        into, or ``value`` is a new array and the function writes into some array: a tangent shares memory
        exactly where its value does (``y = x.copy()`` has the tangent ``dx``, which neither ``y[0] = v`` nor,
        after it, ``x[0] = v`` may write into as ``y``'s)."""
        if tangent is None or isinstance(tangent, (gast.BinOp, gast.UnaryOp)) or not may_alias(tangent):
            return tangent
        if target not in self.written and (may_alias(value) or not self.written):
            return tangent
        if target not in self.written:  # a new value; a number shares no memory (rt.copy_of passes one as it is)
            return tangent if (self.avals.get(target) or ("", 1))[1] == 0 else _rt("copy_of", tangent)
        return gast.Call(func=gast.Attribute(value=_name("np"), attr="copy", ctx=gast.Load()), args=[tangent],
                         keywords=[])

    def value_tangent(self, stmt: gast.Assign, target: str, value: gast.expr, ans: str) -> Optional[gast.expr]:
        """The tangent of ``value`` assigned to ``target`` (computed into ``ans``), or None where it is zero."""
        if isinstance(value, gast.Name):
            return _name(self.tangent(value.id)) if value.id in self.active else None
        if isinstance(value, gast.Constant) or not (_loads(value) & self.active):
            return None
        if isinstance(value, gast.Subscript):
            if not isinstance(value.value, gast.Name):
                _fail(stmt, "forward mode reads a subscript only of a variable", "assign the array to a name first.")
            if value.value.id not in self.active:
                return None
            return gast.Subscript(value=_name(self.tangent(value.value.id)), slice=copy.deepcopy(value.slice),
                                  ctx=gast.Load())
        if not is_differentiable(value):
            return None
        return self.rule(stmt, target, value, ans)

    def rule(self, stmt: gast.Assign, target: str, value: gast.expr, ans: str) -> Optional[gast.expr]:
        """The tangent of a primitive's application from its forward rule: the sum of each differentiated
        operand's part, broadcast to the result where its shape is not known to be the result's."""
        app = primitives.application(value)
        primitive = entry(app.key) if app is not None else None
        what = app.name if app is not None else "this expression"
        if primitive is None or primitive.vjp is NONDIFFERENTIABLE or primitive.jvp is None:
            if primitive is not None and primitive.vjp is NONDIFFERENTIABLE:
                return None
            _fail(stmt, f"forward mode has no derivative rule for {what}",
                  "numbax.coverage() lists the functions each mode has rules for; compute this value outside "
                  "the differentiated function, or use numbax.grad or numbax.vjp (reverse mode).")
        refused = refusal(app.key, app, [self.avals.get(a.id) if isinstance(a, gast.Name) else None
                                         for a in app.args])
        if refused is not None:
            _fail(stmt, f"forward mode has no derivative of {what} {refused}",
                  "compute this value outside the differentiated function, or use the arguments "
                  "numbax.coverage() lists rules for.")
        rule = _forward_rule(primitive)
        template = rule.template
        try:
            bound = bind_arguments(template, app.args, app.keywords)
        except TypeError as exc:
            _fail(stmt, f"cannot differentiate this call of {what}: {exc}", "call it with NumPy's own argument names.")
        wanted = [p for p in template.params if _loads(bound[p]) & self.active]
        tangents = {}
        for p in wanted:
            tangents[p] = self.operand_tangent(bound[p])
            if tangents[p] is None:
                _fail(stmt, f"forward mode cannot differentiate {what} through this form of its argument `{p}`",
                      "pass a variable.")
            if p not in template.differentiated | template.no_derivative:  # ``d[p] = None``: none, declared
                _fail(stmt, f"numbax's rule for {what} has no derivative in its argument `{p}`, which is "
                            f"differentiated here", f"compute `{p}` outside the differentiated function.")
        if not primitive.complex_verified and (self.kind(ans) == "c" or any(
                self.is_complex(bound[p]) for p in template.params if p in bound)):
            _fail(stmt, f"numbax has no forward derivative of {what} for complex numbers checked against JAX",
                  "differentiate the real and imaginary parts (np.real(z), np.imag(z)) separately, or compute "
                  "this value outside the differentiated function.")
        if not primitive.complex_verified:  # where a kind is unknown, the generated code checks it
            unknown = {n for n in (_loads(value) & self.active) | {ans} if self.kind(n) is None}
            self.pending += complex_checks.real_checks(unknown, what, stmt)
        parts = []
        for p in wanted:
            mapping = dict(bound, g=tangents[p], ans=_name(ans))
            temps, contributions = instantiate(template, {"g": _name("g"), "ans": _name("ans")},
                                               lambda base: self.namer.new(base))
            substitute = Substitute(mapping)
            fold = FoldTests(names_hold_values=True)
            linearize = _Linearize(self.is_real, primitive.jvp is TRANSPOSED).visit
            for temp in temps:
                self.pending.append(_assign(temp.targets[0].id, linearize(fold.visit(substitute.visit(temp.value)))))
            for param, expr in contributions:
                if param == p:
                    parts.append(linearize(fold.visit(substitute.visit(expr))))
        if not parts:
            return None
        if primitive.sequence:  # a tuple or list of tangents, which ``+`` would join
            if len(parts) > 1:
                _fail(stmt, f"forward mode cannot add the tangents of {what}'s differentiated arguments, which "
                            "are sequences", "differentiate one argument at a time.")
            return parts[0]
        total = parts[0]
        for part in parts[1:]:
            total = gast.BinOp(left=total, op=gast.Add(), right=part)
        if isinstance(total, (gast.List, gast.Tuple)):  # ``np.asarray([a, b])``: its tangent an array too
            total = gast.Call(func=gast.Attribute(value=_name("np"), attr="asarray", ctx=gast.Load()), args=[total],
                              keywords=[])
        if not self._has_shape_of(total, target) and not self._reads_every_operand(total, app, primitive, ans):
            total = gast.BinOp(left=total, op=gast.Add(), right=_rt("zeros_like", _name(ans)))  # a scalar's tangent
        return total

    def _reads_every_operand(self, total: gast.expr, app, primitive, ans: str) -> bool:
        """Whether ``total``, the tangent of an elementwise application ``app``, has its result's shape whatever
        the operands' shapes: it is computed elementwise from names each of which is an operand, an operand's
        tangent (of its shape), the result or a number, and it reads every operand or its tangent, so its shape
        is the operands' broadcast, the result's (``dz + dy`` of ``z + y`` in a loop, where shapes are unknown)."""
        if primitive.shape is not symbolic.elementwise or app.keywords or \
                not all(isinstance(a, (gast.Name, gast.Constant)) for a in app.args):
            return False
        operands = {a.id for a in app.args if isinstance(a, gast.Name)}
        tangents = {self.tangent(o): o for o in operands if o in self.active}
        read: Set[str] = set()
        for node in walk(total):
            if isinstance(node, gast.Call):
                applied = primitives.application(node)
                called = entry(applied.key) if applied is not None else None
                if called is None or called.shape is not symbolic.elementwise or applied.keywords:
                    return False
            elif isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult):
                return False
            elif isinstance(node, gast.Attribute) and not (isinstance(node.value, gast.Name)
                                                           and node.value.id in _MODULES):
                return False  # ``x.T``, ``x.real``: not elementwise
            elif isinstance(node, gast.Name) and node.id not in _MODULES:
                if node.id in operands or node.id == ans:
                    read.add(node.id)
                elif node.id in tangents:
                    read.add(tangents[node.id])
                elif (self.avals.get(node.id) or (None, None))[1] != 0:
                    return False
            elif not isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Constant, gast.Attribute, gast.Name,
                                       gast.operator, gast.unaryop, gast.expr_context)):
                return False
        return ans in read or operands <= read

    def operand_tangent(self, operand: gast.expr) -> Optional[gast.expr]:
        """The tangent of a differentiated operand: a variable's, or, for a tuple or list of variables and
        constants (``np.concatenate((a, b))``, ``np.array([x, -1.5])``), the tuple of theirs (zeros for those
        not differentiated, an item that reads no differentiated variable among them); None for any other
        form."""
        if isinstance(operand, gast.Name):
            return _name(self.tangent(operand.id))
        if isinstance(operand, (gast.Tuple, gast.List)) and all(isinstance(e, gast.Name) or
                                                                 not (_loads(e) & self.active)
                                                                 for e in operand.elts):
            elts = [_name(self.tangent(e.id)) if isinstance(e, gast.Name) and e.id in self.active
                    else _rt("zeros_like", copy.deepcopy(e)) for e in operand.elts]
            return type(operand)(elts=elts, ctx=gast.Load())
        return None

    def _has_shape_of(self, expr: gast.expr, target: str) -> bool:
        """Whether ``expr`` (which reads tangents) is known to have ``target``'s shape, as a tangent must: the
        same symbolic shape, or both numbers (rank 0 has one shape; a loop's numbers have no symbolic one)."""
        if (self.avals.get(target) or (None, None))[1] == 0:
            ranks = dict(self.avals)
            ranks.update({t: self.avals[p] for p, t in self.names.items() if p in self.avals})
            if (expr_aval(expr, ranks) or (None, None))[1] == 0:
                return True
        want = self.shapes.get(target)
        if want is None:
            return False
        env = dict(self.shapes)
        env.update({t: self.shapes[p] for p, t in self.names.items() if p in self.shapes})
        return expr_shape(expr, env, self.avals) == want

    # ---- writes
    def store(self, stmt: gast.Assign) -> List[gast.stmt]:
        """``x[i] = v``: ``dx[i] = dv`` (a zero where ``v`` carries no derivative)."""
        target = stmt.targets[0]
        array = _base(target)
        if array not in self.active:
            return [stmt]
        if not isinstance(target.value, gast.Name):
            _fail(stmt, "forward mode writes only into a subscript of a variable", "index the variable itself.")
        value = stmt.value
        tangent = _name(self.tangent(value.id)) if isinstance(value, gast.Name) and value.id in self.active \
            else gast.Constant(value=0.0, kind=None)
        tangent = self.stored(array, tangent)
        if _loads(value) & self.active and not isinstance(value, gast.Name):
            _fail(stmt, "forward mode stores only a variable into a subscript", "assign the value to a name first.")
        write = gast.Subscript(value=_name(self.tangent(array)), slice=copy.deepcopy(target.slice), ctx=gast.Store())
        return [stmt, self._mark(gast.Assign(targets=[write], value=tangent, type_comment=None), stmt)]

    def stored(self, array: str, tangent: gast.expr) -> gast.expr:
        """``tangent`` as a write into ``array`` passes it: where ``array``'s dtype was not inferred, Numba
        decides (zero into integers); an active array of a known kind is a float one."""
        if array in self.avals:
            return tangent
        return _rt("stored_cotangent", tangent, _name(array))

    def update(self, stmt: gast.AugAssign) -> List[gast.stmt]:
        """``x[i] += v``: ``dx[i] += dv``; ``x[i] *= v`` only where ``v`` carries no derivative."""
        array = _base(stmt.target)
        if array not in self.active:
            return [stmt]
        value = stmt.value
        value_active = bool(_loads(value) & self.active)
        if value_active and not isinstance(value, gast.Name):
            _fail(stmt, "forward mode updates a subscript only by a variable", "assign the value to a name first.")
        write = gast.Subscript(value=_name(self.tangent(array)), slice=copy.deepcopy(stmt.target.slice),
                               ctx=gast.Store())
        if isinstance(stmt.op, (gast.Add, gast.Sub)):
            if not value_active:
                return [stmt]
            tangent = gast.AugAssign(target=write, op=type(stmt.op)(),
                                     value=self.stored(array, _name(self.tangent(value.id))))
            return [stmt, self._mark(tangent, stmt)]
        if isinstance(stmt.op, (gast.Mult, gast.Div)) and not value_active:
            return [stmt, self._mark(gast.AugAssign(target=write, op=type(stmt.op)(), value=copy.deepcopy(value)),
                                     stmt)]
        _fail(stmt, "forward mode has no rule for this in-place update of a differentiated array",
              "write the new value instead: x[i] = x[i] * v.")


def _constant_tangent(tangents, out: gast.expr, active: Set[str]) -> gast.expr:
    """The tangent of an output written as an expression of constants and inactive names (``-0.75``, ``1j``):
    a zero of its kind (of an integer or boolean output the caller gives a float0 tangent instead; a zero, not
    the output itself, stays right where the output's kind was not inferred as it is)."""
    loads = _loads(out) - {"np", "rt", "math"}
    if loads & active:
        raise NumbaxInternalError(f"jvp: the output `{unparse(out)}` reads differentiated values but was "
                                  "not named (expected A-normal form)")
    constants = {type(n.value) for n in gast.walk(out) if isinstance(n, gast.Constant)}
    kinds = {tangents.kind(n) for n in loads}
    if complex in constants or "c" in kinds:
        zero = gast.Constant(value=0j, kind=None)
    elif float in constants or kinds - {"b", "i", "u"}:
        zero = gast.Constant(value=0.0, kind=None)
    else:
        zero = gast.Constant(value=0, kind=None)
    return _rt("zeros_like", copy.deepcopy(out)) if loads else zero


def _written(fdef: gast.FunctionDef) -> Set[str]:
    """The variables that the function writes into through subscripts."""
    out = set()
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Subscript):
            out.add(_base(node.targets[0]))
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Subscript):
            out.add(_base(node.target))
    return out


def _forward_rule(primitive):
    """A primitive's forward-mode template: its own, or for an elementwise one (``TRANSPOSED``) its VJP's."""
    return primitive.vjp if primitive.jvp is TRANSPOSED else primitive.jvp


def _carriers(value: gast.expr) -> Set[str]:
    """The names whose tangents a right-hand side's tangent is made of: all it reads, but for the operands
    its forward rule reads for their shape or dtype only (``d[x] = None``: ``rt.unbroadcast(g, x)``'s ``x``,
    so that the cotangents of a gradient computed from constants carry no tangent)."""
    app = primitives.application(value)
    primitive = entry(app.key) if app is not None else None
    rule = None if primitive is None else _forward_rule(primitive)
    if not isinstance(rule, Rule) or not rule.template.no_derivative:
        return _loads(value)
    try:
        bound = bind_arguments(rule.template, app.args, app.keywords)
    except TypeError:  # refused at the rule, with the reason
        return _loads(value)
    return set().union(*(_loads(node) for p, node in bound.items() if p not in rule.template.no_derivative))


def transform(fdef: gast.FunctionDef, spec: JvpSpec, namer: Optional[Namer] = None) -> gast.FunctionDef:
    """The forward-mode function of ``fdef``; see the module docstring."""
    namer = namer or Namer()
    namer.reserve({n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)} | {"rt", "np", "math"})
    fdef = prepare(fdef)
    fdef = canonicalize.transform(fdef, namer, spec.wrt)
    avals = infer_avals(fdef, dict(spec.param_avals))
    params = {a.id for a in fdef.args.args}
    spec.same = entry_checks.hoist(fdef)
    shapes = infer_shapes(fdef, {p: a[1] for p, a in spec.param_avals.items() if p in params}, avals, spec.same)
    active = active_names(fdef, spec.wrt, is_differentiable, _carriers)
    alias_checks.check(fdef, active, avals)
    # integers and booleans carry no tangent (JAX's float0): ``n = min(len(x), len(y))``, a float stored into
    # an integer array
    active = {n for n in active if (avals.get(n) or ("f",))[0] not in "bi"}
    tangents = Tangents(namer, active, avals, shapes, _written(fdef))
    tangents.checks_after = complex_checks.constants_of_complex(fdef, active, tangents.kind, "forward derivative")
    for p in spec.wrt:
        tangents.tangent(p)
    ret = fdef.body[-1]
    outputs = list(ret.value.elts) if isinstance(ret.value, gast.Tuple) else [ret.value]
    # tangents are computed in float64 (as reverse mode's cotangents): Numba widens a float32 array that meets
    # a Python float, and a loop's variable has one type; the outputs' tangents go back to their dtypes
    entry = [_assign(tangents.tangent(p), _rt("widen", _name(tangents.tangent(p))))
             for p in spec.wrt if p in spec.narrow]
    entry += [_assign(tangents.tangent(p), gast.Call(func=gast.Attribute(
        value=_name(tangents.tangent(p)), attr="copy", ctx=gast.Load()), args=[], keywords=[]))
        for p in spec.wrt if p in _written(fdef)]  # the caller's tangent is not written into
    # a parameter held constant that a differentiated value is later assigned to (``z = z * theta`` where a loop
    # keeps the one name ``z``) starts with a zero tangent
    entry += [_assign(tangents.tangent(a.id), tangents.zero(a.id))
              for a in fdef.args.args if a.id in active and a.id not in spec.wrt]
    body = entry + tangents.block(fdef.body[:-1])
    results = []
    for out in outputs:
        if isinstance(out, gast.Name) and out.id in active:
            results.append(_name(tangents.tangent(out.id)))
        elif isinstance(out, gast.Name):  # a zero whatever its kind: an integer's is float0 (``_constant_tangent``)
            results.append(tangents.zero(out.id))
        else:
            results.append(_constant_tangent(tangents, out, active))
    returned = gast.Tuple(elts=[copy.deepcopy(o) for o in outputs] + results, ctx=gast.Load())
    fdef.body = body + [gast.copy_location(gast.Return(value=returned), ret)]
    fdef.args.args = fdef.args.args + [_name(tangents.tangent(p), True) for p in spec.wrt]
    for arg in fdef.args.args:
        arg.ctx = gast.Param()
    gast.fix_missing_locations(fdef)
    return fdef
