"""The run-time checks that keep a rule checked against JAX for real numbers only from meeting complex ones.

Both modes refuse, at the user's line, a primitive whose rule is not ``complex_verified`` where an operand or
the result is known to be complex. Where a value's dtype was not inferred when transforming (``np.split`` of
``np.tile``'s result in reverse mode, whose abstract value no rule gives), the generated code checks it after
the primitive: ``rt.check_real(value, message, where)``, which Numba decides by type when compiling (a complex
value is refused then, a real one leaves nothing to run) and the python backend when running.

A primitive registered as carrying no derivative is one more case (``constants_of_complex``): ``rt.abs_slope``,
``z / |z|`` in the gradient of ``np.abs``, is constant on the reals only, so a derivative of that gradient
(``jvp`` or ``grad`` of ``grad``) would drop its part where ``z`` is complex.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Optional, Set

import gast

from numbax.ast_passes import anno
from numbax.ast_passes.analyses import primitives
from numbax.ast_passes.analyses.nodes import loads, name, rt_call
from numbax.errors import NumbaxDifferentiationError
from numbax.primitives.registry import NONDIFFERENTIABLE, entry


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


def constants_of_complex(fdef: gast.FunctionDef, active: Set[str], kind: Callable[[str], Optional[str]],
                         derivative: str = "derivative") -> Dict[int, List[gast.stmt]]:
    """Where a primitive registered as carrying no derivative, and not checked for complex operands, gives a
    value not known to be an integer or boolean from a differentiated value: refused where that value is known
    to be complex (``kind`` gives a name's kind, None where unknown); the checks of the values whose kinds are
    unknown, by statement id, for the transformation to place after the statement (also where the result's kind
    is unknown: it may be a float or complex number). ``derivative`` names the mode's derivative in the message."""
    checks: Dict[int, List[gast.stmt]] = {}
    for stmt in gast.walk(fdef):
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            continue
        app = primitives.application(stmt.value)
        primitive = entry(app.key) if app is not None else None
        result = kind(stmt.targets[0].id)
        if primitive is None or primitive.vjp is not NONDIFFERENTIABLE or primitive.complex_verified or \
                result not in ("f", "c", None):
            continue
        operands = loads(stmt.value) & active
        if any(kind(n) == "c" for n in operands):
            raise NumbaxDifferentiationError(
                f"numbax has no {derivative} of {app.name} for complex numbers checked against JAX (it carries none "
                "on the reals)", anno.getanno(stmt, anno.Key.ORIGIN),
                hint="differentiate the real and imaginary parts (np.real(z), np.imag(z)) separately, or compute "
                     "this value outside the differentiated function.")
        unknown = {n for n in operands if kind(n) is None}
        if unknown:
            checks[id(stmt)] = real_checks(unknown, app.name, stmt)
    return checks
