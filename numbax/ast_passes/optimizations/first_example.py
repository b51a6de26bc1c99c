"""first_example: ``vmap``'s first example folded into its loop, so that the body is compiled once.

``vmap`` computes its first example before the loop over the others to learn the outputs' shapes and dtypes
(``loop``); Numba then compiles the body twice, which doubles what LLVM optimizes (a Jacobian's sweep, whose
body is a whole derivative). Where the loop's outputs are sized by that example alone (``batch_loops.peeled``),
the loop runs from the first example and sizes them on its first iteration::

    first = x[0] * 2.0                         for i in range(0, batch):
    out = rt.stack_buffer(first, batch)            value = x[i] * 2.0
    out[0] = first                       ->        if i == 0:
    for i in range(1, batch):                          out = rt.stack_buffer(value, batch)
        value = x[i] * 2.0                         rt.check_row(out, value, 'f.py:2:4')
        rt.check_row(out, value, 'f.py:2:4')       out[i] = value
        out[i] = value

The first example's code goes where nothing it does is lost (``analyses.first_example_code``): what it
computes that nothing else reads, with the run-time checks the loop makes again for that example, never a
check that guards code that stays. A ``vmap`` has at least one example (``rt.batch_size``), and a loop whose
iteration may end early (``_leaves_early``) is left as it is, so the outputs are made before the loop ends.
Runs after ``vectorize``, which makes its first block of rows in place of the first example, and after the
last transformation: Numba compiles a name assigned in a branch, but the transformations read the first
example's form (``row_checks`` proves nothing from an output sized in the loop,
``batch_loops.on_first_iteration``). Reports whether it changed anything.

    >>> import gast
    >>> from numbax.ast_passes import anno
    >>> from numbax.ast_passes.unparse import unparse
    >>> src = '''def f(x, batch):
    ...     first = x[0] * 2.0
    ...     out = rt.stack_buffer(first, batch)
    ...     out[0] = first
    ...     for i in range(1, batch):
    ...         value = x[i] * 2.0
    ...         out[i] = value
    ...     return out'''
    >>> fdef = gast.parse(src).body[0]
    >>> anno.setanno(fdef.body[3], anno.Key.BATCH_LOOP, True)
    >>> print(unparse(transform(fdef, {"x": ("f", 2), "batch": ("i", 0)})[0]))
    def f(x, batch):
        for i in range(0, batch):
            value = x[i] * 2.0
            if i == 0:
                out = rt.stack_buffer(value, batch)
            out[i] = value
        return out
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses import avals as avals_analysis
from numbax.ast_passes.analyses import batch_loops, first_example_code
from numbax.ast_passes.analyses.nodes import assign, base
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.usage import count_in, count_names
from numbax.ast_passes.optimizations.dead_code import remove_where
from numbax.ast_passes.naming import Namer
from numbax.ast_passes.tree_copy import copy_tree
from numbax.primitives.kinds import Aval

_SIZED = "if {index} == 0:\n    {out} = rt.stack_buffer({value}, LENGTH)"


def _mentions(stmt: gast.stmt, array: str) -> bool:
    return any(isinstance(n, gast.Name) and n.id == array for n in gast.walk(stmt))


def _store(body: List[gast.stmt], array: str, index: str) -> Optional[gast.Assign]:
    """The loop's one ``array[index] = value``, at the top of its body; else None."""
    stores = [stmt for stmt in body if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
              and isinstance(stmt.targets[0], gast.Subscript) and base(stmt.targets[0]) == array]
    if len(stores) != 1 or sum(_mentions(stmt, array) for stmt in body) > 2:
        return None
    target = stores[0].targets[0]
    if not (isinstance(target.value, gast.Name) and isinstance(target.slice, gast.Name)
            and target.slice.id == index):
        return None
    return stores[0]


def _place(loop: gast.For, array: str) -> Optional[int]:
    """Where in ``loop``'s body ``array`` can be sized on the first iteration: before the first statement that
    reads it, where the value stored into it is made already (or is made there, by the store itself); else
    None."""
    store = _store(loop.body, array, loop.target.id)
    if store is None:
        return None
    at = next(k for k, stmt in enumerate(loop.body) if _mentions(stmt, array))
    if isinstance(store.value, gast.Name):
        return None if count_in(loop.body[at:])[0][store.value.id] else at
    return at if loop.body[at] is store else None


def _sizing(loop: gast.For, array: str, allocation: gast.Assign, namer: Namer) -> List[gast.stmt]:
    """The statements that size ``array`` on the first iteration, the value stored into it named first where
    it is an expression (the store then reads the name)."""
    store = _store(loop.body, array, loop.target.id)
    named: List[gast.stmt] = []
    if not isinstance(store.value, gast.Name):
        row = namer.new("row")
        named = [gast.copy_location(assign(row, store.value), store)]
        store.value = gast.Name(id=row, ctx=gast.Load(), annotation=None, type_comment=None)
    branch = gast.parse(_SIZED.format(index=loop.target.id, out=array, value=store.value.id)).body[0]
    branch.body[0].value.args[1] = copy_tree(application(allocation.value).args[1])
    for node in (branch, branch.body[0]):
        gast.copy_location(node, allocation)
        anno.copyanno(allocation, node)
    return named + [branch]


