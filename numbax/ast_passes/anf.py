"""anf: A-normal form, one operation per statement.

Expects the output of ``inline`` (one flat function). Guarantees that every
operand of every operation is an atom (a name, a constant, or a reference to a
module-level function such as ``np.tanh``); nested operations move into fresh
temporaries ``_t1, _t2, ...`` in evaluation order. Conditional expressions and
``and``/``or`` become ``if`` statements, so laziness is kept; a compound
``while`` test, or one that indexes or is checked at run time, is evaluated
at the top of a ``while True`` body (so ``run_time_checks`` checks it each time).

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> f = gast.parse("def f(x, w, b):\\n    return np.tanh(x @ w + b)").body[0]
    >>> print(unparse(transform(f)))
    def f(x, w, b):
        _t1 = x @ w
        _t2 = _t1 + b
        _t3 = np.tanh(_t2)
        return _t3
"""
from __future__ import annotations

import copy
from typing import List, Optional

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses import nodes
from numbax.ast_passes.naming import Namer
from numbax.ast_passes.tree_copy import names

MODULES = frozenset({"np", "math", "cmath"})


def is_atom(node: gast.expr) -> bool:
    """Names, constants, ``-3.0``, and module references such as ``np.linalg.norm``."""
    if isinstance(node, (gast.Name, gast.Constant)):
        return True
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and isinstance(node.operand, gast.Constant):
        return True
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name) and node.id in MODULES


