"""first_example: ``vmap``'s first example folded into its loop, so that the body is compiled once.

``vmap`` computes its first example before the loop over the others to learn the outputs' shapes and dtypes
(``loop``); Numba then compiles the body twice, which doubles what LLVM optimizes (a Jacobian's sweep, whose
body is a whole derivative). Where the loop's outputs are sized by that example alone (``vectorize``'s
``peeled``), the loop runs from the first example and sizes them on its first iteration::

    first = x[0] * 2.0                         for i in range(0, batch):
    out = rt.stack_buffer(first, batch)            value = x[i] * 2.0
    out[0] = first                       ->        if i == 0:
    for i in range(1, batch):                          out = rt.stack_buffer(value, batch)
        value = x[i] * 2.0                         rt.check_row(out, value, 'f.py:2:4')
        rt.check_row(out, value, 'f.py:2:4')       out[i] = value
        out[i] = value

and ``optimize`` then drops what of the first example nothing else reads (its run-time checks stay: the loop
made them again for the first example, but a check hoisted out of the loop may rely on them). A ``vmap`` has at
least one example (``rt.batch_size``), so the outputs are made before the loop ends. Runs after ``vectorize``,
which makes its first block of rows in place of the first example, and after the last transformation: Numba
compiles a name assigned in a branch, but the transformations read the first example's form (``row_checks``
proves nothing from an output sized in the loop, ``batch_loops.on_first_iteration``). Reports whether it changed
anything.

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
    >>> print(unparse(transform(fdef)[0]))
    def f(x, batch):
        first = x[0] * 2.0
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
from numbax.ast_passes.analyses import batch_loops
from numbax.ast_passes.analyses.nodes import base
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.usage import count_in
from numbax.ast_passes.tree_copy import copy_tree

_SIZED = "if {index} == 0:\n    {out} = rt.stack_buffer({value}, LENGTH)"


def _mentions(stmt: gast.stmt, array: str) -> bool:
    return any(isinstance(n, gast.Name) and n.id == array for n in gast.walk(stmt))


def _store(body: List[gast.stmt], array: str, index: str) -> Optional[gast.Assign]:
    """The loop's one ``array[index] = value`` (``value`` a name), at the top of its body; else None."""
    stores = [stmt for stmt in body if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
              and isinstance(stmt.targets[0], gast.Subscript) and base(stmt.targets[0]) == array]
    if len(stores) != 1 or sum(_mentions(stmt, array) for stmt in body) > 2:
        return None
    store = stores[0]
    target = store.targets[0]
    if not (isinstance(target.value, gast.Name) and isinstance(target.slice, gast.Name)
            and target.slice.id == index and isinstance(store.value, gast.Name)):
        return None
    return store


def _sizing(loop: gast.For, array: str, allocation: gast.Assign) -> Optional[Tuple[int, gast.If]]:
    """Where in ``loop``'s body ``array`` is sized on the first iteration (before the first statement that
    reads it, after the value stored into it is made), and the branch that sizes it; None where that cannot
    be placed."""
    index = loop.target.id
    store = _store(loop.body, array, index)
    if store is None:
        return None
    value = store.value.id
    at = next(k for k, stmt in enumerate(loop.body) if _mentions(stmt, array))
    if count_in(loop.body[at:])[0][value]:
        return None  # the value is (also) made after the first read of the output
    branch = gast.parse(_SIZED.format(index=index, out=array, value=value)).body[0]
    branch.body[0].value.args[1] = copy_tree(application(allocation.value).args[1])
    for node in (branch, branch.body[0]):
        gast.copy_location(node, allocation)
        anno.copyanno(allocation, node)
    return at, branch


def _fold(loop: gast.For, before: List[gast.stmt]) -> bool:
    """Fold the first example that ``before`` computes for ``loop`` into it; whether it could."""
    bounds = batch_loops.bounds(loop)
    if bounds is None or loop.orelse:
        return False
    stores, _ = count_in(loop.body)
    assigned = {n for n, c in stores.items() if c}
    outputs = {base(n) for n in gast.walk(gast.Module(body=loop.body, type_ignores=[]))
               if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)} - assigned
    found: Optional[Dict[str, Tuple[gast.Assign, gast.Assign]]] = batch_loops.peeled(before, bounds[0], outputs)
    if found is None or batch_loops.carried(loop.body, assigned, set()):
        return False
    sizings = [_sizing(loop, array, allocation) for array, (allocation, _) in sorted(found.items())]
    if any(sizing is None for sizing in sizings):
        return False
    for at, branch in sorted(sizings, key=lambda sizing: -sizing[0]):  # later positions first: indices hold
        loop.body.insert(at, branch)
    doomed = [stmt for pair in found.values() for stmt in pair]
    before[:] = [stmt for stmt in before if all(stmt is not s for s in doomed)]
    loop.iter.args[0] = gast.Constant(value=0, kind=None)
    return True


def _block(stmts: List[gast.stmt]) -> Tuple[List[gast.stmt], bool]:
    out: List[gast.stmt] = []
    changed = False
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                new, did = _block(inner)
                setattr(stmt, field, new)
                changed |= did
        if isinstance(stmt, gast.For) and anno.getanno(stmt, anno.Key.BATCH_LOOP, False):
            changed |= _fold(stmt, out)
        out.append(stmt)
    return out, changed


def transform(fdef: gast.FunctionDef) -> Tuple[gast.FunctionDef, bool]:
    """Fold the first examples of ``fdef``'s ``vmap`` loops into them; ``(fdef, changed)``."""
    fdef.body, changed = _block(fdef.body)
    return fdef, changed