def _leaves_early(stmts: List[gast.stmt]) -> bool:
    """Whether an iteration of the loop whose body is ``stmts`` may end before its last statement (``break``,
    ``continue`` or ``return`` outside inner loops), and so before it sizes the outputs."""
    for stmt in stmts:
        if isinstance(stmt, (gast.Break, gast.Continue, gast.Return)):
            return True
        if isinstance(stmt, gast.If) and _leaves_early(stmt.body + stmt.orelse):
            return True
        if isinstance(stmt, (gast.For, gast.While)) and any(isinstance(n, gast.Return) for n in gast.walk(stmt)):
            return True
    return False


def _fold(loop: gast.For, before: List[gast.stmt], namer: Namer, fdef: gast.FunctionDef,
          avals: Dict[str, Aval]) -> bool:
    """Fold the first example that ``before`` computes for ``loop`` into it; whether it could."""
    bounds = batch_loops.bounds(loop)
    if bounds is None or loop.orelse or _leaves_early(loop.body):
        return False
    stores, _ = count_in(loop.body)
    assigned = {n for n, c in stores.items() if c}
    outputs = {base(n) for n in gast.walk(gast.Module(body=loop.body, type_ignores=[]))
               if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)} - assigned
    found: Optional[Dict[str, Tuple[gast.Assign, gast.Assign]]] = batch_loops.peeled(before, bounds[0], outputs)
    if found is None or batch_loops.carried(loop.body, assigned, set()):
        return False
    places = {array: _place(loop, array) for array in found}
    doomed = [stmt for pair in found.values() for stmt in pair]
    first = min(k for k, stmt in enumerate(before) if any(stmt is s for s in doomed))
    last = max(k for k, stmt in enumerate(before) if any(stmt is s for s in doomed))
    start = _examples_start(before[:first], application(doomed[0].value).args[1])
    code = [stmt for stmt in before[start:last + 1] if not any(stmt is s for s in doomed)]
    stores, reads = count_names(fdef)  # (statements earlier folds dropped still counted: more stay)
    reads.subtract(count_in(code + doomed)[1])
    going = first_example_code.dropped(code, before[last + 1:] + [loop], {n for n, c in reads.items() if c > 0},
                                       stores, avals)
    if None in places.values() or going is None:
        return False
    for array in sorted(found, key=lambda a: (-places[a], a)):  # later places first: the earlier ones hold
        loop.body[places[array]:places[array]] = _sizing(loop, array, found[array][0], namer)
    doomed += going
    before[:] = remove_where(before, lambda stmt: any(stmt is s for s in doomed))
    loop.iter.args[0] = gast.Constant(value=0, kind=None)
    return True


def _examples_start(first: List[gast.stmt], length: gast.expr) -> int:
    """Where the first example's code begins among ``first``: after ``batch = rt.batch_size(...)``, the one
    assignment of the outputs' ``length`` (the code before it is the caller's); else at the start."""
    sizing = [k for k, stmt in enumerate(first) if isinstance(length, gast.Name)
              and any(isinstance(n, gast.Name) and n.id == length.id and isinstance(n.ctx, gast.Store)
                      for n in gast.walk(stmt))]
    if len(sizing) != 1 or not isinstance(first[sizing[0]], gast.Assign):
        return 0
    app = application(first[sizing[0]].value) if isinstance(first[sizing[0]].value, gast.Call) else None
    return sizing[0] + 1 if app is not None and app.name == "rt.batch_size" else 0


def _block(stmts: List[gast.stmt], namer: Namer, fdef: gast.FunctionDef, avals: Dict[str, Aval]) \
        -> Tuple[List[gast.stmt], bool]:
    out: List[gast.stmt] = []
    changed = False
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                new, did = _block(inner, namer, fdef, avals)
                setattr(stmt, field, new)
                changed |= did
        if isinstance(stmt, gast.For) and anno.getanno(stmt, anno.Key.BATCH_LOOP, False):
            changed |= _fold(stmt, out, namer, fdef, avals)
        out.append(stmt)
    return out, changed


def transform(fdef: gast.FunctionDef, params: Dict[str, Aval]) -> Tuple[gast.FunctionDef, bool]:
    """Fold the first examples of ``fdef``'s ``vmap`` loops into them, given the abstract values of its
    parameters; ``(fdef, changed)``."""
    namer = Namer(n.id for n in gast.walk(fdef) if isinstance(n, gast.Name))
    fdef.body, changed = _block(fdef.body, namer, fdef, avals_analysis.infer(fdef, params))
    return fdef, changed
