"""parts: reverse mode's cotangents of the arrays that ``np.concatenate`` and ``np.stack`` joined, one statement each.

Reverse mode writes ``parts = rt.concatenate_grad(g, (a, b), axis)`` (``rt.stack_grad`` likewise), a tuple of
one cotangent per array, read as ``parts[0]``, ``parts[1]``; the GPU lowering holds no tuples of arrays. Before
it runs, this pass writes one statement per array, as the CPU's helpers compute it, and reads ``parts[k]`` as
that statement's name::

    parts = rt.concatenate_grad(g, (a, b), 1)   ->   parts_0 = g[:, 0:a.shape[1]]
    da = parts[0]                                   parts_1 = g[:, a.shape[1]:a.shape[1] + b.shape[1]]
                                                    da = parts_0

A concatenation's part is a slice of the cotangent along the axis (a view, as ``np.split``'s); a stack's is a
copy of the cotangent at index ``k`` along the axis (as ``np.take``'s). A negative axis counts from the end
(``g[..., k]``). Expects the jitted function after optimization; leaves alone a tuple read otherwise than by a
constant index, or assigned more than once, and a concatenation over no axis (the lowering refuses them).
"""
from __future__ import annotations

import ast
import collections
from typing import Dict, List, Optional

import gast

from numbax.ast_passes import anno
from numbax.backends.cuda.lower.state import parse as _parse, text as _text

_HELPERS = ("rt.concatenate_grad", "rt.stack_grad")


def transform(fdef: gast.FunctionDef) -> gast.FunctionDef:
    """``fdef`` with each tuple of joined arrays' cotangents written as one statement per array (see above)."""
    splits = {}
    for stmt, target, call in _candidates(fdef):
        parts = _parts(call)
        if parts is not None:
            splits[target] = (stmt, parts)
    splits = {t: s for t, s in splits.items() if _read_by_constant_indices_only(fdef, t, len(s[1]))}
    if splits:
        _Split(splits, _names(fdef)).visit(fdef)
    return fdef


def _candidates(fdef: gast.FunctionDef):
    """Each ``name = rt.concatenate_grad(...)`` or ``rt.stack_grad(...)`` whose name is assigned only there."""
    assigned = collections.Counter(n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)
                                   and isinstance(n.ctx, gast.Store))
    for stmt in gast.walk(fdef):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) and \
                isinstance(stmt.value, gast.Call) and _text(stmt.value.func) in _HELPERS and \
                assigned[stmt.targets[0].id] == 1:
            yield stmt, stmt.targets[0].id, stmt.value


def _parts(call: gast.Call) -> Optional[List[str]]:
    """The expression of each array's cotangent, or None where the call is not of a tuple of names and a
    constant integer axis."""
    values = dict(zip(["g", "arrays", "axis"], call.args))
    values.update({k.arg: k.value for k in call.keywords})
    arrays = values.get("arrays")
    if set(values) - {"g", "arrays", "axis"} or not isinstance(values.get("g"), gast.Name) or \
            not isinstance(arrays, gast.Tuple) or not all(isinstance(e, gast.Name) for e in arrays.elts):
        return None
    try:
        axis = ast.literal_eval(gast.gast_to_ast(values["axis"])) if "axis" in values else 0
    except ValueError:
        return None
    if type(axis) is not int:
        return None
    g, names = values["g"].id, [e.id for e in arrays.elts]
    if _text(call.func) == "rt.stack_grad":
        return [f"np.copy({g}[{_at(axis, str(k))}])" for k in range(len(names))]
    ends = [" + ".join(f"{n}.shape[{axis}]" for n in names[:k + 1]) for k in range(len(names))]
    return [f"{g}[{_at(axis, f'{start}:{end}')}]" for start, end in zip(["0"] + ends, ends)]


def _at(axis: int, index: str) -> str:
    """The subscript that puts ``index`` at ``axis`` (from the end where negative) and full slices elsewhere."""
    if axis >= 0:
        return ", ".join([":"] * axis + [index])
    return ", ".join(["..."] + [index] + [":"] * (-axis - 1))


def _read_by_constant_indices_only(fdef: gast.FunctionDef, target: str, count: int) -> bool:
    """Whether every read of ``target`` is ``target[k]``, ``k`` a constant index into its ``count`` parts."""
    subscripted = set()
    for node in gast.walk(fdef):
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and node.value.id == target:
            if not (isinstance(node.slice, gast.Constant) and type(node.slice.value) is int and
                    0 <= node.slice.value < count and isinstance(node.ctx, gast.Load)):
                return False
            subscripted.add(id(node.value))
    return all(id(n) in subscripted for n in gast.walk(fdef) if isinstance(n, gast.Name) and n.id == target and
               isinstance(n.ctx, gast.Load))


def _names(fdef: gast.FunctionDef) -> set:
    return {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)} | {a.id for a in fdef.args.args}


class _Split(gast.NodeTransformer):
    """Writes the statements and reads the parts by their names."""

    def __init__(self, splits: Dict[str, tuple], taken: set):
        self.splits = splits
        self.names = {}
        for target, (_, parts) in splits.items():
            for k in range(len(parts)):
                name, n = f"{target}_{k}", 0
                while name in taken:
                    n += 1
                    name = f"{target}_{k}_{n}"
                taken.add(name)
                self.names[target, k] = name

    def visit_Assign(self, node: gast.Assign):
        target = node.targets[0].id if len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) else None
        if target in self.splits and self.splits[target][0] is node:
            made = _parse("\n".join(f"{self.names[target, k]} = {part}"
                                    for k, part in enumerate(self.splits[target][1])))
            for stmt in made:
                anno.copyanno(node, stmt)
            return made
        return self.generic_visit(node)

    def visit_Subscript(self, node: gast.Subscript):
        if isinstance(node.value, gast.Name) and node.value.id in self.splits:
            return gast.Name(id=self.names[node.value.id, node.slice.value], ctx=gast.Load(), annotation=None,
                             type_comment=None)
        return self.generic_visit(node)
