"""The markers of users' custom rules, rewritten once the transformation has read them.

``y = rt.custom_rule(7, out, res, x)`` holds the output of a ``custom_vjp`` or ``custom_jvp`` function and
the operands its rule reads (``numbax.transforms.custom.lowering``). After the transformation the marker is
``y = out``. ``rt.custom_input(x)``, the input of the code that computed a ``custom_vjp`` function's
residuals, becomes ``rt.custom_input_seen(x)``, which no transformation has a rule for (a second derivative
through the rule is refused), and is dropped from the final code (``drop_inputs``); ``rt.custom_primal(x)``,
the input of the code that computed a ``custom_jvp`` function's output from its rule, becomes ``x``: a
transformation of the result differentiates that code, as JAX differentiates the rule. A ``custom_jvp``
function's call inside its own rule is a marker that stays until after optimization (``PERSISTENT``,
``drop_markers``): a transformation of the result reads its rules again, with the helpers they call
(``rule_helpers``), as JAX's second derivative of a rule that calls the function.
"""
from __future__ import annotations

from typing import List

import gast

from numbax.primitives.registry import CUSTOM_HELPERS, PERSISTENT


def _helper(node: gast.AST) -> str:
    """``name`` for a call ``rt.name(...)``, else ``""``."""
    func = getattr(node, "func", None)
    if isinstance(node, gast.Call) and isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
            and func.value.id == "rt" and node.args:
        return func.attr
    return ""


def _persists(node: gast.Call) -> bool:
    """Whether the marker ``node`` stays after its transformation (``PERSISTENT``)."""
    return isinstance(node.args[0], gast.Constant) and node.args[0].value in PERSISTENT


class _AfterTransform(gast.NodeTransformer):
    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        helper = _helper(node)
        if helper == "custom_rule" and len(node.args) >= 2 and not _persists(node):
            return node.args[1]
        if helper == "custom_input":
            node.func.attr = "custom_input_seen"
        if helper == "custom_primal":
            return node.args[0]
        return node


class _DropInputs(gast.NodeTransformer):
    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        return node.args[0] if _helper(node) == "custom_input_seen" else node


class _DropMarkers(gast.NodeTransformer):
    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        return node.args[1] if _helper(node) == "custom_rule" and len(node.args) >= 2 else node


def drop_markers(fdef: gast.FunctionDef) -> gast.FunctionDef:
    """``fdef`` with each remaining ``rt.custom_rule(key, out, ...)`` replaced by ``out``."""
    return _DropMarkers().visit(fdef)


def rule_helpers(fdef: gast.FunctionDef) -> List[gast.FunctionDef]:
    """The custom rules' helpers that ``fdef`` calls, and those they call in turn."""
    found, todo = {}, [fdef]
    while todo:
        for node in gast.walk(todo.pop()):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                    node.func.id in CUSTOM_HELPERS and node.func.id not in found:
                found[node.func.id] = CUSTOM_HELPERS[node.func.id]
                todo.append(found[node.func.id])
    return list(found.values())


def after_transform(fdef: gast.FunctionDef) -> gast.FunctionDef:
    """``fdef`` with each marker ``rt.custom_rule(key, out, ...)`` but the persistent ones replaced by ``out``,
    each ``rt.custom_input`` marked as seen and each ``rt.custom_primal(x)`` replaced by ``x``."""
    return _AfterTransform().visit(fdef)


def drop_inputs(fdef: gast.FunctionDef) -> gast.FunctionDef:
    """``fdef`` with each ``rt.custom_input_seen(x)`` replaced by ``x`` (the final code)."""
    return _DropInputs().visit(fdef)
