"""The run-time checks that keep a rule checked against JAX for real numbers only from meeting complex ones.

Both modes refuse, at the user's line, a primitive whose rule is not ``complex_verified`` where an operand or
the result is known to be complex. Where a value's dtype was not inferred when transforming (``np.split`` of
``np.tile``'s result in reverse mode, whose abstract value no rule gives), the generated code checks it after
the primitive: ``rt.check_real(value, message, where)``, which Numba decides by type when compiling (a complex
value is refused then, a real one leaves nothing to run) and the python backend when running.
"""
from __future__ import annotations

from typing import Iterable, List

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.nodes import name, rt_call


def real_checks(names: Iterable[str], what: str, stmt: gast.stmt) -> List[gast.stmt]:
    """``rt.check_real`` of each of ``names``, values that the rule of ``what`` (a primitive's readable name)
    meets at ``stmt``, placed at ``stmt``'s line."""
    origin = anno.getanno(stmt, anno.Key.ORIGIN)
    message = gast.Constant(value=f"numbax has no derivative of {what} for complex numbers checked against JAX's "
                                  "convention", kind=None)
    where = gast.Constant(value=origin.position() if origin is not None else "", kind=None)
    checks = []
    for n in sorted(names):
        check = gast.copy_location(gast.Expr(value=rt_call("check_real", name(n), message, where)), stmt)
        anno.copyanno(stmt, check)
        checks.append(check)
    return checks