def _name(name: str, ctx=None) -> gast.Name:
    return gast.Name(id=name, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


class _ANF:
    def __init__(self, namer: Namer):
        self.namer = namer
        self.out: List[gast.stmt] = []
        self.origin: Optional[gast.stmt] = None

    def emit(self, stmt: gast.stmt) -> None:
        if self.origin is not None:
            gast.copy_location(stmt, self.origin)
            anno.copyanno(self.origin, stmt)
        self.out.append(stmt)

    def bind(self, value: gast.expr) -> gast.Name:
        """Evaluate an operation into a fresh temporary."""
        temp = self.namer.temp()
        self.emit(gast.Assign(targets=[_name(temp, gast.Store())], value=value, type_comment=None))
        return _name(temp)

    def atom(self, node: gast.expr) -> gast.expr:
        """``node`` as an atom, emitting what it takes to compute it."""
        if node is None or is_atom(node) or isinstance(node, gast.Slice):
            return self.operation(node) if isinstance(node, gast.Slice) else node
        if isinstance(node, (gast.Tuple, gast.List)):
            return type(node)(elts=[self.atom(e) for e in node.elts], ctx=gast.Load())
        return self.bind(self.operation(node))

    def operation(self, node: gast.expr) -> gast.expr:
        """``node`` as one operation over atoms."""
        if isinstance(node, gast.IfExp):
            return self.lazy_if(node)
        if isinstance(node, gast.BoolOp):
            return self.lazy_bool(node)
        if isinstance(node, gast.Call):
            func = node.func if is_atom(node.func) else self.method(node.func)
            return anno.copyanno(node, gast.Call(
                func=func, args=[self.atom(a) for a in node.args],
                keywords=[gast.keyword(arg=k.arg, value=self.atom(k.value)) for k in node.keywords]))
        if isinstance(node, gast.Slice):
            return gast.Slice(*(self.atom(p) if p is not None else None for p in (node.lower, node.upper, node.step)))
        if isinstance(node, gast.Compare) and len(node.ops) > 1:
            return self.lazy_bool(self._split_chain(node))
        node = copy.copy(node)
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.expr) and field != "ctx":
                setattr(node, field, self.atom(value))
            elif isinstance(value, list) and value and isinstance(value[0], gast.expr):
                setattr(node, field, [self.atom(v) for v in value])
        return node

    def method(self, func: gast.Attribute) -> gast.expr:
        """``x.sum`` in ``x.sum()``: the object becomes an atom, the method stays attached."""
        return gast.Attribute(value=self.atom(func.value), attr=func.attr, ctx=gast.Load())

    @staticmethod
    def _split_chain(node: gast.Compare) -> gast.BoolOp:
        operands = [node.left] + node.comparators
        parts = [gast.Compare(left=a, ops=[op], comparators=[b]) for a, op, b in zip(operands, node.ops, operands[1:])]
        return gast.BoolOp(op=gast.And(), values=parts)

    def lazy_if(self, node: gast.IfExp) -> gast.expr:
        test = self.atom(node.test)
        temp = self.namer.temp()
        body = self.block_of(lambda: self.emit(nodes.assign(temp, self.operation(node.body))))
        orelse = self.block_of(lambda: self.emit(nodes.assign(temp, self.operation(node.orelse))))
        self.emit(gast.If(test=test, body=body, orelse=orelse))
        return _name(temp)

    def lazy_bool(self, node: gast.BoolOp) -> gast.expr:
        temp = self.namer.temp()
        self.emit(nodes.assign(temp, self.operation(node.values[0])))
        for value in node.values[1:]:
            test = _name(temp) if isinstance(node.op, gast.And) else gast.UnaryOp(op=gast.Not(), operand=_name(temp))
            body = self.block_of(lambda v=value: self.emit(nodes.assign(temp, self.operation(v))))
            self.emit(gast.If(test=test, body=body, orelse=[]))
        return _name(temp)

    def block_of(self, produce) -> List[gast.stmt]:
        saved, self.out = self.out, []
        produce()
        block, self.out = self.out, saved
        return block

    def target(self, node: gast.expr) -> gast.expr:
        if isinstance(node, gast.Subscript):
            index = self.atom(node.slice)
            return anno.copyanno(node, gast.Subscript(value=self.atom(node.value), slice=index, ctx=gast.Store()))
        return node

    def statements(self, stmts: List[gast.stmt]) -> List[gast.stmt]:
        return self.block_of(lambda: [self.statement(s) for s in stmts])

    def statement(self, stmt: gast.stmt) -> None:
        saved, self.origin = self.origin, stmt
        getattr(self, "stmt_" + type(stmt).__name__, self.emit)(stmt)
        self.origin = saved

    def stmt_Assign(self, stmt):
        stored = any(c.helper == "check_store" for t in stmt.targets for c in anno.getanno(t, anno.Key.CHECK, ()))
        value = self.atom(stmt.value) if stored else self.operation(stmt.value)  # the check reads it too
        self.emit(gast.Assign(targets=[self.target(t) for t in stmt.targets], value=value, type_comment=None))

    def stmt_AugAssign(self, stmt):
        value = self.atom(stmt.value)
        self.emit(gast.AugAssign(target=self.target(stmt.target), op=stmt.op, value=value))

    def stmt_Return(self, stmt):
        self.emit(gast.Return(value=None if stmt.value is None else self.atom(stmt.value)))

    def stmt_Expr(self, stmt):
        self.emit(gast.Expr(value=self.operation(stmt.value)))

    def stmt_If(self, stmt):
        test = self.atom(stmt.test)
        self.emit(gast.If(test=test, body=self.statements(stmt.body), orelse=self.statements(stmt.orelse)))

    def stmt_For(self, stmt):
        iterable = self.operation(stmt.iter)
        self.emit(gast.For(target=stmt.target, iter=iterable, body=self.statements(stmt.body), orelse=[],
                           type_comment=None))

    def stmt_While(self, stmt):
        checked = isinstance(stmt.test, gast.Subscript) or anno.hasanno(stmt.test, anno.Key.CHECK)
        if is_atom(stmt.test) or not checked and all(
                is_atom(c) for c in gast.iter_child_nodes(stmt.test) if isinstance(c, gast.expr)):
            self.emit(gast.While(test=stmt.test, body=self.statements(stmt.body), orelse=[]))
            return
        head = self.block_of(lambda: self.emit(gast.If(
            test=gast.UnaryOp(op=gast.Not(), operand=self.atom(stmt.test)), body=[gast.Break()], orelse=[])))
        self.emit(gast.While(test=gast.Constant(value=True, kind=None), body=head + self.statements(stmt.body),
                             orelse=[]))

    def stmt_Assert(self, stmt):
        self.emit(gast.Assert(test=self.atom(stmt.test), msg=stmt.msg))


def transform(fdef: gast.FunctionDef) -> gast.FunctionDef:
    """Put ``fdef`` into A-normal form."""
    namer = Namer(n.id for n in names(fdef))
    fdef.body = _ANF(namer).statements(fdef.body)
    return fdef
