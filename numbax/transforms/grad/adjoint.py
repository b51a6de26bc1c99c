"""adjoint: the backward sweep of a function in the canonical subset, statement by statement.

Walks the statements in reverse. For ``x = f(a, b)`` it takes the adjoint
``dx`` and adds each rule's contribution to ``da`` and ``db``; ``if`` becomes
an ``if`` on the saved test; a loop becomes ``for step in range(n)`` over the
saved trip count, its body reversed. Adjoints are tracked statically as zero
or live: a zero adjoint is never materialized until control flow joins need a
value of the right type (``rt.zeros_like``), and a rule whose output adjoint
is zero is skipped altogether. Adjoint arrays that are updated in place
(``dx[i] += g``) are owned: never shared with another adjoint.
"""
from __future__ import annotations

import copy
from typing import Dict, List, Optional, Set, Tuple

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses import primitives, shapes
from numbax.ast_passes.analyses.nodes import assign as _assign
from numbax.ast_passes.analyses.nodes import base as _base
from numbax.ast_passes.analyses.nodes import loads as _loads
from numbax.ast_passes.analyses.nodes import module_call
from numbax.ast_passes.analyses.nodes import Substitute
from numbax.ast_passes.analyses.nodes import name as _name
from numbax.ast_passes.analyses.nodes import rt_call as _rt
from numbax.ast_passes.naming import Namer
from numbax.errors import NumbaxDifferentiationError
from numbax.transforms.grad import complex_checks, differentiable, recompute
from numbax.primitives.registry import NONDIFFERENTIABLE, entry, refusal, vjp_rule
from numbax.primitives.templates import FoldTests, bind_arguments, instantiate, undifferentiated
from numbax.transforms.grad.saves import Saves, popped_name

_ALIASING = {"unbroadcast", "unreduce", "reshape_like", "transpose", "swapaxes", "broadcast_to", "real",
             "match_kind"}
_REAL_KINDS = frozenset("bif")

State = Dict[str, bool]  # live adjoints: name -> owned


def _fresh(expr: gast.expr) -> bool:
    """Whether ``expr`` certainly evaluates to a new array that nothing else references."""
    if isinstance(expr, (gast.BinOp, gast.UnaryOp)):
        return True
    if isinstance(expr, gast.Call):
        func = expr.func
        name = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", "")
        if name in _ALIASING:
            return bool(expr.args) and _fresh(expr.args[0])
        return True
    return False



def _slices_as_values(index: gast.expr) -> gast.expr:
    """``index`` as an argument can pass it: each slice of a tuple written ``slice(start, stop, step)``."""
    if not isinstance(index, gast.Tuple):
        return index
    none = gast.Constant(value=None, kind=None)
    return gast.Tuple(elts=[gast.Call(func=gast.Name(id="slice", ctx=gast.Load(), annotation=None, type_comment=None),
                                      args=[part.lower or none, part.upper or none, part.step or none], keywords=[])
                            if isinstance(part, gast.Slice) else part for part in index.elts], ctx=gast.Load())

