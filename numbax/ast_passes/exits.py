"""exits: ``break``, ``continue``, ``return`` and loop ``else`` as flag variables.

Three places need code that leaves a loop or a function early without the
statement that does it:

- grad's ``canonicalize`` removes every exit (reverse mode replays a
  structured body): each loop with exits gets a ``go`` flag (the loop keeps
  running) and a ``run`` flag (this iteration keeps running);
- ``inline`` turns a helper's ``return`` inside a loop into an assignment, a
  cleared ``live`` flag and a ``break`` (``native`` loops keep their own
  ``break``/``continue``);
- ``specialize`` unrolls a loop over a container, so there is no loop left to
  break out of: ``unrolled_body`` gives that loop's own exits ``go``/``run``
  flags while nested loops stay as written.

What follows a statement that may exit runs under a guard (``if run:``,
``if live:``, or ``if not live: break`` in a native loop). ``loop_else`` lowers
``for``/``while ... else`` to a flag that each ``break`` of the loop clears.
Flags are Python booleans: specialization folds them where the exit is decided
at compile time, and Numba keeps the others in registers.

    >>> import gast
    >>> from numbax.ast_passes.naming import Namer
    >>> from numbax.ast_passes.unparse import unparse
    >>> loop = gast.parse("for w in ws:\\n    if w > 0:\\n        break\\n    s = s + w").body[0]
    >>> flags, body = ExitLowering(Namer(), native=True).unrolled_body(loop)
    >>> print(unparse(gast.Module(body=body, type_ignores=[])))
    if w > 0:
        go = False
    if go:
        s = s + w
"""
from __future__ import annotations

from typing import Callable, List, Optional

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.naming import Namer
from numbax.ast_passes.specialize.materialize import name_node
from numbax.ast_passes.tree_copy import copy_tree

EXITS = (gast.Return, gast.Break, gast.Continue)


def flag(target: str, value, origin: Optional[gast.AST] = None) -> gast.Assign:
    """``target = value`` (a constant, or a name when ``value`` is a string), placed at ``origin``'s line."""
    node = name_node(value) if isinstance(value, str) else gast.Constant(value=value, kind=None)
    stmt = gast.Assign(targets=[name_node(target, gast.Store())], value=node, type_comment=None)
    if origin is not None:
        gast.copy_location(stmt, origin)
        anno.copyanno(origin, stmt)
    return stmt


def has_exit(stmts: List[gast.stmt], kinds) -> bool:
    """Whether ``stmts`` contain one of ``kinds`` outside nested loops (returns: anywhere)."""
    for stmt in stmts:
        if isinstance(stmt, kinds):
            return True
        if isinstance(stmt, gast.If) and (has_exit(stmt.body, kinds) or has_exit(stmt.orelse, kinds)):
            return True
        if isinstance(stmt, (gast.For, gast.While)) and gast.Return in kinds and \
                has_exit(stmt.body, (gast.Return,)):
            return True
    return False


class Loop:
    """A loop being lowered: its ``go`` and ``run`` flags, or None for a loop that keeps its exits."""

    def __init__(self, go: Optional[str] = None, run: Optional[str] = None):
        self.go = go
        self.run = run

    @property
    def native(self) -> bool:
        """Whether the loop keeps its own ``break`` and ``continue``."""
        return self.go is None


