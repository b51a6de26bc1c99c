"""Which values of specialized code depend on the mapped inputs of ``vmap`` (for ``out_axes=None``).

JAX refuses ``out_axes=None`` for an output that is batched. numbax decides it
on the code just specialized for the first example: a forward taint analysis
from the variables that hold mapped leaves, through assignments, control
dependence (a value assigned under a branch or loop whose condition is
tainted), the helpers that the code calls (analysed with their own tainted
parameters, results per returned leaf) and the arrays written in place. It
never mutates the tree.

Every example of a mapped input has one shape, so ``x.shape`` is the same for all of them: it is tainted
only where the shape of ``x`` may differ from example to example (``shaped``), which a value computed from
mapped ones has only where its primitive's result shape is not a function of its operands' shapes (the
registry's ``shape`` rule, ``reshape`` to a shape the same for all; ``np.nonzero(x)`` has none). A loop over
the elements of a value computed from a mapped one (``for j in range(dx.shape[0])``) then makes what it
writes depend on the mapped input only where its body does.

    >>> import gast
    >>> body = gast.parse("a = x * 2\\nb = y + 1\\nif a > 0:\\n    c = y\\nelse:\\n    c = b").body
    >>> sorted(tainted_after(body, {"x"}, {}))
    ['a', 'c', 'x']
    >>> body = gast.parse("d = x * 2\\nfor j in range(d.shape[0]):\\n    z[j] = y[j] + 1").body
    >>> sorted(tainted_after(body, {"x"}, {}))
    ['d', 'x']
"""
from __future__ import annotations

from typing import Dict, List, Set, Tuple

import gast
import numpy as np

from numbax.ast_passes.analyses.primitives import application
from numbax.primitives.registry import entry, method_key

_SHAPE_ATTRIBUTES = ("shape", "ndim", "size", "dtype")
_RESHAPES = (np.reshape, method_key("reshape"))  # the result's shape is the shape given


def _reads(node: gast.AST) -> Set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _stored_names(target: gast.AST) -> List[str]:
    """The variables a target writes: names, and the arrays under subscripts and attributes."""
    if isinstance(target, (gast.Tuple, gast.List)):
        return [n for elt in target.elts for n in _stored_names(elt)]
    while isinstance(target, (gast.Subscript, gast.Attribute, gast.Starred)):
        target = target.value
    return [target.id] if isinstance(target, gast.Name) else []


