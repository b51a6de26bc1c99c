"""small_arrays: which arrays of a function are small with a length the code shows, for ``scalarize``.

An analysis of the canonical function: the 1-D float arrays assigned only by ``name = value`` whose memory
nothing else writes into (``candidates``), and, of them, those whose every definition gives an array of one
known length (a stack of numbers, elementwise ``+ - * /`` of such arrays and numbers, ``rt.zeros_like``,
``rt.unbroadcast``, a copy, an item of a list tape of one length), or, before a loop that carries it, an array
of a length checked at run time (``SmallArrays.solve``). The rules and their reasons are ``scalarize``'s.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses import aliasing
from numbax.ast_passes.analyses.avals import expr_aval, tape_of
from numbax.ast_passes.analyses.nodes import literal
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.optimizations.purity import is_check, is_pure
from numbax.ast_passes.tree_copy import walk

MAX_LENGTH = 8  # longer arrays stay arrays: their loops vectorize, and numbers would crowd the registers
_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.Div)
_SIGNS = (gast.USub, gast.UAdd)


def constant_int(node: gast.expr) -> Optional[int]:
    """The value of an integer literal (``2``, ``-1``), else None."""
    value = literal(node)
    return value if type(value) is int else None


def called(node: gast.expr) -> Optional[str]:
    """The readable name of the primitive a call applies (``rt.stack``, ``np.zeros``), else None."""
    app = application(node) if isinstance(node, gast.Call) else None
    return app.name if app is not None else None


def _counted_or_while(loop: gast.stmt) -> bool:
    """``for i in range(...)`` or ``while ...``: a loop whose carried arrays scalarizing may check before it."""
    if isinstance(loop, gast.While):
        return True
    return isinstance(loop, gast.For) and isinstance(loop.target, gast.Name) and isinstance(loop.iter, gast.Call) \
        and isinstance(loop.iter.func, gast.Name) and loop.iter.func.id == "range" and not loop.iter.keywords


def as_read(target: gast.Subscript) -> gast.Subscript:
    """The store target ``x[c]`` as a read of the element."""
    return gast.Subscript(value=target.value, slice=target.slice, ctx=gast.Load())


def element_store(stmt: gast.stmt) -> Optional[str]:
    """``x`` for ``x[c] = v`` or ``x[c] += v`` at a constant ``c``, else None."""
    target = stmt.target if isinstance(stmt, gast.AugAssign) else \
        stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 else None
    if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and \
            constant_int(target.slice) is not None:
        return target.value.id
    return None


def _after_new_memory(block: list, index: int, var: str) -> bool:
    """Whether the element store ``block[index]`` into ``var`` writes into memory that ``var``'s definition
    before it in ``block`` made new (no other name's, no list's item), which no statement since has read but
    for elements at constant indices (nothing can have become a view of it)."""
    for stmt in reversed(block[:index]):
        if element_store(stmt) == var:
            continue
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and stmt.targets[0].id == var:
            return not aliasing.sources(stmt.value) and not tape_of(stmt.value, "pop")
        elements = {id(n.value) for n in walk(stmt) if isinstance(n, gast.Subscript) and
                    isinstance(n.value, gast.Name) and constant_int(n.slice) is not None and
                    isinstance(n.ctx, gast.Load)}
        named = [n for n in walk(stmt) if isinstance(n, gast.Name) and n.id == var]
        if named and (isinstance(stmt, (gast.For, gast.While, gast.If)) or any(id(n) not in elements for n in named)):
            return False
    return False


def reads_array(node: gast.AST, var: str, length: Dict[str, int]) -> bool:
    """Whether ``node`` reads ``var`` (of the ``length`` given) other than its elements at constant indices."""
    elements = {id(n.value) for n in walk(node) if isinstance(n, gast.Subscript) and
                SmallArrays.element(n, length) is not None}
    return any(isinstance(n, gast.Name) and n.id == var and isinstance(n.ctx, gast.Load) and id(n) not in elements
               for n in walk(node))


class SmallArrays:
    """Which names to scalarize, their lengths, and the loops whose carried arrays are checked first."""

    def __init__(self, fdef: gast.FunctionDef, kinds: Dict[str, tuple]):
        self.kinds = kinds
        self.defs: Dict[str, List[gast.Assign]] = {}
        self.place: Dict[int, Tuple[list, int]] = {}  # id(statement) -> (its block, its index)
        self.whiles = [n for n in walk(fdef) if isinstance(n, gast.While)]
        self.appended: Dict[str, List[gast.expr]] = {}  # a list tape -> what is appended to it
        self.stores: Dict[int, gast.stmt] = {}  # ``x[c] += v`` into memory ``x``'s definition just made, by id
        self._blocks(fdef.body)
        self._tapes(fdef)
        self.rows = self._rows()
        self.masked: Dict[int, Set[str]] = {}  # id(statement) -> names that statement reads unchecked
        self.lengths: Dict[str, int] = {}
        self.entries: Dict[int, List[Tuple[str, int]]] = {}  # id(loop) -> (name, length) checked before it
        self.kept: Set[int] = set()  # ids of the definitions that stay (checked before a loop)

    def _blocks(self, block: list) -> None:
        for index, stmt in enumerate(block):
            self.place[id(stmt)] = (block, index)
            stored = element_store(stmt)
            if stored is not None and _after_new_memory(block, index, stored):
                self.stores[id(stmt)] = stmt
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
                self.defs.setdefault(stmt.targets[0].id, []).append(stmt)
            for field in ("body", "orelse"):
                if isinstance(getattr(stmt, field, None), list):
                    self._blocks(getattr(stmt, field))

    def _rows(self) -> Dict[str, int]:
        """``{"t5": 2}`` for ``t5 = t5_rows[i]`` (its only definition) of ``t5_rows = np.empty((n, 2))`` (the
        table's), a number ``i``: the row's length."""
        widths = {}
        for table, ds in self.defs.items():
            value = ds[0].value
            if len(ds) == 1 and called(value) in ("np.empty", "np.zeros") and len(value.args) == 1 and \
                    isinstance(value.args[0], gast.Tuple) and len(value.args[0].elts) == 2:
                width = constant_int(value.args[0].elts[1])
                if width is not None and width >= 1:
                    widths[table] = width
        rows = {}
        for var, ds in self.defs.items():
            value = ds[0].value
            if len(ds) == 1 and isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and \
                    value.value.id in widths and isinstance(value.slice, gast.Name) and \
                    self.kinds.get(value.slice.id) == ("i", 0):
                rows[var] = widths[value.value.id]
        return rows

    def _tapes(self, fdef: gast.FunctionDef) -> None:
        """The lists assigned once, empty, that the code only appends to and pops from (reverse mode's tapes)."""
        lists = {d[0].targets[0].id for d in self.defs.values() if len(d) == 1 and isinstance(d[0].value, gast.List)
                 and not d[0].value.elts}
        uses: Dict[str, int] = {}
        for node in walk(fdef):
            if isinstance(node, gast.Name) and node.id in lists and isinstance(node.ctx, gast.Load):
                uses[node.id] = uses.get(node.id, 0) + 1
        for node in walk(fdef):
            if tape_of(node, "append") in lists:
                self.appended.setdefault(tape_of(node, "append"), []).append(node.args[0])
                uses[tape_of(node, "append")] -= 1
            elif tape_of(node, "pop") in lists:
                uses[tape_of(node, "pop")] -= 1
        for tape, left in uses.items():
            if left:  # read another way: its items' lengths are not only what is appended
                self.appended.pop(tape, None)

    def scalar_kind(self, node: gast.expr, active: Dict[str, int]) -> Optional[str]:
        """``"f"`` or ``"i"`` for an expression of numbers that scalarizing may repeat (names, constants,
        elements read at an index, arithmetic of them), else None."""
        if isinstance(node, gast.Constant):
            return {float: "f", int: "i"}.get(type(node.value))
        if isinstance(node, gast.Name):
            kind = self.kinds.get(node.id)
            return kind[0] if kind in (("f", 0), ("i", 0)) and node.id not in active else None
        if self.element(node, active) is not None:
            return "f"
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and node.value.id not in active \
                and isinstance(node.slice, (gast.Constant, gast.Name)):  # ``p[2]``: a number of another array
            kind = expr_aval(node, self.kinds)
            return kind[0] if kind in (("f", 0), ("i", 0)) else None
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, _SIGNS):
            return self.scalar_kind(node.operand, active)
        if isinstance(node, gast.BinOp) and isinstance(node.op, _OPERATORS):
            kinds = {self.scalar_kind(node.left, active), self.scalar_kind(node.right, active)}
            if None in kinds:
                return None
            return "f" if "f" in kinds or isinstance(node.op, gast.Div) else "i"
        return None

    @staticmethod
    def element(node: gast.expr, active: Dict[str, int]) -> Optional[Tuple[str, int]]:
        """``(x, j)`` for ``x[c]`` of a scalarized ``x`` at a constant ``c`` inside it (``j``: ``c`` from
        the front), else None."""
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and node.value.id in active \
                and isinstance(node.ctx, gast.Load):
            index = constant_int(node.slice)
            length = active[node.value.id]
            if index is not None and -length <= index < length:
                return node.value.id, index % length
        return None

    def length(self, node: gast.expr, active: Dict[str, int], assumed: Set[str] = frozenset()) -> Optional[int]:
        """The length of the array ``node`` computes from scalarized arrays and numbers, 0 for a number,
        None where it is neither; -1 where it reads only ``assumed`` names (of a length not yet known, taken
        to be that of the other operands)."""
        if isinstance(node, gast.Name) and node.id in active:
            return active[node.id]
        if isinstance(node, gast.Name) and node.id in assumed:
            return -1
        if self.scalar_kind(node, active) is not None:
            return 0
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, _SIGNS):
            return self.length(node.operand, active, assumed)
        if isinstance(node, gast.BinOp) and isinstance(node.op, _OPERATORS):
            sides = {self.length(node.left, active, assumed), self.length(node.right, active, assumed)}
            if None in sides or len(sides - {0, -1}) > 1:
                return None
            return max(sides)
        items = self.stacked(node)
        if items is not None and all(self.scalar_kind(i, active) == "f" for i in items):
            return len(items)
        callee = called(node)
        if callee in ("rt.zeros_like", "np.zeros_like") and len(node.args) == 1 and not node.keywords:
            found = self.shape_length(node.args[0], active, assumed)
            return found if found != 0 else None
        if callee in ("rt.copy_of", "np.copy") and len(node.args) == 1 and not node.keywords:
            found = self.length(node.args[0], active, assumed)
            return found if found != 0 else None
        if callee == "rt.unbroadcast" and len(node.args) == 2 and not node.keywords:  # ``g`` itself, of ``x``'s length
            sides = {self.length(node.args[0], active, assumed), self.shape_length(node.args[1], active, assumed)}
            return max(sides) if None not in sides and 0 not in sides and len(sides - {-1}) <= 1 else None
        tape = tape_of(node, "pop")
        if tape in self.appended:  # what was appended: arrays of one length
            lengths = {self.length(x, active, assumed) for x in self.appended[tape]}
            return max(lengths) if None not in lengths and 0 not in lengths and len(lengths - {-1}) <= 1 else None
        return None

    def shape_length(self, node: gast.expr, active: Dict[str, int], assumed: Set[str]) -> Optional[int]:
        """``length``, or, for an array read only for its shape, the length of a row of a table of a constant
        width (``t5 = t5_rows[row]`` of ``t5_rows = np.empty((n, 2))``, reverse mode's), which stays an array."""
        if isinstance(node, gast.Name) and node.id in self.rows:
            return self.rows[node.id]
        return self.length(node, active, assumed)

    @staticmethod
    def stacked(node: gast.expr) -> Optional[list]:
        """The numbers of ``np.stack((a, b))`` (along axis 0) or ``np.array([a, b])``, else None."""
        callee = called(node)
        if callee not in ("np.stack", "rt.stack", "np.array") or not node.args:
            return None
        axis = node.args[1:] + [k.value for k in node.keywords if k.arg == "axis"]
        if callee == "np.array" and (axis or node.keywords) or len(axis) > 1 or \
                any(k.arg != "axis" for k in node.keywords) or axis and constant_int(axis[0]) != 0:
            return None
        items = node.args[0]
        if not isinstance(items, (gast.Tuple, gast.List)) or not 2 <= len(items.elts) <= MAX_LENGTH:
            return None
        return items.elts

    def active(self, stmt: gast.stmt, lengths: Dict[str, int]) -> Dict[str, int]:
        masked = self.masked.get(id(stmt), ())
        return {n: k for n, k in lengths.items() if n not in masked} if masked else lengths

    def _carried_entry(self, stmt: gast.Assign, target: str) -> Optional[gast.For]:
        """The loop after ``stmt`` (``target = e`` of an unknown length) that carries ``target``: in the same
        block, over a range or while a test holds, assigning ``target`` in its body, with only simple
        statements between that do not assign it; None where there is none."""
        block, index = self.place[id(stmt)]
        for later in block[index + 1:]:
            if isinstance(later, (gast.For, gast.While)):
                carries = any(isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and
                              s.targets[0].id == target for s in later.body)
                has_origin = anno.getanno(later, anno.Key.ORIGIN) is not None
                return later if _counted_or_while(later) and carries and has_origin else None
            if not isinstance(later, (gast.Assign, gast.Expr)) or any(
                    isinstance(n, gast.Name) and n.id == target and isinstance(n.ctx, gast.Store)
                    for n in walk(later)):
                return None
        return None

    def solve(self, candidates: Set[str]) -> bool:
        """Settle the names to scalarize (a subset of ``candidates``) and their lengths; False if none."""
        for _ in range(10):
            lengths: Dict[str, int] = {}
            changed = True
            while changed:
                changed = False
                for var in sorted(candidates - set(lengths)):
                    assumed = candidates - set(lengths)
                    found = {self.length(d.value, self.active(d, lengths), assumed)
                             for d in self.defs[var]} - {None, -1}
                    if len(found) == 1 and 1 <= min(found) <= MAX_LENGTH:
                        lengths[var] = found.pop()
                        changed = True
            bad = candidates - set(lengths)
            entries: Dict[int, List[Tuple[str, int]]] = {}
            masked: Dict[int, Set[str]] = {}
            kept: Set[int] = set()
            for var, k in sorted(lengths.items()):
                for d in self.defs[var]:
                    if self.length(d.value, self.active(d, lengths)) == k:
                        continue
                    loop = self._carried_entry(d, var)
                    if loop is None:
                        bad.add(var)
                        break
                    kept.add(id(d))
                    entries.setdefault(id(loop), []).append((var, k))
                    block, index = self.place[id(d)]
                    for later in block[index + 1:block.index(loop)]:
                        masked.setdefault(id(later), set()).add(var)
            for stmt in self.stores.values():  # ``x[c] += v``: an element in range, and a number
                var = element_store(stmt)
                target = as_read(stmt.target if isinstance(stmt, gast.AugAssign) else stmt.targets[0])
                if var in lengths and (self.element(target, {var: lengths[var]}) is None or
                                       self.scalar_kind(stmt.value, {var: lengths[var]}) is None or
                                       isinstance(stmt, gast.AugAssign) and not isinstance(stmt.op, _OPERATORS)):
                    bad.add(var)
            for loop in self.whiles:  # evaluated again each iteration: nothing may be stacked for it
                bad |= {var for var in lengths if reads_array(loop.test, var, {var: lengths[var]})}
            if not bad and masked == self.masked:
                self.lengths, self.entries, self.kept = lengths, entries, kept
                return bool(lengths)
            candidates = candidates - bad
            self.masked = masked
        return False


