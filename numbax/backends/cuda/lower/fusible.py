"""fusible: which assignments of a block the GPU lowering may fold into the one statement that reads them.

An analysis: it reads a block and changes nothing. ``t = <expr>`` is fusible into statement ``j`` when ``t``
is read nowhere but there (run-time checks of its shape aside: they get its shape), ``j`` is an
assignment or a ``return`` later in the same block, and between the two only assignments of other names and checks run,
none of them assigning a name ``<expr>`` reads, itself or through the names folded into it, and none storing into
an array (which may be one ``<expr>`` reads, or a view of one). Then the kernel of
``j`` computes ``<expr>`` itself, once per element: a run of elementwise statements over one shape becomes one
kernel. Forward mode writes such runs: in ``dt2 = dx * np.cos(x)``, ``dt3 = dt2 * 0.1``, ``x = ...``,
``dx = dt1 + dt3``, folding ``dt3`` (and ``dt2`` in it) into ``dx``'s kernel would read the new ``x``.
"""
from __future__ import annotations

import collections
from typing import Counter, Dict, List, Set

import gast


def _reads(node: gast.AST) -> Counter:
    return collections.Counter(n.id for n in gast.walk(node) if isinstance(n, gast.Name)
                               and isinstance(n.ctx, gast.Load))


def _is_check(stmt: gast.stmt) -> bool:
    call = stmt.value if isinstance(stmt, gast.Expr) else None
    return isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and \
        isinstance(call.func.value, gast.Name) and call.func.value.id == "rt" and call.func.attr.startswith("check_")


def reads_outside_checks(fdef: gast.FunctionDef) -> Counter:
    """How often each name is read in ``fdef``, run-time checks left out."""
    counts: Counter = collections.Counter()
    for node in gast.walk(fdef):
        if isinstance(node, gast.stmt) and not isinstance(node, (gast.If, gast.While, gast.For, gast.FunctionDef)):
            if not _is_check(node):
                counts.update(_reads(node))
        elif isinstance(node, (gast.If, gast.While)):
            counts.update(_reads(node.test))
        elif isinstance(node, gast.For):
            counts.update(_reads(node.iter))
    return counts


def _assigned(stmt: gast.stmt) -> Set[str]:
    return {t.id for t in getattr(stmt, "targets", [getattr(stmt, "target", None)]) if isinstance(t, gast.Name)}


def fusible(block: List[gast.stmt], reads: Counter) -> Set[int]:
    """The indices of the assignments in ``block`` that may be folded into their reader (see above)."""
    found = set()
    folded: Dict[str, Set[str]] = {}  # a name folded -> the names its expression reads, through those folded in it
    for i, stmt in enumerate(block):
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            for assigned in _assigned(stmt):
                folded.pop(assigned, None)
            continue
        name = stmt.targets[0].id
        needs = {name}.union(*(folded.get(read, {read}) for read in _reads(stmt.value)))
        folded.pop(name, None)
        if not reads[name]:
            continue
        for later in block[i + 1:]:
            if _is_check(later):
                continue
            if not (isinstance(later, gast.Assign) and len(later.targets) == 1
                    or isinstance(later, gast.Return) and later.value is not None):
                break
            if name in _reads(later.value):
                if _reads(later.value)[name] == reads[name] and not any(
                        isinstance(n, (gast.Attribute, gast.Subscript)) and isinstance(n.value, gast.Name) and
                        n.value.id == name for n in gast.walk(later.value)):  # x.shape, x[i] of a folded x: none
                    found.add(i)
                    folded[name] = needs
                break
            if _assigned(later) & needs or _stores_into_an_array(later):
                break
    return found


def _stores_into_an_array(stmt: gast.stmt) -> bool:
    """Whether ``stmt`` writes into an array (``z[0] = v``): perhaps one a folded expression reads, or a view of
    it, so nothing is folded past it."""
    targets = [t for target in getattr(stmt, "targets", []) for t in (target.elts if isinstance(target, gast.Tuple)
                                                                    else [target])]
    return any(not isinstance(t, gast.Name) for t in targets)
