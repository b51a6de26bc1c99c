"""scalarize: small arrays of a known length kept as one number per element (scalar replacement).

An ODE's state of two or three numbers (``jnp.stack([a * x - b * x * y, ...])``) is an array
that Numba allocates, fills and reads in every step, and each operation on it (``z + 0.5 * dt *
k1``) another array and a loop. Where the length is known from the code (a stack of numbers), the
array and everything computed from it elementwise with ``+ - * /`` is written as numbers, one
per element (``k1_at0``, ``k1_at1``); a read of a constant element (``k1[0]``) is that number, and
the checks of those reads and broadcasts, which cannot fail, are dropped. Anything else that reads
the array (a call, a store into another array, the return) gets it stacked again just before.

Reverse mode's code over such arrays follows: ``rt.zeros_like``, ``rt.unbroadcast`` and copies of arrays
of a known length, a store into an array just made (``dstate[1] += dv``, nothing having read the array since
but for its elements: the number is updated), the items popped from a list tape to which only arrays of one
length are appended (read once as numbers), and the rows of a table of a constant width, which stay arrays
but whose length, all their reads need, is known. What then reads a tape or table no more goes
(``dead_tapes``, ``dead_arrays``).

A loop that carries such an array (``for i in range(n): z = z + dt * f(z)``, or a ``while``), starting
from one whose length the code does not show (the function's argument), is checked before it:
``rt.check_carried(z, 2, where)`` raises where the array has another length, as a loop that
changes the shape of what it carries (JAX's loops refuse it at tracing, whether or not they run; an
array of length 1 broadcast to 2 in the first step is refused here too); then its elements are read
once. A ``while`` loop's test may read the elements, which it reads anew in each iteration.

Exact, not approximate: each element is computed by the same operations in the same order as
NumPy's elementwise loop computes it. So that Numba's scalar arithmetic types the numbers as its
array arithmetic types the elements, only float64 arrays qualify (``float64_only``: the pass is
skipped for code with a float32 or complex value anywhere), made of float numbers, with scalar
operands of float or integer kind, and the operators whose array and scalar forms agree
(``**``, ``//`` and ``%`` are left to NumPy). An array that anything else writes into, through its
name or any that may be it or a view of it, stays an array.
"""
from __future__ import annotations

from typing import Dict, Set, Tuple

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses import avals as avals_analysis
from numbax.ast_passes.analyses.nodes import assign, name, rt_call
from numbax.ast_passes.analyses.avals import tape_of
from numbax.ast_passes.analyses.small_arrays import SmallArrays, as_read, called, candidates, constant_int, \
    element_store, reads_array
from numbax.ast_passes.naming import Namer, element_name, stacked_name
from numbax.ast_passes.tree_copy import copy_tree, walk

_NARROW = {"float32", "float16", "single", "half", "complex64", "complex128", "csingle", "cdouble", "complex",
           "f4", "f2", "c8", "c16", "f", "e", "F", "D", "longdouble", "float128"}


def float64_only(module: gast.Module, dtypes) -> bool:
    """Whether the arguments' ``dtypes`` and the code's spelled-out dtypes are float64 where they are floats
    (none float32, float16 or complex): the numbers scalarized then have the type the array elements have."""
    if any(d.kind == "c" or (d.kind == "f" and d.itemsize != 8) for d in dtypes):
        return False
    for node in walk(module):
        if isinstance(node, gast.Attribute) and node.attr in _NARROW:
            return False
        if isinstance(node, gast.Constant) and isinstance(node.value, str) and node.value in _NARROW:
            return False
        if isinstance(node, gast.Constant) and isinstance(node.value, complex):
            return False
    return True


