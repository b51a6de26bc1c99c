"""Numba fuses the array expressions of generated code that have two operations or more, not single ones.

After typing, Numba rewrites each expression of array operators and ufuncs (``a * b + c``) into one
``arrayexpr`` that it lowers as a single loop, compiling the loop's scalar body as a function of its own:
a parse, a typing and a lowering of that function for every array operation of the program, the most
common statement of generated code (``dt1 * y``, ``rt.unbroadcast(dt2 * const, _t1)``). For a single
operation the loop is the one Numba lowers for the operator or ufunc itself, scalar body inline, so the
rewrite buys nothing at run time and costs a compilation: ``FusingRewrites`` runs Numba's rewrites after
typing with array expressions kept only where one feeds another. (The 41 functions of 38 gradient-rule
tests: 5.1 of their 26 s of compilation went to array expressions, 78 of them; the tests took 28.1 s, then
23.3.) Both lowerings run the same scalar operations, elementwise, so the bits are the same, but for an
array raised to an integer array's powers, which the operator computes with ``pow`` as NumPy does and the
rewrite by repeated squaring (``tests/test_array_expressions.py``).
"""
from __future__ import annotations

from numba.core import postproc, rewrites
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.rewrites.registry import RewriteRegistry
from numba.core.typed_passes import fallback_context
from numba.np.ufunc.array_exprs import RewriteArrayExprs


class FusedArrayExprs(RewriteArrayExprs):
    """Numba's array-expression rewrite, applied only to expressions of two operations or more."""

    def match(self, func_ir, block, typemap, calltypes):
        """Numba's matches in ``block``, less the operations that neither feed nor are fed by another."""
        if not super().match(func_ir, block, typemap, calltypes):
            return False
        fused = set()
        for name, assign in self.array_assigns.items():
            for operand in self._get_operands(assign.value):
                if operand.is_temp and operand.name in self.array_assigns:
                    fused.update((name, operand.name))
        for name in [name for name in self.array_assigns if name not in fused]:
            del self.array_assigns[name]
        return bool(self.array_assigns)


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
    """Numba's ``NopythonRewrites``, fusing only array expressions of two operations or more."""

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
