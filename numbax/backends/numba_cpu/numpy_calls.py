"""Calls of NumPy functions in generated code, sent to helpers compiled once per machine before typing.

Numba compiles its implementation of ``np.zeros``, ``np.linalg.solve``, ... while it types a call, in every
process that compiles a caller. ``NumpyCalls`` runs before type inference: a call of a function of
``numbax.runtime.numpy_once.HELPERS``, whose callee is the NumPy function itself (``np.zeros``,
``np.linalg.solve``, a global), becomes a call of its helper, keywords the helper's entry names passed by
position; the helper computes the NumPy function of the same arguments, compiled once per machine and loaded
from the runtime's cache after. A call with any other keyword, ``*args`` or a list display stays Numba's.
"""
from __future__ import annotations

from typing import Any, List, Optional

from numba.core import ir, ir_utils
from numba.core.compiler_machinery import FunctionPass, register_pass

from numbax.runtime import numpy_once


def _definition(func_ir: ir.FunctionIR, var: ir.Var) -> Any:
    """The one definition of ``var``, or None where it has several."""
    try:
        return func_ir.get_definition(var)
    except KeyError:
        return None


def _callee(func_ir: ir.FunctionIR, var: ir.Var) -> Any:
    """The object a callee variable names where it is a global or a global module's attribute (``np.zeros``,
    ``np.linalg.solve``), else None."""
    definition = _definition(func_ir, var)
    if isinstance(definition, (ir.Global, ir.FreeVar)):
        return definition.value
    if isinstance(definition, ir.Expr) and definition.op == "getattr":
        return ir_utils.resolve_func_from_module(func_ir, definition)
    return None


def _positional(expr: ir.Expr, params: Optional[tuple]) -> Optional[List[ir.Var]]:
    """The call's arguments by position, the keywords it names among ``params`` placed at theirs; None where
    it passes more, a keyword is not one of them or a parameter between is left to its default (``params``
    None: any number of arguments, no keyword)."""
    args = list(expr.args)
    keywords = dict(expr.kws)
    if params is None:
        return None if keywords else args
    if len(args) > len(params):
        return None
    for param in params[len(args):]:
        if not keywords:
            break
        if param not in keywords:
            return None
        args.append(keywords.pop(param))
    return None if keywords else args


def _is_list_display(func_ir: ir.FunctionIR, var: ir.Var) -> bool:
    """Whether ``var`` is a list display (``np.array([a, b])``), which Numba's rewrite after typing turns into
    stores into the new array, with no list made: the call stays Numba's."""
    definition = _definition(func_ir, var)
    return isinstance(definition, ir.Expr) and definition.op == "build_list"


@register_pass(mutates_CFG=False, analysis_only=False)
class NumpyCalls(FunctionPass):
    """Each call of a NumPy function that ``numpy_once`` compiles once becomes a call of its helper."""

    _name = "numbax_numpy_calls"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        """Rewrite the calls in ``state.func_ir`` (see the module's docstring)."""
        func_ir = state.func_ir
        changed = False
        for block in func_ir.blocks.values():
            body = []
            for instruction in block.body:
                helper = self._helper_call(func_ir, instruction)
                if helper is not None:
                    name, value, args = helper
                    expr, loc = instruction.value, instruction.loc
                    function = ir.Var(block.scope, ir_utils.mk_unique_var(f"$numbax_{name}"), loc)
                    body.append(ir.Assign(ir.Global(name, value, loc), function, loc))
                    instruction = ir.Assign(ir.Expr.call(function, args, (), loc), instruction.target, loc)
                    changed = True
                body.append(instruction)
            block.body = body
        if changed:
            func_ir._definitions = ir_utils.build_definitions(func_ir.blocks)
        return changed

    @staticmethod
    def _helper_call(func_ir: ir.FunctionIR, instruction: ir.Stmt):
        """``(helper's name, helper, positional arguments)`` where ``instruction`` assigns a call that goes to
        a helper, else None."""
        if not isinstance(instruction, ir.Assign):
            return None
        expr = instruction.value
        if not isinstance(expr, ir.Expr) or expr.op != "call" or expr.vararg or expr.varkwarg:
            return None
        try:
            entry = numpy_once.HELPERS.get(_callee(func_ir, expr.func))
        except TypeError:  # an unhashable callee
            return None
        if entry is None:
            return None
        helper, params = entry
        args = _positional(expr, params)
        if args is None or any(_is_list_display(func_ir, a) for a in args):
            return None
        return helper.__name__, helper, args