class _Rewrite:
    """The function written again with the settled names as numbers.

    ``fresh``: for a name whose array (``k1_stack``, stacked from its numbers, or the array checked before a
    loop) still holds its numbers where the statement being written runs, that array's name: reading the
    array again stacks nothing.
    """

    def __init__(self, analysis: SmallArrays, namer: Namer):
        self.a = analysis
        self.namer = namer
        self.names = {v: [namer.new(element_name(v, j)) for j in range(k)] for v, k in analysis.lengths.items()}
        self.fresh: Dict[str, str] = {}

    def element_expr(self, node: gast.expr, j: int, active: Dict[str, int]) -> gast.expr:
        """Element ``j`` of the array ``node`` computes (``node`` itself, rewritten, for a number)."""
        if isinstance(node, gast.Name) and node.id in active:
            return name(self.names[node.id][j])
        at = self.a.element(node, active)
        if at is not None:
            return name(self.names[at[0]][at[1]])
        if isinstance(node, gast.UnaryOp):
            return gast.UnaryOp(op=node.op, operand=self.element_expr(node.operand, j, active))
        if isinstance(node, gast.BinOp):
            return gast.BinOp(left=self.element_expr(node.left, j, active), op=node.op,
                              right=self.element_expr(node.right, j, active))
        items = self.a.stacked(node)
        if items is not None:
            return self.element_expr(items[j], j, active)
        callee = called(node)
        if callee in ("rt.zeros_like", "np.zeros_like"):
            return gast.Constant(value=0.0, kind=None)
        if callee in ("rt.unbroadcast", "rt.copy_of", "np.copy"):  # (``g`` itself; a copy of the numbers)
            return self.element_expr(node.args[0], j, active)
        return copy_tree(node)

    def block(self, stmts: list) -> list:
        out: list = []
        for stmt in stmts:
            active = self.a.active(stmt, self.a.lengths)
            for var, k in self.a.entries.get(id(stmt), ()):
                where = gast.Constant(value=anno.getanno(stmt, anno.Key.ORIGIN).position(), kind=None)
                out.append(self._at(stmt, gast.Expr(value=rt_call("check_carried", name(var), gast.Constant(
                    value=k, kind=None), where))))
                out.extend(self._at(stmt, assign(self.names[var][j], gast.Subscript(
                    value=name(var), slice=gast.Constant(value=j, kind=None), ctx=gast.Load())))
                    for j in range(k))
                self.fresh[var] = var  # the array checked holds the numbers just read
            out.extend(self.statement(stmt, active))
        return out

    @staticmethod
    def _at(origin: gast.stmt, stmt: gast.stmt) -> gast.stmt:
        """``stmt`` written for ``origin``: its location and annotations (the user's line it cites)."""
        return anno.copyanno(origin, gast.copy_location(stmt, origin))

    def statement(self, stmt: gast.stmt, active: Dict[str, int]) -> list:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in active:
            self.fresh.pop(stmt.targets[0].id, None)
            if id(stmt) not in self.a.kept:
                return self.definition(stmt, active)
        if id(stmt) in self.a.stores and element_store(stmt) in active:  # ``x[c] += v``: ``x_atc = x_atc + v``
            var = element_store(stmt)
            self.fresh.pop(var, None)
            target = as_read(stmt.target if isinstance(stmt, gast.AugAssign) else stmt.targets[0])
            _, j = self.a.element(target, active)
            value = self.element_expr(stmt.value, 0, active)
            if isinstance(stmt, gast.AugAssign):
                value = gast.BinOp(left=name(self.names[var][j]), op=stmt.op, right=value)
            return [self._at(stmt, assign(self.names[var][j], value))]
        if isinstance(stmt, gast.Expr) and self._proven(stmt.value, active):
            return []
        before: list = []
        if not isinstance(stmt, (gast.For, gast.While, gast.If)):
            return before + [self.reads(stmt, active, before, stmt)]
        for field in ("iter", "test"):
            if hasattr(stmt, field):
                setattr(stmt, field, self.reads(getattr(stmt, field), active, before, stmt))
        assigned = {n.id for n in walk(stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        self.fresh = {v: a for v, a in self.fresh.items() if v not in assigned and a not in assigned}
        if isinstance(stmt, (gast.For, gast.While)):  # stacked once before a loop that does not assign it
            inside = gast.Module(body=stmt.body + stmt.orelse, type_ignores=[])
            for var in sorted(set(active) - assigned - set(self.fresh)):
                if reads_array(inside, var, {var: self.a.lengths[var]}):
                    before.append(self._stack(var, stmt))
        kept = dict(self.fresh)
        stmt.body = self.block(stmt.body)
        self.fresh = dict(kept)
        stmt.orelse = self.block(stmt.orelse)
        self.fresh = kept
        return before + [stmt]

    def _stack(self, var: str, origin: gast.stmt) -> gast.stmt:
        """``var_stack = rt.stack((var_at0, var_at1))``: the array again, from its numbers (``fresh`` from
        here)."""
        items = gast.Tuple(elts=[name(n) for n in self.names[var]], ctx=gast.Load())
        self.fresh[var] = self.namer.new(stacked_name(var))
        return self._at(origin, assign(self.fresh[var], rt_call("stack", items)))

    def definition(self, stmt: gast.Assign, active: Dict[str, int]) -> list:
        """``x = e`` as one assignment per element; through temporaries where ``e`` reads ``x`` itself."""
        var = stmt.targets[0].id
        if tape_of(stmt.value, "pop"):  # an array of the length appended: popped as it is, its numbers read
            self.fresh[var] = var
            return [stmt] + [self._at(stmt, assign(n, gast.Subscript(value=name(var), slice=gast.Constant(
                value=j, kind=None), ctx=gast.Load()))) for j, n in enumerate(self.names[var])]
        values = [self.element_expr(stmt.value, j, active) for j in range(active[var])]
        targets = self.names[var]
        if any(isinstance(n, gast.Name) and n.id == var for n in walk(stmt.value)):
            temps = [self.namer.new(t + "_next") for t in targets]
            return [self._at(stmt, assign(t, v)) for t, v in zip(temps, values)] + \
                [self._at(stmt, assign(t, name(s))) for t, s in zip(targets, temps)]
        return [self._at(stmt, assign(t, v)) for t, v in zip(targets, values)]

    def _proven(self, call: gast.expr, active: Dict[str, int]) -> bool:
        """``rt.check_index(x, c, 0, where)`` of a scalarized ``x`` at a constant in range, or
        ``rt.check_broadcast(a, b, where)`` of operands of one length: checks that cannot fail."""
        callee = called(call)
        if callee == "rt.check_index" and len(call.args) == 4 and constant_int(call.args[2]) == 0:
            return self.a.element(gast.Subscript(value=call.args[0], slice=call.args[1], ctx=gast.Load()),
                                  active) is not None
        if callee == "rt.check_broadcast" and len(call.args) == 3:
            sides = {self.a.length(call.args[0], active), self.a.length(call.args[1], active)}
            return None not in sides and len(sides - {0}) <= 1
        return False

    def reads(self, node, active: Dict[str, int], before: list, stmt: gast.stmt):
        """``node`` with each constant element read of a scalarized array replaced by its number, and each
        other read of the array by the array stacked again (appended to ``before``) unless it is fresh."""
        rewrite = self

        class Replace(gast.NodeTransformer):
            def visit_Subscript(self, sub):
                at = rewrite.a.element(sub, active)
                if at is not None:
                    return name(rewrite.names[at[0]][at[1]])
                return self.generic_visit(sub)

            def visit_Name(self, ref):
                if ref.id in active and isinstance(ref.ctx, gast.Load):
                    if ref.id not in rewrite.fresh:
                        before.append(rewrite._stack(ref.id, stmt))
                    return name(rewrite.fresh[ref.id])
                return ref

        return Replace().visit(node)


def transform(fdef: gast.FunctionDef, param_avals: Dict[str, tuple]) -> Tuple[gast.FunctionDef, bool]:
    """``fdef`` with its small arrays of known length as numbers (see the module's text); whether it changed.
    The caller has made sure the code is ``float64_only``."""
    analysis = SmallArrays(fdef, avals_analysis.infer(fdef, param_avals))
    if not analysis.solve(candidates(fdef, analysis)):
        return fdef, False
    namer = Namer(n.id for n in walk(fdef) if isinstance(n, gast.Name))
    fdef.body = _Rewrite(analysis, namer).block(fdef.body)
    return fdef, True