class ExitLowering:
    """Rewrites exits into flags; ``live`` and ``on_return`` given, returns too.

    ``on_return(stmt)`` gives the statements that store a ``return``'s value;
    ``native`` keeps nested loops' ``break``/``continue`` (else every loop with
    exits gets flags).
    """

    def __init__(self, namer: Namer, *, native: bool = False, live: Optional[str] = None,
                 on_return: Optional[Callable[[gast.Return], List[gast.stmt]]] = None):
        self.namer = namer
        self.native = native
        self.live = live
        self.on_return = on_return
        self.loops: List[Loop] = []

    def block(self, stmts: List[gast.stmt]) -> List[gast.stmt]:
        """Rewrite exits in ``stmts``; what follows a statement that may exit runs under a guard."""
        out: List[gast.stmt] = []
        for i, stmt in enumerate(stmts):
            exits = self.may_exit(stmt)
            out.extend(self.statement(stmt))
            if isinstance(stmt, EXITS):
                return out
            rest = stmts[i + 1:]
            if exits and (rest or self.loops and self.loops[-1].native):  # a native loop breaks even at its end
                out.extend(self.guard(stmt, self.block(rest)))
                return out
        return out

    def guard(self, origin: gast.stmt, rest: List[gast.stmt]) -> List[gast.stmt]:
        """``rest`` under the innermost guard."""
        loop = self.loops[-1] if self.loops else None
        if loop is not None and loop.native:
            leave = gast.If(test=gast.UnaryOp(op=gast.Not(), operand=name_node(self.live)), body=[gast.Break()],
                            orelse=[])
            return [gast.copy_location(leave, origin)] + rest
        test = loop.run if loop is not None else self.live
        return [gast.If(test=name_node(test), body=rest, orelse=[])]

    def may_exit(self, stmt: gast.stmt) -> bool:
        """Whether control may leave the block at ``stmt`` (so that what follows needs a guard)."""
        if isinstance(stmt, EXITS):
            return True
        if isinstance(stmt, gast.If):
            if self.loops and self.loops[-1].native:
                return False  # a return there leaves the native loop with `break`
            return has_exit([stmt], EXITS if self.loops else (gast.Return,))
        if isinstance(stmt, (gast.For, gast.While)):
            return self.live is not None and has_exit(stmt.body, (gast.Return,))
        return False

    def statement(self, stmt: gast.stmt) -> List[gast.stmt]:
        """One statement with its exits rewritten."""
        if isinstance(stmt, gast.Return):
            return self.lower_return(stmt)
        if isinstance(stmt, (gast.Break, gast.Continue)):
            loop = self.loops[-1]
            if loop.native:
                return [stmt]
            out = [flag(loop.run, False, stmt)]
            if isinstance(stmt, gast.Break) and loop.go != loop.run:
                out.append(flag(loop.go, False, stmt))
            return out
        if isinstance(stmt, gast.If):
            stmt.body, stmt.orelse = self.block(stmt.body), self.block(stmt.orelse)
            return [stmt]
        if isinstance(stmt, (gast.For, gast.While)):
            return self.lower_loop(stmt)
        return [stmt]

    def lower_return(self, stmt: gast.Return) -> List[gast.stmt]:
        """Store the value, clear ``live`` and every enclosing loop's flags (or ``break`` a native loop)."""
        if self.live is None:
            return [stmt]
        out = self.on_return(stmt) + [flag(self.live, False, stmt)]
        for loop in self.loops:
            if not loop.native:
                out += [flag(loop.run, False, stmt), flag(loop.go, False, stmt)]
        if self.loops and self.loops[-1].native:
            out.append(gast.copy_location(gast.Break(), stmt))
        return out

    def lower_loop(self, stmt) -> List[gast.stmt]:
        """A loop whose exits become flags (``while go:``; a ``for`` body under ``if run:``)."""
        kinds = (gast.Break, gast.Continue) + ((gast.Return,) if self.live else ())
        if self.native or not has_exit(stmt.body, kinds):
            self.loops.append(Loop())
            stmt.body = self.block(stmt.body)
            self.loops.pop()
            return [stmt]
        loop = Loop(self.namer.new("go"), self.namer.new("run"))
        self.loops.append(loop)
        body = self.block(stmt.body)
        self.loops.pop()
        pre = [flag(loop.go, True, stmt)]
        if isinstance(stmt, gast.While):
            stmt.test = name_node(loop.go)
            stmt.body = [flag(loop.run, True, stmt)] + body
        else:
            index = self.namer.new(stmt.target.id)
            body = [flag(stmt.target.id, index, stmt)] + body
            stmt.target = name_node(index, gast.Store())
            stmt.body = [flag(loop.run, loop.go, stmt), gast.If(test=name_node(loop.run), body=body, orelse=[])]
        return pre + [stmt]

    def unrolled_body(self, loop: gast.For):
        """A copy of the body of a loop unrolled at compile time, its own exits as flags.

        Returns the ``Loop`` flags and the body. ``run`` is needed only when the
        loop has a ``continue``; otherwise it is ``go``. Each unrolled iteration
        runs ``run = go`` and the body under ``if run:``.
        """
        body = copy_tree(gast.Module(body=loop.body, type_ignores=[])).body
        go = self.namer.new("go")
        flags = Loop(go, self.namer.new("run") if has_exit(body, (gast.Continue,)) else go)
        self.loops.append(flags)
        try:
            return flags, self.block(body)
        finally:
            self.loops.pop()


def _clear_on_break(stmts: List[gast.stmt], name: str) -> List[gast.stmt]:
    """Each ``break`` of this loop (not of nested loops) first sets ``name = False``."""
    out: List[gast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, gast.Break):
            out.append(flag(name, False, stmt))
        elif isinstance(stmt, gast.If):
            stmt.body, stmt.orelse = _clear_on_break(stmt.body, name), _clear_on_break(stmt.orelse, name)
        out.append(stmt)
    return out


def loop_else(loop, namer: Namer) -> List[gast.stmt]:
    """``for``/``while ... else`` as ``no_break = True``, the loop, ``if no_break:`` and the ``else`` block.

    The loop is copied; the user's tree is left as it was.
    """
    loop = copy_tree(loop)
    orelse, loop.orelse = loop.orelse, []
    if not has_exit(loop.body, (gast.Break,)):
        return [loop] + orelse
    name = namer.new("no_break")
    loop.body = _clear_on_break(loop.body, name)
    after = gast.copy_location(gast.If(test=name_node(name), body=orelse, orelse=[]), loop)
    anno.copyanno(loop, after)
    return [flag(name, True, loop), loop, after]
