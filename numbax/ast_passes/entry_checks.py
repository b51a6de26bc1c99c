"""entry_checks: a contraction of parameters checked at the function's entry, so its dims are known equal.

``rt.check_contraction(where, 'ij,j->i', 'j', a, x)`` raises at the user's line unless ``a.shape[1] ==
x.shape[0]`` (``contraction_checks``). At the top level of a function that never reassigns ``a`` and ``x``,
it runs before anything after it, and moved to the entry it raises what it raised, only before the errors of
earlier lines. There, every statement of the function may take those dims as equal: ``hoist`` moves such
checks to the entry and returns the dims they equate (``shapes.infer``'s ``same``), so that forward mode of
reverse mode's code (``hessian``) knows ``ddz @ a`` has ``x``'s shape and adds no broadcast of zeros.
Expects A-normal form; checks with an ellipsis, in a branch or a loop, or of other operands stay as they are::

    >>> import gast
    >>> from numbax.ast_passes.unparse import unparse
    >>> check = "rt.check_contraction('f: @', 'ij,j->i', 'j', a, x)"
    >>> src = f"def f(a, x):\\n    t = x * 2.0\\n    {check}\\n    return a @ t"
    >>> fdef = gast.parse(src).body[0]
    >>> hoist(fdef)
    {'x.0': 'a.1'}
    >>> print(unparse(fdef))
    def f(a, x):
        rt.check_contraction('f: @', 'ij,j->i', 'j', a, x)
        t = x * 2.0
        return a @ t
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import gast

from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.analyses.shapes import equal_classes
from numbax.ast_passes.analyses.usage import count_names


def _pairs(stmt: gast.stmt, unchanged: Set[str]) -> Optional[List[Tuple[str, str]]]:
    """The parameters' dims that the check ``stmt`` equates, or None where it is not such a check."""
    app = application(stmt.value) if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) else None
    if app is None or app.name != "rt.check_contraction" or app.keywords or len(app.args) < 4:
        return None
    subscripts, exact = app.args[1], app.args[2]
    operands = app.args[3:]
    if not all(isinstance(c, gast.Constant) and isinstance(c.value, str) for c in (subscripts, exact)) or \
            "." in subscripts.value or "->" not in subscripts.value or \
            not all(isinstance(op, gast.Name) and op.id in unchanged for op in operands):
        return None
    inputs = subscripts.value.split("->")[0].split(",")
    if len(inputs) != len(operands):
        return None
    seen: Dict[str, str] = {}
    pairs = []
    for operand, letters in zip(operands, inputs):
        for axis, letter in enumerate(letters):
            dim = f"{operand.id}.{axis}"
            if letter in exact.value and letter in seen:
                pairs.append((seen[letter], dim))
            seen.setdefault(letter, dim)
    return pairs


def hoist(fdef: gast.FunctionDef) -> Dict[str, str]:
    """Move the top-level contraction checks of parameters that ``fdef`` never reassigns to its entry (in
    place); each dim they equate mapped to the one that stands for its class (``shapes.infer``'s ``same``)."""
    stores, _ = count_names(fdef)
    unchanged = {a.id for a in fdef.args.args if stores[a.id] == 1}  # its parameter binding only
    checks, rest, pairs = [], [], []
    for stmt in fdef.body:
        found = _pairs(stmt, unchanged)
        if found is None:
            rest.append(stmt)
        else:
            checks.append(stmt)
            pairs += found
    fdef.body = checks + rest
    return equal_classes(pairs)
