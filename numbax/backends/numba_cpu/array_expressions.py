"""Numba fuses generated code's array expressions of two operations or more, and most single ones not.

After typing, Numba rewrites each expression of array operators and ufuncs (``a * b + c``) into one
``arrayexpr`` that it lowers as a single loop, compiling the loop's scalar body as a function of its own:
a parse, a typing and a lowering of that function for every array operation of the program, the most
common statement of generated code (``dt1 * y``, ``rt.unbroadcast(dt2 * const, _t1)``). For a single
operation the loop is the one Numba lowers for the operator or ufunc itself, so the rewrite buys nothing at
run time and costs a compilation: ``FusingRewrites`` runs Numba's rewrites after typing with a single
operation left out where its own loop computes the same bits as the rewrite's, which is where both run one
IEEE operation on floats or signed integers: ``+ - * /``, negation, comparisons and NumPy's ufuncs (the
rewrite's body calls the same kernel). The rewrite's body computes an operator as Python does, the
operator's own loop as Numba's NumPy kernels do, and they differ: ``x % s`` (Python's sign of a zero
remainder, which is NumPy's; Numba's ``np.remainder`` loop gives ``0.0``), ``//``, ``**`` (repeated
squaring against ``pow``), shifts, and complex arithmetic. Those keep the rewrite, as before. (38
gradient-rule tests: Numba's passes took 8.5 s instead of 9.0 to 11.0 s.)
``tests/test_array_expressions.py`` checks the results against Numba's rewrite of every expression.
"""
from __future__ import annotations

import operator

import numpy as np
from numba.core import postproc, rewrites, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.rewrites.registry import RewriteRegistry
from numba.core.typed_passes import fallback_context
from numba.np.ufunc.array_exprs import RewriteArrayExprs


# operators whose loop Numba lowers with the same IEEE operation as the rewrite's Python-semantics body
_SAME_EITHER_WAY = frozenset({operator.add, operator.sub, operator.mul, operator.truediv, operator.neg,
                              operator.pos, operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                              operator.ge})


class FusedArrayExprs(RewriteArrayExprs):
    """Numba's array-expression rewrite, less the single operations it would compile for nothing (see the
    module's docstring)."""

    def match(self, func_ir, block, typemap, calltypes):
        """Numba's matches in ``block``, less the single operations that neither feed nor are fed by another
        and that lower to the same bits without the rewrite."""
        if not super().match(func_ir, block, typemap, calltypes):
            return False
        fused = set()
        for name, assign in self.array_assigns.items():
            for operand in self._get_operands(assign.value):
                if operand.is_temp and operand.name in self.array_assigns:
                    fused.update((name, operand.name))
        for name in [name for name in self.array_assigns
                     if name not in fused and self._same_either_way(self.array_assigns[name].value, typemap)]:
            del self.array_assigns[name]
        return bool(self.array_assigns)

    def _same_either_way(self, expr, typemap) -> bool:
        """Whether ``expr``, one operation, computes the same bits lowered on its own as in an array
        expression: an operator of ``_SAME_EITHER_WAY`` or a NumPy ufunc, on real numbers."""
        operation = self._get_array_operator(expr)
        if operation not in _SAME_EITHER_WAY and not isinstance(operation, np.ufunc):
            return False
        return all(_real(getattr(typemap[operand.name], "dtype", typemap[operand.name]))
                   for operand in self._get_operands(expr))


def _real(numba_type) -> bool:
    """Whether ``numba_type`` is a float or a signed integer (a ``uint64`` meets an ``int64`` through a float
    in NumPy's rules, where Python's scalar rules may not)."""
    return isinstance(numba_type, types.Float) or (isinstance(numba_type, types.Integer) and numba_type.signed)


def _after_typing() -> RewriteRegistry:
    """Numba's rewrites after typing (as registered now), in its order, with ``FusedArrayExprs`` for
    ``RewriteArrayExprs``."""
    registry = RewriteRegistry()
    registry.rewrites["after-inference"] = [
        FusedArrayExprs if rewrite is RewriteArrayExprs else rewrite
        for rewrite in rewrites.rewrite_registry.rewrites["after-inference"]]
    return registry


@register_pass(mutates_CFG=True, analysis_only=False)
class FusingRewrites(FunctionPass):
    """Numba's ``NopythonRewrites`` with ``FusedArrayExprs`` for its array-expression rewrite."""

    _name = "numbax_fusing_rewrites"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        """Apply Numba's rewrites after typing, as ``NopythonRewrites`` does (see the module's docstring)."""
        processor = postproc.PostProcessor(state.func_ir)
        processor.run(True)
        with fallback_context(state, f'Internal error in post-inference rewriting pass encountered during '
                                     f'compilation of function "{state.func_id.func_name}"'):
            _after_typing().apply("after-inference", state)
        processor.remove_dels()
        return True
