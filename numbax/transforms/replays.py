"""The arguments of a function that a transformation runs more than once: each run starts from their values.

``jacfwd`` runs the forward mode of the user's function once per input element, ``jacrev`` runs the
function and then its reverse mode (which replays it) once per output element, and a ``vjp`` pullback
replays the function that computed the output. A function that writes into an argument (``y[:, 0] += 0.25``,
``v = y[1:]; v *= 2.0``) moved the point each later run started from: ``jacrev`` of ``inv`` of ``y`` after
``y[0, 0] += 0.25`` was taken at ``y[0, 0] + 0.5`` (a wrong value, found by the extended differential tester).

In compiled code, ``restoring`` writes such an argument back after the run that wrote into it (from a copy
taken before), so the arguments hold after a Jacobian or a ``vjp`` what they held before, as after ``grad``;
outside it, ``copied_arrays`` keeps the values a pullback replays from.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence, Set

import gast
import numpy as np

from numbax import tree_util
from numbax.ast_passes.analyses.aliasing import definitions, linked, view_links
from numbax.ast_passes.optimizations.hoist_invariants import updated_in_place
from numbax.ast_passes.specialize.values import Dyn


def copied_arrays(tree: Any) -> Any:
    """``tree`` with each NumPy array leaf copied (what a later replay reads, whatever the first run wrote)."""
    return tree_util.tree_map(lambda leaf: leaf.copy() if isinstance(leaf, np.ndarray) else leaf, tree)


def written_into(stmts: Sequence[gast.stmt], helpers: Optional[Dict[str, gast.FunctionDef]] = None) -> Set[str]:
    """The names whose arrays ``stmts`` may write into, directly or through a view (``v = y[1:]``, ``v += 1``);
    a statement that calls one of ``helpers`` (by name: the generated functions of the module) writes into
    the arguments of the parameters that the helper writes into."""
    helpers = helpers or {}
    calls = [s for s in stmts if _helper(s, helpers) is not None]
    names = updated_in_place([s for s in stmts if s not in calls])
    for stmt in calls:
        fdef = helpers[stmt.value.func.id]
        changed = written_parameters(fdef, helpers)
        names |= {arg.id for arg, param in zip(stmt.value.args, fdef.args.args)
                  if param.id in changed and isinstance(arg, gast.Name)}
    links = view_links(definitions(gast.Module(body=list(stmts), type_ignores=[])), both_ways=True)
    for stmt in calls:  # what a helper returns may be an argument, or a view of one (``return y``)
        targets = [n.id for t in getattr(stmt, "targets", ()) for n in gast.walk(t) if isinstance(n, gast.Name)]
        for arg in stmt.value.args:
            if isinstance(arg, gast.Name):
                for target in targets:
                    links.setdefault(arg.id, set()).add(target)
                    links.setdefault(target, set()).add(arg.id)
    return linked(names, links)


def written_parameters(fdef: gast.FunctionDef, helpers: Optional[Dict[str, gast.FunctionDef]] = None) -> Set[str]:
    """The parameters of a generated function whose arrays its body may write into."""
    return written_into(fdef.body, {k: v for k, v in (helpers or {}).items() if k != fdef.name}) \
        & {a.id for a in fdef.args.args}


def _helper(stmt: gast.stmt, helpers: Dict[str, gast.FunctionDef]) -> Optional[str]:
    """The helper a statement ``t = helper(...)`` (or a bare call) calls, or None."""
    call = stmt.value if isinstance(stmt, (gast.Assign, gast.Expr)) else None
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Name) and call.func.id in helpers:
        return call.func.id
    return None


def restore(array, saved):
    """Write the values ``saved`` held back into ``array`` (inlined in generated code)."""
    array[:] = saved


def restoring(spec, node, arguments: Sequence[Any], run: Callable[[], Any]) -> Any:
    """``run()``, which emits code that reads ``arguments`` (pytrees), emitted so that the arrays among their
    leaves hold after it what they held before: each one that the emitted code may write into is copied
    before and written back after."""
    start = len(spec.block)
    result = spec.snapshot(run())  # its statements emitted now, before any write back
    emitted = spec.block[start:]
    changed = written_into(emitted, {h.name: h for h in spec.builder.helpers})
    leaves = {}
    for leaf in tree_util.tree_leaves(list(arguments)):
        if isinstance(leaf, Dyn) and leaf.name in changed and leaf.aval is not None and leaf.aval.ndim > 0:
            leaves.setdefault(leaf.name, leaf)
    if not leaves:
        return result
    del spec.block[start:]
    saved = [spec.snapshot(spec.call_value(node, np.copy, [leaf], {})) for leaf in leaves.values()]
    spec.block.extend(emitted)
    for leaf, copy in zip(leaves.values(), saved):
        spec.call_python_function(node, restore, [leaf, copy], {})
    return result
