"""inline: replace each call of a specialized helper by the helper's body.

Expects the output of ``specialize``: helpers first, the main function last,
each helper called only as ``t = helper(...)``, ``t1, t2 = helper(...)`` or
``helper(...)`` statements. Guarantees a module holding only the main function;
helper locals are renamed apart from the caller's names, parameters become
assignments, and returns become assignments to the call's targets, with
``if``/``else`` absorbing the statements that follow an early return. A helper
that returns from inside a loop gets a ``live`` flag instead (``exits``): the
return assigns, clears ``live`` and breaks out; ``if not live: break`` leaves
enclosing loops and ``if live:`` guards what follows them.
"""
from __future__ import annotations

from typing import List, Optional

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.exits import ExitLowering, flag
from numbax.ast_passes.tree_copy import copy_nodes, copy_tree, names, walk
from numbax.ast_passes.naming import Namer


def _has_return(stmt: gast.stmt) -> bool:
    return any(type(n) is gast.Return for n in walk(stmt))


def _returns_from_loop(stmts: List[gast.stmt]) -> bool:
    """Whether a ``return`` sits inside a loop of ``stmts``."""
    return any(_has_return(s) if isinstance(s, (gast.For, gast.While)) else
               isinstance(s, gast.If) and (_returns_from_loop(s.body) or _returns_from_loop(s.orelse))
               for s in stmts)


def _returns(stmts: List[gast.stmt]) -> str:
    """'always', 'never' or 'sometimes': whether a block leaves through ``return``."""
    kind = "never"
    for stmt in stmts:
        if isinstance(stmt, gast.Return):
            return "always"
        if isinstance(stmt, gast.If):
            a, b = _returns(stmt.body), _returns(stmt.orelse)
            if a == b == "always":
                return "always"
            if "never" != a or "never" != b:
                kind = "sometimes"
        elif isinstance(stmt, (gast.For, gast.While)) and _has_return(stmt):
            kind = "sometimes"
    return kind


def _single_exit(stmts: List[gast.stmt], assign) -> List[gast.stmt]:
    """Rewrite ``return v`` as ``assign(v)``, moving statements after an early return into ``else``."""
    out: List[gast.stmt] = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, gast.Return):
            out.extend(assign(stmt))
            return out
        if isinstance(stmt, gast.If) and _returns([stmt]) != "never":
            rest = stmts[i + 1:]
            body = stmt.body if _returns(stmt.body) == "always" else stmt.body + copy_nodes(rest)
            orelse = stmt.orelse if _returns(stmt.orelse) == "always" else stmt.orelse + rest
            stmt.body, stmt.orelse = _single_exit(body, assign), _single_exit(orelse, assign)
            out.append(stmt)
            return out
        out.append(stmt)
    return out


def _drop_final_clear(stmts: List[gast.stmt], live: str) -> None:
    """Remove the ``live = False`` that ends a helper's body: nothing reads it after the last statement."""
    last = stmts[-1] if stmts else None
    if isinstance(last, gast.If):
        _drop_final_clear(last.body, live)
        _drop_final_clear(last.orelse, live)
        last.body = last.body or [gast.Pass()]
    elif isinstance(last, gast.Assign) and isinstance(last.targets[0], gast.Name) and last.targets[0].id == live:
        stmts.pop()


class Inliner:
    """Inlines helpers into their callers, innermost first."""

    def __init__(self, module: gast.Module):
        self.helpers = {f.name: f for f in module.body[:-1]}
        self.main = module.body[-1]
        self.namer = Namer(n.id for n in names(self.main))

    def run(self) -> gast.Module:
        """The module with one function left."""
        self.main.body = self.inline_block(self.main.body)
        return gast.Module(body=[self.main], type_ignores=[])

    def inline_block(self, stmts: List[gast.stmt]) -> List[gast.stmt]:
        """Inline every helper call in a block (and the blocks nested in it)."""
        out: List[gast.stmt] = []
        for stmt in stmts:
            for field in ("body", "orelse"):
                if isinstance(getattr(stmt, field, None), list):
                    setattr(stmt, field, self.inline_block(getattr(stmt, field)))
            call = self._helper_call(stmt)
            if call is None:
                out.append(stmt)
            else:
                out.extend(self.expand(stmt, call))
        return out

    def _helper_call(self, stmt) -> Optional[gast.Call]:
        value = getattr(stmt, "value", None)
        if isinstance(stmt, (gast.Assign, gast.Expr)) and isinstance(value, gast.Call) \
                and isinstance(value.func, gast.Name) and value.func.id in self.helpers:
            return value
        return None

    def expand(self, stmt, call: gast.Call) -> List[gast.stmt]:
        """The helper's body, renamed apart, with parameters bound and returns assigned."""
        helper = copy_tree(self.helpers[call.func.id])
        # the helpers it calls are inlined into it first (their free names are its locals: a value a
        # compile-time object held), taking names apart from its own: were one of theirs one of the
        # helper's, the renaming below would make both one variable. Its own names are free again after.
        own = {n.id for n in names(helper)} - self.namer.used
        self.namer.reserve(own)
        helper.body = self.inline_block(helper.body)
        self.namer.used -= own
        found = list(names(helper))
        # vmap's loops over an axis with collectives name their outputs in an annotation (``collectives``)
        staged = [loop for loop in walk(helper) if isinstance(loop, gast.For) and anno.hasanno(loop, anno.Key.STAGED)]
        local = {a.id for a in helper.args.args} | {n.id for n in found if type(n.ctx) is gast.Store} | \
            {name for loop in staged for name in anno.getanno(loop, anno.Key.STAGED).outputs_named()}
        mapping = {name: self.namer.new(name) for name in sorted(local)}
        for node in found:
            node.id = mapping.get(node.id, node.id)
        for loop in staged:
            anno.setanno(loop, anno.Key.STAGED, anno.getanno(loop, anno.Key.STAGED).renamed(mapping))
        params = [a.id for a in helper.args.args]
        binds = [self._at(stmt, gast.Assign(targets=[gast.Name(id=p, ctx=gast.Store(), annotation=None,
                                                                 type_comment=None)],
                                              value=arg, type_comment=None))
                 for p, arg in zip(params, call.args)]
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None

        def assign(ret: gast.Return) -> List[gast.stmt]:
            if target is None or ret.value is None:
                return []
            return [gast.copy_location(anno.copyanno(ret, gast.Assign(targets=[copy_tree(target)],
                                                                      value=ret.value, type_comment=None)), ret)]

        if _returns_from_loop(helper.body):
            live = self.namer.new("live")
            lowering = ExitLowering(self.namer, native=True, live=live, on_return=assign)
            body = lowering.block(helper.body)
            _drop_final_clear(body, live)
            return binds + [self._at(stmt, flag(live, True))] + body
        return binds + _single_exit(helper.body, assign)

    @staticmethod
    def _at(origin_stmt, stmt):
        gast.copy_location(stmt, origin_stmt)
        anno.copyanno(origin_stmt, stmt)
        return stmt


def transform(module: gast.Module) -> gast.Module:
    """Inline every helper of ``module`` into the main function (the last one)."""
    return Inliner(module).run()