class Adjoint:
    """Generates the backward sweep; the forward sweep's saves accumulate in ``saves``."""

    def __init__(self, namer: Namer, active: Set[str], saves: Saves, depth: Dict[int, int],
                 position: Dict[int, tuple], once: Dict[str, tuple], blocks: Dict[int, tuple],
                 avals: Optional[Dict[str, tuple]] = None):
        self.namer = namer
        self.avals = avals or {}
        # complex values anywhere: adjoints cross between complex and real variables (``_in_kind``); set too
        # where a rule brings ``1j`` in
        self.complex = any(aval and aval[0] == "c" for aval in self.avals.values())
        self.blocks = blocks
        self.popped: List[Set[str]] = [set()]
        self.position = position
        self.once = once
        self.loop_pops: Dict[int, List[gast.stmt]] = {}
        self.active = active
        self.saves = saves
        self.depth = depth
        self.state: State = {}
        self.adjoints: Dict[str, str] = {}
        self.views: Dict[int, str] = {}  # id(x = y[index]) -> the name of its view of dy
        self.counters: Dict[int, str] = {}
        self.again: Dict[int, str] = {}  # id(statement) -> the name its value is computed again into
        self.readonly: Set[str] = set()  # arrays nothing writes into (``recompute.readonly_names``)
        self.shapes: Dict[str, tuple] = {}  # symbolic shapes (``shapes.infer``)
        self.params: Set[str] = set()
        self.assigned: Dict[int, Set[str]] = {}  # id(if) -> the names every path assigns before it
        # the code made is to be differentiated again: slices of adjoints updated as ``dy[1:] += g``, not
        # through a view (``dy_view = dy[1:]``), which reverse mode cannot follow
        self.higher_order = False

    # ---- names and accumulation
    def adj(self, name: str) -> str:
        """The adjoint variable of ``name``: ``dx``, ``dparams_0_0``, ``_dt3``."""
        if name not in self.adjoints:
            base = "_d" + name[1:] if name.startswith("_") else "d" + name
            self.adjoints[name] = self.namer.new(base)
        return self.adjoints[name]

    def accumulate(self, name: str, value: gast.expr, origin: gast.stmt) -> gast.stmt:
        """``dname = value`` if its adjoint is zero, else ``dname = dname + value``."""
        d = self.adj(name)
        value = self._in_kind(name, value, origin)
        if name in self.state:
            value = gast.BinOp(left=_name(d), op=gast.Add(), right=value)
            self.state[name] = True
        else:
            self.state[name] = _fresh(value)
        return self._mark(_assign(_name(d, True), value), origin)

    def _in_kind(self, name: str, value: gast.expr, origin: gast.stmt) -> gast.expr:
        """A contribution to ``name``'s adjoint in ``name``'s kind, JAX's convention where complex and real
        values meet: the adjoint of a real variable is real (the real part of a complex cotangent, as from
        ``x + 1j * x``), that of a complex variable complex (``np.real(z)`` sends a real one back)."""
        if not self.complex:
            return value
        kind = (self.avals.get(name) or (None,))[0]
        if kind in _REAL_KINDS:
            return module_call("np", "real", value)
        like = gast.Constant(value=0j, kind=None) if kind == "c" else self.need(name, origin)
        return _rt("match_kind", value, like)

    @staticmethod
    def _mark(stmt: gast.stmt, origin: gast.stmt) -> gast.stmt:
        return anno.derived(stmt, origin, anno.Key.GRAD_OF)

    def need(self, name: str, stmt: gast.stmt, when: str = "before") -> gast.Name:
        """The value of ``name`` when ``stmt`` ran, as a name the backward sweep can read."""
        definition = self.once.get(name)
        where = self.position.get(id(stmt))
        if definition and where and where[0] == definition[0] and where[1] is not None and (
                where[1] > definition[1] or (where[1] == definition[1] and when == "after")):
            again = self._computed_again(name, definition)
            if again is not None:
                return again
            loop, _, key = definition
            saved, pop = self.saves.need_iteration(name, key, self.depth[id(stmt)])
            self.loop_pops.setdefault(loop, []).append(pop)
            return _name(saved)
        if name in self.saves.single_assignment:
            return _name(name)
        block, index = self.blocks[id(stmt)]
        version = _version(block, index, name, when)
        copy_ = _entry_copy(block, index, name, self.once) if version < 0 else None
        if copy_ is not None:
            return self.need(copy_, stmt, when)
        if version >= 0:
            key, at = id(block[version]), "after"
        else:
            key, at = id(block[0]), "before"
        return _name(self.saves.need_value(_name(name), name, key, at, self.depth[id(stmt)],
                                           ident=("version", id(block), name, version), popped=self.popped[-1]))

    def _computed_again(self, name: str, definition: tuple) -> Optional[gast.Name]:
        """``name``, assigned once per iteration of a loop, computed again at the top of the loop's backward
        body from its inputs there, when that is cheap (``recompute.cheap``); None: it is taped."""
        loop, index, key = definition
        if index < 0:
            return None
        stmts, at = self.blocks[key]
        stmt = stmts[at]
        reads = recompute.inputs(stmt.value)
        if not recompute.cheap(stmt.value, self.avals, self.readonly) or not all(
                n in self.saves.single_assignment or (self.avals.get(n) or ("", -1))[1] == 0 for n in reads):
            return None
        if key not in self.again:
            self.again[key] = self.namer.new(name)
        outer, self.saves.pops = self.saves.pops, []
        self.popped.append(set())  # the inputs are read again at the top of the body, before any other read
        try:
            mapping = {n: self.need(n, stmt) for n in reads}
            taped = self.saves.take_pops()
        finally:
            self.saves.pops = outer
            self.popped.pop()
        again = _assign(self.again[key], Substitute(mapping).visit(copy.deepcopy(stmt.value)))
        gast.copy_location(again, stmt)
        anno.copyanno(stmt, again)
        self.loop_pops.setdefault(loop, []).extend(taped + [again])
        self.popped[-1].update(popped_name(p) for p in taped)  # read at the top of the body: later reads reuse
        return _name(self.again[key])

    def _shape_twin(self, name: str, stmt: gast.stmt) -> Optional[gast.Name]:
        """A value of ``name``'s kind and shape that the backward sweep reads without a tape: a parameter,
        or a value of the same loop iteration that it computes again (``row = x[i]``); None if none."""
        shape, aval = self.shapes.get(name), self.avals.get(name)
        where = self.position.get(id(stmt))
        if not shape or aval is None:
            return None
        twins = [n for n, s in self.shapes.items() if s == shape and self.avals.get(n) == aval and n != name]
        for twin in sorted(twins, key=lambda n: n not in self.params):
            if twin in self.params and twin in self.saves.single_assignment:
                return _name(twin)
            definition = self.once.get(twin)
            if definition and where and where[0] == definition[0] and where[1] is not None and \
                    where[1] > definition[1] >= 0:
                stmts, at = self.blocks[definition[2]]
                if recompute.cheap(stmts[at].value, self.avals, self.readonly):
                    return self.need(twin, stmt)
        return None

    def owned(self, name: str, primal: gast.expr, origin: gast.stmt) -> List[gast.stmt]:
        """Statements making ``dname`` a live array that only this adjoint references."""
        d = self.adj(name)
        if name not in self.state:
            self.state[name] = True
            shape = self._shape_twin(name, origin) or primal
            return [self._mark(_assign(_name(d, True), _rt("zeros_like", shape)), origin)]
        if not self.state[name]:
            self.state[name] = True
            return [self._mark(_assign(_name(d, True), _rt("copy_of", _name(d))), origin)]
        return []

    # ---- blocks and statements
    def block(self, stmts: List[gast.stmt]) -> List[gast.stmt]:
        """The backward sweep of ``stmts`` (reversed), updating the live-adjoint state."""
        out: List[gast.stmt] = []
        self.popped.append(set())
        try:
            for stmt in reversed(stmts):
                out.extend(self.statement(stmt))
        finally:
            self.popped.pop()
        return out

    def statement(self, stmt: gast.stmt) -> List[gast.stmt]:
        """The backward sweep of one statement, preceded by the tape pops it reads."""
        outer = self.saves.pops
        self.saves.pops = []
        try:
            code = self._statement(stmt)
            if not code:
                return []
            pops = self.saves.take_pops()
            self.popped[-1].update(popped_name(p) for p in pops)
            return pops + code
        finally:
            self.saves.pops = outer

    def _statement(self, stmt: gast.stmt) -> List[gast.stmt]:
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0]
            if isinstance(target, gast.Name):
                return self.assign(stmt, target.id, stmt.value)
            if isinstance(target, gast.Subscript):
                return self.setitem(stmt, target, stmt.value, augmented=None)
            return []
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript):
            return self.setitem(stmt, stmt.target, stmt.value, augmented=stmt.op)
        if isinstance(stmt, gast.If):
            return self.branch(stmt)
        if isinstance(stmt, (gast.For, gast.While)):
            return self.loop(stmt)
        return []

    # ---- assignments
    def assign(self, stmt: gast.Assign, x: str, value: gast.expr) -> List[gast.stmt]:
        if x not in self.state:
            return []
        if x not in self.active:
            del self.state[x]
            return []
        del self.state[x]
        reads = _loads(value)
        g: gast.expr = _name(self.adj(x))
        pre: List[gast.stmt] = []
        if x in reads:
            temp = self.namer.new(f"{self.adj(x)}_out")
            pre.append(self._mark(_assign(_name(temp, True), g), stmt))
            g = _name(temp)
        if isinstance(value, gast.Name):
            if value.id in self.active and value.id != x:
                return pre + [self.accumulate(value.id, g, stmt)]
            return []
        if isinstance(value, gast.Subscript):
            return pre + self.getitem(stmt, value, g)
        if not (reads & self.active) or not differentiable.is_differentiable(value):
            return []
        return pre + self.apply_rule(stmt, x, value, g)

    def apply_rule(self, stmt: gast.stmt, x: str, value: gast.expr, g: gast.expr) -> List[gast.stmt]:
        app = primitives.application(value)
        rule = vjp_rule(app.key) if app else None
        if rule is None or rule is NONDIFFERENTIABLE:
            if rule is NONDIFFERENTIABLE:
                return []
            self._no_rule(stmt, app)
        refused = refusal(app.key, app, [self._aval_of(arg) for arg in app.args])
        if refused is not None:
            raise NumbaxDifferentiationError(f"numbax has no derivative of {app.name} {refused}",
                                             anno.getanno(stmt, anno.Key.ORIGIN),
                                             hint="compute this value outside the differentiated function, or "
                                                  "use the arguments numbax.coverage() lists rules for.")
        if entry(app.key).sequence and self.avals.get(x) is not None:
            # the list's elements, indexed, would get the abstract values of an array's rows: unsound
            raise NumbaxDifferentiationError(
                f"numbax cannot differentiate this call of {app.name}: its list of results would be typed as "
                f"one array", anno.getanno(stmt, anno.Key.ORIGIN),
                hint="slice the array instead: x[:n], x[n:].")
        template = rule.template
        try:
            bound = bind_arguments(template, app.args, app.keywords)
        except TypeError as exc:
            raise NumbaxDifferentiationError(f"cannot differentiate this call of {app.name}: {exc}",
                                             anno.getanno(stmt, anno.Key.ORIGIN),
                                             hint="call it with NumPy's own argument names.") from None

        wanted = {p for p, arg in bound.items() if _loads(arg) & self.active}
        unknown = undifferentiated(app.key, template, wanted)
        if unknown:
            raise NumbaxDifferentiationError(
                f"numbax's rule for {app.name} has no derivative in its argument `{unknown[0]}`, which is "
                f"differentiated here", anno.getanno(stmt, anno.Key.ORIGIN),
                hint=f"compute `{unknown[0]}` outside the differentiated function, or pass a constant.")
        for p in wanted:
            if not (isinstance(bound[p], gast.Name) or _elements(bound[p], self.active) is not None):
                raise NumbaxDifferentiationError(
                    f"numbax cannot differentiate {app.name} through this form of its argument `{p}`",
                    anno.getanno(stmt, anno.Key.ORIGIN), hint="pass a variable, or a list or tuple of variables.")
        identity = {p: _name(p) for p in template.params}
        identity.update(g=_name("g"), ans=_name("ans"))
        temps, contributions = instantiate(template, identity, lambda base: self.namer.new(base))
        contributions = [(p, e) for p, e in contributions if p in wanted]
        param_avals = {p: self._aval_of(arg) for p, arg in bound.items()}
        param_avals["ans"] = self.avals.get(x)
        verified = getattr(entry(app.key), "complex_verified", False)
        if not verified and any(a and a[0] == "c" for a in param_avals.values()):
            raise NumbaxDifferentiationError(
                f"numbax has no derivative of {app.name} for complex numbers checked against JAX's convention",
                anno.getanno(stmt, anno.Key.ORIGIN),
                hint="differentiate the real and imaginary parts (np.real(z), np.imag(z)) separately, or "
                     "compute this value outside the differentiated function.")
        if not verified:
            self._checked_real(stmt, app, x, value)
        param_shapes = {p: shapes.expr_shape(arg, self.shapes, self.avals) for p, arg in bound.items()}
        param_shapes["ans"] = param_shapes["g"] = self.shapes.get(x)  # an adjoint has its primal's shape
        simplify = _Simplify(param_avals, param_shapes)
        contributions = [(p, simplify.visit(e)) for p, e in contributions]
        if not contributions:
            return []
        if any(isinstance(n, gast.Constant) and isinstance(n.value, complex)
               for e in [e for _, e in contributions] + temps for n in gast.walk(e)):
            self.complex = True  # a rule that makes real values' cotangents complex (np.imag, np.angle)
        used = set().union(*(_loads(e) for _, e in contributions)) | set().union(*(_loads(t) for t in temps))
        mapping: Dict[str, gast.expr] = {"g": g}
        if "ans" in used:
            mapping["ans"] = self.need(x, stmt, "after")
        for param, arg in bound.items():
            if isinstance(arg, gast.Name) and param in used:
                mapping[param] = self.need(arg.id, stmt)
            elif isinstance(arg, (gast.Tuple, gast.List)) and param in used:
                mapping[param] = Substitute({n: self.need(n, stmt) for n in _loads(arg)}).visit(copy.deepcopy(arg))
            else:
                mapping[param] = arg
        substitute = Substitute(mapping)
        fold = FoldTests(names_hold_values=True)
        out = [self._mark(fold.visit(substitute.visit(t)), stmt) for t in temps]
        for param, expr in contributions:
            value = fold.visit(_Simplify({}).visit(substitute.visit(expr)))
            arg = bound[param]
            if isinstance(arg, gast.Name):
                out.append(self.accumulate(arg.id, value, stmt))
                continue
            # A sequence (``np.concatenate((a, b))``, ``np.array([[s, t], [u, v]])``): the rule's cotangent is
            # indexed as the sequence is, one constant index per level of nesting.
            parts = self.namer.new(f"_d{param}")
            out.append(self._mark(_assign(_name(parts, True), value), stmt))
            for path, elt in _elements(arg, self.active):
                part: gast.expr = _name(parts)
                for i in path:
                    part = gast.Subscript(value=part, slice=gast.Constant(value=i, kind=None), ctx=gast.Load())
                out.append(self.accumulate(elt.id, part, stmt))
        return out

    def check_rules(self, stmts: List[gast.stmt]) -> None:
        """Raise for the first active call without a rule, in the user's order (before any code is made)."""
        for stmt in stmts:
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) and \
                    stmt.targets[0].id in self.active and not isinstance(stmt.value, (gast.Name, gast.Subscript)) \
                    and _loads(stmt.value) & self.active and differentiable.is_differentiable(stmt.value):
                app = primitives.application(stmt.value)
                if app is None or vjp_rule(app.key) is None:
                    self._no_rule(stmt, app)
            for field in ("body", "orelse"):
                self.check_rules(getattr(stmt, field, []) or [])

    def _checked_real(self, stmt: gast.stmt, app, x: str, value: gast.expr) -> None:
        """The values a rule checked for real numbers only meets at ``stmt`` (its differentiated operands and its
        result ``x``) whose dtypes were not inferred: the forward sweep checks them after ``stmt``."""
        unknown = {n for n in (_loads(value) & self.active) | {x} if self.avals.get(n) is None}
        self.saves.after.setdefault(id(stmt), []).extend(complex_checks.real_checks(unknown, app.name, stmt))

    def _aval_of(self, node: gast.expr):
        if isinstance(node, gast.Name):
            return self.avals.get(node.id)
        if isinstance(node, gast.Constant) and isinstance(node.value, (int, float, bool)):
            return ("f", 0)
        return None

    def zero(self, name: str, ref: gast.expr) -> gast.expr:
        """A zero adjoint for ``name``: ``0.0`` for a float scalar, else ``rt.zeros_like(ref)``."""
        if self.avals.get(name) == ("f", 0):
            return gast.Constant(value=0.0, kind=None)
        return _rt("zeros_like", ref)

    def _no_rule(self, stmt: gast.stmt, app) -> None:
        what = app.name if app else "this expression"
        raise NumbaxDifferentiationError(
            f"numbax has no derivative rule for {what}", anno.getanno(stmt, anno.Key.ORIGIN),
            hint="numbax.coverage() lists the functions with rules; compute this value outside the "
                 "differentiated function, or express it with functions that have rules.")

    # ---- subscripts
    def _index(self, index: gast.expr, stmt: gast.stmt) -> gast.expr:
        return Substitute({n: self.need(n, stmt) for n in _loads(index)}).visit(copy.deepcopy(index))

    def getitem(self, stmt: gast.stmt, value: gast.Subscript, g: gast.expr) -> List[gast.stmt]:
        """``dy[index] += g`` for ``x = y[index]``.

        An index with an integer array or a mask in it goes through ``rt.index_add`` (repeated positions
        accumulate; in code to be differentiated again, ``dy = rt.index_added(dy, index, g)``, which reverse
        mode can read). Where a
        basic index selects an array, ``g`` is added in place into a view of ``dy`` (``dy_view = dy[1:]``,
        ``dy_view += g``): a slice assignment would make Numba compile its broadcast error messages, seconds
        per process. A single element is updated as written.
        """
        y = _base(value.value)
        if y not in self.active:
            return []
        primal = self.need(y, stmt)
        out = self.owned(y, primal, stmt)
        index = self._index(value.slice, stmt)
        d = self.adj(y)
        advanced = self._advanced(value.slice)
        if advanced and self.higher_order:
            out.append(self._mark(_assign(_name(d, True), _rt("index_added", _name(d), _slices_as_values(index), g)),
                                  stmt))
        elif advanced:
            out.append(self._mark(gast.Expr(value=_rt("index_add", _name(d), _slices_as_values(index), g)), stmt))
        elif self._selects_array(stmt, value.slice) and not self.higher_order:
            if id(stmt) not in self.views:  # a loop body's sweep is generated until its adjoints settle
                self.views[id(stmt)] = self.namer.new(d + "_view")
            view = self.views[id(stmt)]
            out.append(self._mark(_assign(view, gast.Subscript(value=_name(d), slice=index, ctx=gast.Load())), stmt))
            out.append(self._mark(gast.AugAssign(target=_name(view, True), op=gast.Add(), value=g), stmt))
        else:
            target = gast.Subscript(value=_name(d), slice=index, ctx=gast.Store())
            out.append(self._mark(gast.AugAssign(target=target, op=gast.Add(), value=g), stmt))
        return out

    def _advanced(self, index: gast.expr) -> bool:
        """Whether ``index`` (or a part of a tuple) is a name not known to hold an integer: an integer array or a
        mask, whose positions may repeat (``y[[0, 0]]``, ``y[r, c]``), so that its adjoint must accumulate."""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        return any(isinstance(part, gast.Name) and self.avals.get(part.id) != ("i", 0) for part in parts)

    def _selects_array(self, stmt: gast.Assign, index: gast.expr) -> bool:
        """Whether ``stmt``, ``x = y[index]``, takes an array view: ``x`` has dimensions, ``index`` is basic."""
        aval = self.avals.get(stmt.targets[0].id) if isinstance(stmt.targets[0], gast.Name) else None
        if not aval or aval[1] == 0:
            return False
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        return all(self._basic(part) for part in parts)

    def _basic(self, part: gast.expr) -> bool:
        """Whether ``part`` of an index is basic: a slice, a constant (``None``, ``...``, ``-1``), an integer."""
        if isinstance(part, gast.UnaryOp):
            part = part.operand
        return isinstance(part, (gast.Slice, gast.Constant)) or (
            isinstance(part, gast.Name) and self.avals.get(part.id) == ("i", 0))

    def setitem(self, stmt: gast.stmt, target: gast.Subscript, value: gast.expr, augmented) -> List[gast.stmt]:
        y = _base(target.value)
        depth = self.depth[id(stmt)]
        index_now = copy.deepcopy(target.slice)
        old_value = gast.Subscript(value=_name(y), slice=index_now, ctx=gast.Load())
        old = _name(self.saves.need_value(_rt("copy_of", old_value), f"{y}_old", id(stmt), "before", depth))
        index = self._index(target.slice, stmt)
        primal = self.need(y, stmt)
        out: List[gast.stmt] = []
        spread: List[gast.stmt] = []  # the right side's cotangent where it is the target itself (below)
        kind = (self.avals.get(y) or (None,))[0]
        cast = kind in ("i", "b")  # a write into an integer or bool array casts: no cotangent
        live = y in self.state
        zeroing: List[gast.stmt] = []
        if live and augmented is None:  # before the right side's cotangent below marks dy as owned
            zeroing = self.owned(y, primal, stmt)
            zero_target = gast.Subscript(value=_name(self.adj(y)), slice=copy.deepcopy(index), ctx=gast.Store())
            zeroing.append(self._mark(_assign(zero_target, gast.Constant(value=0.0, kind=None)), stmt))
        if live and isinstance(value, gast.Name) and value.id in self.active and not cast:
            slot = gast.Subscript(value=_name(self.adj(y)), slice=copy.deepcopy(index), ctx=gast.Load())
            g: gast.expr = _rt("copy_of", slot)
            if self._advanced(target.slice):  # ``y[[0, 0]] = v``: only the last write of a position stays
                g = _rt("last_writes", g, _name(self.adj(y)), _slices_as_values(copy.deepcopy(index)))
            if isinstance(augmented, gast.Sub):
                g = gast.UnaryOp(op=gast.USub(), operand=g)
            if kind is None:  # the target's dtype was not inferred: the compiled code decides, at compile time
                g = _rt("stored_cotangent", g, copy.deepcopy(primal))
            if value.id == y:
                # ``x[::-1] = x``: NumPy reads all of x before writing, so the slot's cotangent is taken
                # before the slot is zeroed and goes to the whole of x after
                held = self.namer.temp()
                out.append(self._mark(_assign(_name(held, True), g), stmt))
                g = _name(held)
            (spread if value.id == y else out).append(
                self.accumulate(value.id, _rt("unbroadcast", g, self.need(value.id, stmt)), stmt))
        out += zeroing + spread
        restore = gast.Subscript(value=copy.deepcopy(primal), slice=copy.deepcopy(index), ctx=gast.Store())
        out.append(self._mark(_assign(restore, old), stmt))
        return out

    # ---- control flow
    def _materialize(self, names: Set[str], start: State, stmt: gast.stmt) -> List[gast.stmt]:
        """Zero adjoints made live, for a join: shaped like the consumed adjoint, or like the value before. None
        for a value some path reaches the ``if`` without: unbound there, it has no shape to take; the adjoint is
        read only where the value was assigned, under the same conditions (a temporary of numbax's, assigned
        and read under one test; the user's variables are assigned on every path, ``MaybeBound``)."""
        out = []
        assigned = self.assigned.get(id(stmt))
        for name in sorted(names):
            if name not in start and assigned is not None and name not in assigned:
                continue
            d = self.adj(name)
            ref = _name(d) if name in start else self.need(name, stmt)
            out.append(self._mark(_assign(_name(d, True), self.zero(name, ref)), stmt))
            self.state[name] = True
        return out

    def branch(self, stmt: gast.If) -> List[gast.stmt]:
        start = dict(self.state)
        body = self.block(stmt.body)
        after_body = self.state
        self.state = dict(start)
        orelse = self.block(stmt.orelse)
        after_orelse = self.state
        joined = set(after_body) | set(after_orelse)
        self.state = after_body
        body += self._materialize(joined - set(after_body), start, stmt)  # a path that killed a cotangent
        self.state = after_orelse
        orelse += self._materialize(joined - set(after_orelse), start, stmt)
        self.state = {n: after_body.get(n, True) and after_orelse.get(n, True) for n in joined}
        if not body and not orelse:
            return []
        test = self.need(stmt.test.id, stmt) if isinstance(stmt.test, gast.Name) else stmt.test
        return [self._mark(gast.If(test=test, body=body or [gast.Pass()], orelse=orelse), stmt)]

    def loop(self, stmt) -> List[gast.stmt]:
        entry = dict(self.state)
        inplace = _inplace_targets(stmt.body) & self.active
        assumed: State = {n: (o or n in inplace) for n, o in entry.items()}
        while True:
            self.state = dict(assumed)
            saved_pops = self.saves.pops
            self.saves.pops = []
            self.block(stmt.body)
            self.saves.pops = saved_pops
            end = self.state
            grown = {n: (assumed.get(n, n in inplace) and end.get(n, True)) for n in set(assumed) | set(end)}
            if grown == assumed:
                break
            assumed = grown
        self.state = dict(assumed)
        self.loop_pops[id(stmt)] = []
        body = self.block(stmt.body)
        pops = {popped_name(p): p for p in self.loop_pops.pop(id(stmt))}
        body = list(pops.values()) + body
        end = self.state
        joins = self._materialize(set(assumed) - set(end), assumed, stmt)  # an iteration killed a cotangent
        for name in sorted(n for n in assumed if assumed[n] and n in end and not end[n]):
            joins.append(self._mark(_assign(_name(self.adj(name), True), _rt("copy_of", _name(self.adj(name)))),
                                    stmt))
        if not body and not joins:
            self.state = entry
            return []
        body = self.saves.rewind(stmt) + body + joins
        self.state = dict(assumed)
        pre: List[gast.stmt] = []
        for name in sorted(assumed):
            if name not in entry:
                zero = self.zero(name, _name(name)) if self.avals.get(name) == ("f", 0) else \
                    _rt("zeros_like", self.need(name, stmt, "after"))
                pre.append(self._mark(_assign(_name(self.adj(name), True), zero), stmt))
            elif assumed[name] and not entry[name]:
                pre.append(self._mark(_assign(_name(self.adj(name), True), _rt("copy_of", _name(self.adj(name)))),
                                      stmt))
        counter = self.counter(stmt)
        count = _name(self.saves.need_value(_name(counter), counter, id(stmt), "after", self.depth[id(stmt)],
                                            popped=self.popped[-1]))
        step = self.namer.new("step")
        reverse = gast.For(target=_name(step, True), iter=gast.Call(func=_name("range"), args=[count], keywords=[]),
                           body=body, orelse=[], type_comment=None)
        return pre + [self._mark(reverse, stmt)]

    def counter(self, stmt) -> str:
        """The name counting ``stmt``'s iterations in the forward sweep."""
        if id(stmt) not in self.counters:
            self.counters[id(stmt)] = self.namer.new("trips")
            self.saves.avals[self.counters[id(stmt)]] = ("i", 0)  # taped in a table in nested loops
        return self.counters[id(stmt)]