def candidates(fdef: gast.FunctionDef, analysis: SmallArrays) -> Set[str]:
    """Float arrays of one dimension, assigned only by ``name = value``, whose memory nothing writes into:
    no store, ``+=``, method or call that may change its arguments, through the name or any name that may
    share its memory, either way (a view of it or what it is a view of, a list it was appended to, an item
    popped from that list): ``aliasing.linked`` over those links."""
    stores: Dict[str, int] = {}
    for node in walk(fdef):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
    params = {a.id for a in fdef.args.args}
    out = {v for v, ds in analysis.defs.items() if analysis.kinds.get(v) == ("f", 1) and v not in params
           and len(ds) == stores.get(v, 0) and not any(anno.hasanno(d, anno.Key.IN_PLACE) for d in ds)}
    written: Set[str] = set()
    may_be: Dict[str, Set[str]] = {}  # name -> the names whose memory it may be (a list: what it holds)
    for node in walk(fdef):
        if isinstance(node, (gast.FunctionDef, gast.Lambda)) and node is not fdef:
            return set()
        if id(node) in analysis.stores:
            continue  # ``x[c] += v`` into the array just made for ``x``: its numbers are updated instead
        if isinstance(node, gast.AugAssign):  # ``x += y`` of an array writes into ``x``
            written |= {n.id for n in walk(node.target) if isinstance(n, gast.Name)}
        if isinstance(node, gast.Assign):
            for target in node.targets:
                if isinstance(target, gast.Name):
                    popped = tape_of(node.value, "pop")
                    may_be.setdefault(target.id, set()).update(aliasing.sources(node.value) | ({popped} - {None}))
                else:
                    written |= {n.id for n in walk(target) if isinstance(n, gast.Name)}
        elif isinstance(node, gast.Call) and not is_pure(node) and not is_check(node):
            given = {n.id for a in node.args + [k.value for k in node.keywords] for n in walk(a)
                     if isinstance(n, gast.Name)}
            method = node.func.attr if isinstance(node.func, gast.Attribute) else None
            if method == "append" and isinstance(node.func.value, gast.Name):
                may_be.setdefault(node.func.value.id, set()).update(given)  # the list holds them
            elif method != "save_row":  # (which copies its row in)
                written |= given
            if method is not None and method not in ("append", "pop", "save_row"):  # ``x.fill(0.0)``
                written |= {n.id for n in walk(node.func.value) if isinstance(n, gast.Name)}
    links: Dict[str, Set[str]] = {}  # both ways: a write through either name changes what the other reads
    for name, sources in may_be.items():
        for other in sources:
            links.setdefault(name, set()).add(other)
            links.setdefault(other, set()).add(name)
    return out - aliasing.linked(written, links)

