"""How generated code's array operations are lowered: fused where one feeds another, a single one called.

After typing, Numba rewrites each expression of array operators and ufuncs (``a * b + c``) into one
``arrayexpr`` that it lowers as a single loop, compiling the loop's scalar body as a function of its own.
``FusingRewrites`` runs Numba's rewrites after typing with ``FusedArrayExprs`` for that one, which keeps it
for operations that feed one another and takes a single operation (``dt1 * y``, the most common statement of
generated code) out of it:

- Outside loops, a single operation calls its helper in ``numbax.runtime.elementwise``: the loop over the
  broadcast shape compiled once per machine (Numba's own pipeline, so the same bits) and loaded from the
  runtime's cache, where Numba would lower it, and LLVM optimize it, in every function anew. An MLP's Adam
  step (50 such statements) took 13.4 s to compile cold, LLVM 10.3 s of it; with the calls, 4.0 s and 2.5 s.
  A call costs some tens of nanoseconds more than the loop lowered in place, which an operation inside a loop
  would pay on every iteration: there, and for a power with a constant exponent (which the rewrite folds into
  its loop: ``x ** 2`` multiplies), the operation stays in the function. So it does under ``fastmath`` or
  ``parallel`` (the helpers have neither).
- Where it stays, a single operation is lowered as itself where its own loop computes the same bits as the
  rewrite's, which is where both run one IEEE operation on floats or signed integers: ``+ - * /``,
  negation, comparisons and NumPy's ufuncs (the rewrite's body calls the same kernel). The rewrite's body
  computes an operator as Python does, the operator's own loop as Numba's NumPy kernels do, and they differ:
  ``x % s`` (Python's sign of a zero remainder, which is NumPy's; Numba's ``np.remainder`` loop gives
  ``0.0``), ``//``, ``**`` (repeated squaring against ``pow``), shifts, and complex arithmetic. Those keep the
  rewrite.

``tests/test_array_expressions.py`` checks the results against Numba's rewrite of every expression.
"""
from __future__ import annotations

import operator

import numpy as np
from numba.core import errors, ir, ir_utils, postproc, rewrites, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.rewrites.registry import RewriteRegistry
from numba.core.typed_passes import fallback_context
from numba.np.ufunc.array_exprs import RewriteArrayExprs

from numbax.backends.numba_cpu.ir_loops import loop_labels
from numbax.runtime import elementwise


# operators whose loop Numba lowers with the same IEEE operation as the rewrite's Python-semantics body
_SAME_EITHER_WAY = frozenset({operator.add, operator.sub, operator.mul, operator.truediv, operator.neg,
                              operator.pos, operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                              operator.ge})


# a power's constant exponent is folded into the rewrite's loop (``x ** 2`` multiplies), not into a helper's
_POWERS = frozenset({operator.pow, np.power})


class FusedArrayExprs(RewriteArrayExprs):
    """Numba's array-expression rewrite for operations that feed one another; a single operation calls its
    runtime helper, or is lowered as itself (see the module's docstring)."""

    def __init__(self, state, *args, **kws):
        super().__init__(state, *args, **kws)
        self._typingctx, self._calltypes = state.typingctx, state.calltypes
        # the helpers are compiled without fastmath and run on one thread
        self._calls_helpers = not state.flags.fastmath and not state.flags.auto_parallel.enabled
        # the blocks in a loop, by identity (``apply`` gives a block a new one, in the loop if it was)
        blocks = state.func_ir.blocks
        self._in_loops = {id(blocks[label]): blocks[label] for label in loop_labels(blocks)}

    def match(self, func_ir, block, typemap, calltypes):
        """Numba's matches in ``block``, less the single operations that neither feed nor are fed by another:
        those call their runtime helper where it computes the same type, or are lowered as themselves where
        that computes the same bits, and keep the rewrite otherwise."""
        self._helper_calls = {}
        if not super().match(func_ir, block, typemap, calltypes):
            return False
        calls_helpers = self._calls_helpers and id(block) not in self._in_loops
        fused = set()
        for name, assign in self.array_assigns.items():
            for operand in self._get_operands(assign.value):
                if operand.is_temp and operand.name in self.array_assigns:
                    fused.update((name, operand.name))
        for name in [name for name in self.array_assigns if name not in fused]:
            call = self._helper_call(self.array_assigns[name], typemap) if calls_helpers else None
            if call is not None:
                self._helper_calls[self.array_assigns[name]] = call
            if call is not None or self._same_either_way(self.array_assigns[name].value, typemap):
                del self.array_assigns[name]
        return bool(self.array_assigns or self._helper_calls)

    def _helper_call(self, assign: ir.Assign, typemap):
        """``(helper, its type, the call's signature)`` for the single operation ``assign`` computes, or None
        where there is no helper or it would not compute the operation's type."""
        expr = assign.value
        operation = self._get_array_operator(expr)
        helper = elementwise.helper_for(operation)
        operands = self._get_operands(expr)
        if helper is None or (expr.op == "call" and expr.kws) or (
                operation in _POWERS and any(operand.name in self.const_assigns for operand in operands)):
            return None
        function_type = self._typingctx.resolve_value_type(helper)
        try:
            signature = self._typingctx.resolve_function_type(
                function_type, tuple(typemap[operand.name] for operand in operands), {})
        except errors.NumbaError:  # lowered in the function, as before
            return None
        if signature is None or signature.return_type != typemap[assign.target.name]:
            return None
        return helper, function_type, signature

    def apply(self):
        """Numba's rewrite of the fused operations; each single operation matched for a helper becomes a call
        of it."""
        block = super().apply() if self.array_assigns else self.crnt_block
        if id(self.crnt_block) in self._in_loops:
            self._in_loops[id(block)] = block
        body = []
        for instruction in block.body:
            if instruction in self._helper_calls:
                body.extend(self._call(instruction, *self._helper_calls[instruction]))
            else:
                body.append(instruction)
        block.body = body
        return block

    def _call(self, assign: ir.Assign, helper, function_type, signature) -> list:
        """The instructions that compute ``assign``'s operation by a call of ``helper``."""
        expr, loc, scope = assign.value, assign.loc, assign.target.scope
        function = ir.Var(scope, ir_utils.mk_unique_var(f"$numbax_{helper.__name__}"), loc)
        self.typemap[function.name] = function_type
        call = ir.Expr.call(function, list(self._get_operands(expr)), (), loc)
        self._calltypes.pop(expr, None)
        self._calltypes[call] = signature
        return [ir.Assign(ir.Global(helper.__name__, helper, loc), function, loc), ir.Assign(call, assign.target, loc)]

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