def _elements(arg: gast.expr, active: Set[str], path: Tuple[int, ...] = ()):
    """``[(path, name)]`` of the active names in a (nested) list or tuple argument, each with its indices;
    None if an active value sits there in another form (an expression the rule cannot index back to)."""
    if isinstance(arg, gast.Name):
        return [(path, arg)] if arg.id in active else []
    if isinstance(arg, (gast.Tuple, gast.List)):
        out = []
        for i, elt in enumerate(arg.elts):
            inner = _elements(elt, active, path + (i,))
            if inner is None:
                return None
            out += inner
        return out
    return None if _loads(arg) & active else []


def _assigns(stmt: gast.stmt, name: str) -> bool:
    for node in gast.walk(stmt):
        if isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, gast.Store):
            return True
    return False


def _entry_copy(block: List[gast.stmt], index: int, name: str, once: Dict[str, tuple]) -> Optional[str]:
    """A name assigned once, by ``copy = name`` before ``block[index]``, while ``name`` still holds the value
    it had on entering ``block``: the same value, which the backward sweep may already keep."""
    for stmt in block[:index]:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) and \
                isinstance(stmt.value, gast.Name) and stmt.value.id == name and stmt.targets[0].id in once:
            return stmt.targets[0].id
    return None


def _version(block: List[gast.stmt], index: int, name: str, when: str) -> int:
    """The index of the statement of ``block`` whose assignment ``name`` holds at ``block[index]`` (-1: entry)."""
    last = index if when == "after" else index - 1
    for j in range(last, -1, -1):
        if _assigns(block[j], name):
            return j
    return -1


