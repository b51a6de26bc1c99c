"""differentiable: whether a right-hand side may carry a derivative, as the primitive registry says.

The activity analysis (``numbax.ast_passes.analyses.activity``) takes this
predicate as a parameter: the analysis follows values, the registry's
entries (``numbax.primitives``) say which primitives stop a derivative.
"""
from __future__ import annotations

import gast

from numbax.ast_passes.analyses.primitives import application
from numbax.primitives.registry import NONDIFFERENTIABLE, vjp_rule

_NONDIFF_ATTRIBUTES = ("shape", "ndim", "size", "dtype", "real_dtype", "itemsize", "nbytes", "strides")


def is_differentiable(value: gast.expr) -> bool:
    """Whether ``value`` may carry a derivative from its operands: False only for what is verified to carry
    none (comparisons, constants, shape and dtype attributes, primitives registered as non-differentiable);
    an unknown call, method or construct counts as yes, to be refused where no rule differentiates it. A
    ``BoolOp`` counts as yes: ``a or b`` is one of its operands."""
    if isinstance(value, (gast.Compare, gast.Constant)):
        return False
    if isinstance(value, gast.Attribute) and value.attr in _NONDIFF_ATTRIBUTES:
        return False
    app = application(value)
    if app is None:
        return True
    return vjp_rule(app.key) is not NONDIFFERENTIABLE
