"""Which values of specialized code depend on the mapped inputs of ``vmap`` (for ``out_axes=None``).

JAX refuses ``out_axes=None`` for an output that is batched. numbax decides it
on the code just specialized for the first example: a forward taint analysis
from the variables that hold mapped leaves, through assignments, control
dependence (a value assigned under a branch or loop whose condition is
tainted), the helpers that the code calls (analysed with their own tainted
parameters, results per returned leaf) and the arrays written in place. It
never mutates the tree.

    >>> import gast
    >>> body = gast.parse("a = x * 2\\nb = y + 1\\nif a > 0:\\n    c = y\\nelse:\\n    c = b").body
    >>> sorted(tainted_after(body, {"x"}, {}))
    ['a', 'c', 'x']
"""
from __future__ import annotations

from typing import Dict, List, Set, Tuple

import gast


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

    def __init__(self, helpers: Dict[str, gast.FunctionDef], tainted: Set[str], memo: Dict[tuple, tuple]):
        self.helpers = helpers
        self.memo = memo  # (helper, tainted parameters) -> function_taint's answer
        self.tainted = tainted
        self.returns: List[List[bool]] = []
        self.diverged = False  # left a block under a tainted condition: what follows depends on it

    # -- expressions -------------------------------------------------------------

    def _call_results(self, call: gast.Call) -> Tuple[List[bool], bool]:
        """Per result of a helper call, whether it is tainted; and whether the call is of a helper."""
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name) and call.func.id in self.helpers):
            return [], False
        flags = tuple(self.is_tainted(a) for a in call.args)
        key = (call.func.id, flags)
        if key not in self.memo:
            self.memo[key] = function_taint(self.helpers[call.func.id], list(flags), self.helpers, self.memo)
        results, params = self.memo[key]
        for arg, written in zip(call.args, params):  # an array argument the helper writes a tainted value into
            if written and isinstance(arg, gast.Name):
                self.tainted.add(arg.id)
        return results, True

    def is_tainted(self, expr: gast.AST) -> bool:
        """Whether ``expr`` may depend on a tainted variable."""
        if self.diverged or _reads(expr) & self.tainted:
            return True
        return any(any(self._call_results(n)[0]) for n in gast.walk(expr) if isinstance(n, gast.Call))

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
            for elt, flag in zip(target.elts, results):
                if flag or control:
                    self.tainted.update(_stored_names(elt))
            return
        subscript_reads = [self.is_tainted(t.slice) for t in stmt.targets if isinstance(t, gast.Subscript)]
        if control or any(results) or self.is_tainted(stmt.value) or any(subscript_reads):
            for t in stmt.targets:
                self.tainted.update(_stored_names(t))

    def loop(self, stmt, control: bool) -> None:
        """A loop's body until nothing more is tainted (values flow around the back edge)."""
        head = stmt.iter if isinstance(stmt, gast.For) else stmt.test
        while True:
            before = (len(self.tainted), self.diverged)
            inner = control or self.is_tainted(head)
            if isinstance(stmt, gast.For) and inner:
                self.tainted.update(_stored_names(stmt.target))
            self.block(stmt.body, inner)
            if (len(self.tainted), self.diverged) == before:
                return

    def returned(self, value, control: bool) -> List[bool]:
        elts = value.elts if isinstance(value, gast.Tuple) else [] if value is None else [value]
        results, is_helper = self._call_results(value) if value is not None else ([], False)
        if is_helper:
            return [flag or control for flag in results]
        return [control or self.is_tainted(e) for e in elts]


def function_taint(fdef: gast.FunctionDef, params: List[bool], helpers: Dict[str, gast.FunctionDef],
                   memo: Dict[tuple, tuple]) -> Tuple[List[bool], List[bool]]:
    """For a helper called with ``params`` tainted as given: which of its results are tainted, and which
    parameters it writes tainted values into."""
    names = [a.id for a in fdef.args.args]
    analysis = _Analysis(helpers, {n for n, flag in zip(names, params) if flag}, memo)
    analysis.block(fdef.body, False)
    width = max((len(r) for r in analysis.returns), default=0)
    results = [any(r[k] for r in analysis.returns if k < len(r)) for k in range(width)]
    return results, [n in analysis.tainted for n in names]


def tainted_after(stmts: List[gast.stmt], tainted: Set[str], helpers: Dict[str, gast.FunctionDef]) -> Set[str]:
    """The variables that may depend on ``tainted`` after ``stmts`` run (``tainted`` included)."""
    analysis = _Analysis(helpers, set(tainted), {})
    analysis.block(stmts, False)
    return analysis.tainted