# NumPy functions that return a 0-d array, not a scalar, for scalar operands (``np.where(c, g, 0.0)``)
_ZERO_DIM = {"where", "array", "asarray", "copy"}


def _zero_dim_array(node: gast.expr) -> bool:
    """Whether ``node`` is a call that makes a 0-d array of scalars: a cotangent of a scalar must be summed
    to one (``rt.unbroadcast``), or Numba meets a float and a 0-d array where one adjoint needs one type."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
        isinstance(node.func.value, gast.Name) and node.func.value.id == "np" and node.func.attr in _ZERO_DIM


class _Simplify(gast.NodeTransformer):
    """Rule helpers that do nothing on scalars, resolved from the abstract values of a rule's names."""

    def __init__(self, avals: Dict[str, Optional[tuple]], shapes_: Optional[Dict[str, tuple]] = None):
        self.avals = avals
        self.shapes = shapes_ or {}

    def _scalar(self, node) -> bool:
        if isinstance(node, gast.Constant):
            return True
        return isinstance(node, gast.Name) and (self.avals.get(node.id) or (None, -1))[1] == 0

    def visit_BinOp(self, node):
        """Constant arithmetic folded (``2 - 1`` -> ``1``), and ``x ** 1`` -> ``x``."""
        self.generic_visit(node)
        left, right = node.left, node.right
        numbers = (int, float)
        if isinstance(left, gast.Constant) and isinstance(right, gast.Constant) and \
                isinstance(left.value, numbers) and isinstance(right.value, numbers) and \
                isinstance(node.op, (gast.Add, gast.Sub, gast.Mult)):
            value = {gast.Add: left.value + right.value, gast.Sub: left.value - right.value,
                     gast.Mult: left.value * right.value}[type(node.op)]
            return gast.Constant(value=value, kind=None)
        if isinstance(node.op, gast.Pow) and isinstance(right, gast.Constant) and right.value == 1:
            return left
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if self._conjugate_of_reals(node):
            return node.args[0]
        if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.value.id == "rt"):
            return node
        args = node.args
        if func.attr == "unbroadcast" and self._scalar(args[1]) and _zero_dim_array(args[0]):
            return node
        if func.attr == "unbroadcast" and self._same_shape(args[0], args[1]):
            return args[0]
        if func.attr == "unbroadcast" and self._scalar(args[1]):
            ans = self.avals.get("ans")
            if ans is not None and ans[1] == 0:
                return args[0]
            sum_ = gast.Attribute(value=gast.Name(id="np", ctx=gast.Load(), annotation=None, type_comment=None),
                                  attr="sum", ctx=gast.Load())
            return gast.Call(func=sum_, args=[args[0]], keywords=[])
        if func.attr == "unreduce" and self._scalar(args[1]):
            return args[0]
        if func.attr == "size_of" and self._scalar(args[0]):
            return gast.Constant(value=1, kind=None)
        if func.attr == "size_of" and self._ndim(args[0]) > 0:
            return gast.Attribute(value=args[0], attr="size", ctx=gast.Load())
        if func.attr in ("matmul_grad_a", "matmul_grad_b"):
            return self._matmul(func.attr[-1], *args) or node
        if func.attr == "power_exponent" and isinstance(args[0], gast.Constant) and type(args[0].value) is int:
            return gast.Constant(value=1 if args[0].value == 0 else args[0].value - 1, kind=None)
        return node

    def _conjugate_of_reals(self, node: gast.Call) -> bool:
        """``np.conj(e)`` where every name of the rule in ``e`` is known to be real (``g`` has ``ans``'s kind)."""
        func = node.func
        if not (isinstance(func, gast.Attribute) and func.attr == "conj" and isinstance(func.value, gast.Name)
                and func.value.id == "np" and len(node.args) == 1):
            return False
        names = _loads(node.args[0]) - {"np", "rt", "math"}
        kinds = [(self.avals.get("ans" if n == "g" else n) or (None,))[0] for n in names]
        return bool(self.avals) and all(kind is not None and kind != "c" for kind in kinds)

    def _same_shape(self, a: gast.expr, b: gast.expr) -> bool:
        shape = shapes.expr_shape(a, self.shapes, self.avals)
        return shape is not None and shape == shapes.expr_shape(b, self.shapes, self.avals)

    def _ndim(self, node) -> int:
        aval = self.avals.get(node.id) if isinstance(node, gast.Name) else None
        return -1 if aval is None else aval[1]

    def _matmul(self, which: str, g, a, b):
        """The cotangent of one operand of ``a @ b`` written out, when both ndims are known."""
        ndims = (self._ndim(a), self._ndim(b))
        t = lambda x: gast.Attribute(value=x, attr="T", ctx=gast.Load())  # noqa: E731
        mm = lambda x, y: gast.BinOp(left=x, op=gast.MatMult(), right=y)  # noqa: E731
        np_call = lambda f, *xs: gast.Call(func=gast.Attribute(value=gast.Name(  # noqa: E731
            id="np", ctx=gast.Load(), annotation=None, type_comment=None), attr=f, ctx=gast.Load()),
            args=list(xs), keywords=[])
        table = {
            "a": {(2, 2): lambda: mm(g, t(b)), (1, 2): lambda: mm(b, g), (2, 1): lambda: np_call("outer", g, b),
                  (1, 1): lambda: gast.BinOp(left=g, op=gast.Mult(), right=b)},
            "b": {(2, 2): lambda: mm(t(a), g), (1, 2): lambda: np_call("outer", a, g), (2, 1): lambda: mm(g, a),
                  (1, 1): lambda: gast.BinOp(left=g, op=gast.Mult(), right=a)},
        }
        make = table[which].get(ndims)
        return make() if make else None


def _inplace_targets(stmts: List[gast.stmt]) -> Set[str]:
    """Names whose adjoints the backward sweep of ``stmts`` updates in place (subscripts)."""
    out: Set[str] = set()
    for node in gast.walk(gast.Module(body=stmts, type_ignores=[])):
        if isinstance(node, gast.Subscript):
            out.add(_base(node.value))
    return out