class _Analysis:
    """Taint propagation over one function body (or a block of the calling function)."""

    def __init__(self, helpers: Dict[str, gast.FunctionDef], tainted: Set[str], memo: Dict[tuple, tuple],
                 shaped: Set[str] = frozenset()):
        self.helpers = helpers
        self.memo = memo  # (helper, tainted parameters, shaped parameters) -> function_taint's answer
        self.tainted = tainted
        self.shaped = set(shaped)  # tainted names whose shape may differ from example to example
        self.returns: List[List[Tuple[bool, bool]]] = []
        self.diverged = False  # left a block under a tainted condition: what follows depends on it

    # -- expressions -------------------------------------------------------------

    def _call_results(self, call: gast.Call) -> Tuple[List[Tuple[bool, bool]], bool]:
        """Per result of a helper call, whether it is tainted and whether its shape may vary; and whether
        the call is of a helper."""
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name) and call.func.id in self.helpers):
            return [], False
        flags = tuple(self.is_tainted(a) for a in call.args)
        shapes = tuple(self.shape_varies(a) for a in call.args)
        key = (call.func.id, flags, shapes)
        if key not in self.memo:
            self.memo[key] = function_taint(self.helpers[call.func.id], list(flags), self.helpers, self.memo,
                                            list(shapes))
        results, params = self.memo[key]
        for arg, written in zip(call.args, params):  # an array argument the helper writes a tainted value into
            if written and isinstance(arg, gast.Name):
                self.tainted.add(arg.id)
        return results, True

    def _value_reads(self, expr: gast.AST) -> Set[str]:
        """The names ``expr`` reads, but for ``x.shape`` (and ``ndim``, ``size``, ``dtype``) of an ``x`` whose
        shape is the same in every example."""
        out: Set[str] = set()

        def visit(node):
            if isinstance(node, gast.Attribute) and node.attr in _SHAPE_ATTRIBUTES \
                    and isinstance(node.value, gast.Name) and node.value.id not in self.shaped:
                return
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                out.add(node.id)
            for child in gast.iter_child_nodes(node):
                visit(child)

        visit(expr)
        return out

    def is_tainted(self, expr: gast.AST) -> bool:
        """Whether ``expr`` may depend on a tainted variable."""
        if self.diverged or self._value_reads(expr) & self.tainted:
            return True
        return any(any(t for t, _ in self._call_results(n)[0]) for n in gast.walk(expr) if isinstance(n, gast.Call))

    def shape_varies(self, expr: gast.AST) -> bool:
        """Whether the shape of ``expr``'s value may differ from example to example."""
        if not self.is_tainted(expr):
            return False
        if isinstance(expr, gast.Name):
            return expr.id in self.shaped
        if isinstance(expr, gast.Constant):
            return False
        if isinstance(expr, (gast.Tuple, gast.List)):
            return any(self.shape_varies(e) for e in expr.elts)
        if isinstance(expr, gast.Subscript):  # an index computed from mapped values may take any part
            return self.shape_varies(expr.value) or self.is_tainted(expr.slice)
        app = application(expr)
        primitive = entry(app.key) if app is not None else None
        if primitive is None:
            return True
        operands = list(app.args) + list(app.keywords.values())
        if app.key is np.where and len(app.args) != 3:  # the indices of the true elements
            return True
        if app.key in _RESHAPES:
            return self.shape_varies(operands[0]) or any(self.is_tainted(a) for a in operands[1:])
        return primitive.shape is None or any(self.shape_varies(a) for a in operands)

    # -- statements --------------------------------------------------------------

    def block(self, stmts: List[gast.stmt], control: bool) -> None:
        for stmt in stmts:
            self.statement(stmt, control or self.diverged)

    def statement(self, stmt: gast.stmt, control: bool) -> None:
        if isinstance(stmt, gast.Assign):
            self.assign(stmt, control)
        elif isinstance(stmt, gast.AugAssign):
            if control or self.is_tainted(stmt.value) or self.is_tainted(stmt.target):
                self.tainted.update(_stored_names(stmt.target))
            if control:
                self.shaped.update(_stored_names(stmt.target))
        elif isinstance(stmt, gast.Expr):
            self.is_tainted(stmt.value)  # a helper may write into its array arguments
        elif isinstance(stmt, gast.If):
            inner = control or self.is_tainted(stmt.test)
            self.block(stmt.body, inner)
            self.block(stmt.orelse, inner)
        elif isinstance(stmt, (gast.For, gast.While)):
            self.loop(stmt, control)
        elif isinstance(stmt, gast.Return):
            self.returns.append(self.returned(stmt.value, control))
            self.diverged = self.diverged or control
        elif isinstance(stmt, (gast.Break, gast.Continue, gast.Raise)):
            self.diverged = self.diverged or control

    def assign(self, stmt: gast.Assign, control: bool) -> None:
        results, is_helper = self._call_results(stmt.value)
        target = stmt.targets[0]
        if is_helper and len(stmt.targets) == 1 and isinstance(target, gast.Tuple) and len(results) == len(
                target.elts):
            for elt, (flag, shaped) in zip(target.elts, results):
                if flag or control:
                    self.tainted.update(_stored_names(elt))
                if (shaped or control) and not isinstance(elt, gast.Subscript):
                    self.shaped.update(_stored_names(elt))
            return
        subscript_reads = [self.is_tainted(t.slice) for t in stmt.targets if isinstance(t, gast.Subscript)]
        if control or any(t for t, _ in results) or self.is_tainted(stmt.value) or any(subscript_reads):
            shaped = control or (any(s for _, s in results) if is_helper else self.shape_varies(stmt.value))
            for t in stmt.targets:
                self.tainted.update(_stored_names(t))
                if shaped and not isinstance(t, gast.Subscript):  # a write into an array keeps its shape
                    self.shaped.update(_stored_names(t))

    def loop(self, stmt, control: bool) -> None:
        """A loop's body until nothing more is tainted (values flow around the back edge)."""
        head = stmt.iter if isinstance(stmt, gast.For) else stmt.test
        while True:
            before = (len(self.tainted), len(self.shaped), self.diverged)
            inner = control or self.is_tainted(head)
            if isinstance(stmt, gast.For) and inner:
                self.tainted.update(_stored_names(stmt.target))
                self.shaped.update(_stored_names(stmt.target))
            self.block(stmt.body, inner)
            if (len(self.tainted), len(self.shaped), self.diverged) == before:
                return

    def returned(self, value, control: bool) -> List[Tuple[bool, bool]]:
        elts = value.elts if isinstance(value, gast.Tuple) else [] if value is None else [value]
        results, is_helper = self._call_results(value) if value is not None else ([], False)
        if is_helper:
            return [(flag or control, shaped or control) for flag, shaped in results]
        return [(control or self.is_tainted(e), control or self.shape_varies(e)) for e in elts]


def function_taint(fdef: gast.FunctionDef, params: List[bool], helpers: Dict[str, gast.FunctionDef],
                   memo: Dict[tuple, tuple], shaped: List[bool] = ()) -> Tuple[List[Tuple[bool, bool]], List[bool]]:
    """For a helper called with ``params`` tainted as given (``shaped``: those whose shape may vary): per
    result, whether it is tainted and whether its shape may vary; and which parameters it writes tainted
    values into."""
    names = [a.id for a in fdef.args.args]
    analysis = _Analysis(helpers, {n for n, flag in zip(names, params) if flag}, memo,
                         {n for n, flag in zip(names, shaped) if flag})
    analysis.block(fdef.body, False)
    width = max((len(r) for r in analysis.returns), default=0)
    results = [(any(r[k][0] for r in analysis.returns if k < len(r)), any(r[k][1] for r in analysis.returns
                                                                            if k < len(r))) for k in range(width)]
    return results, [n in analysis.tainted for n in names]


def tainted_after(stmts: List[gast.stmt], tainted: Set[str], helpers: Dict[str, gast.FunctionDef]) -> Set[str]:
    """The variables that may depend on ``tainted`` after ``stmts`` run (``tainted`` included; the examples
    of each have one shape)."""
    analysis = _Analysis(helpers, set(tainted), {})
    analysis.block(stmts, False)
    return analysis.tainted
