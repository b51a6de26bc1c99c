"""The markers of users' custom rules, rewritten once the transformation has read them.

``y = rt.custom_rule(7, out, res, x)`` holds the output of a ``custom_vjp`` or ``custom_jvp`` function and
the operands its rule reads (``numbax.transforms.custom.lowering``); after the transformation it is
``y = out``. ``rt.custom_input(x)``, the input of the rule's own code that the transformation does not
differentiate, becomes ``rt.custom_input_seen(x)``, which no transformation has a rule for (a second
derivative through the rule is refused), and is dropped from the final code (``drop_inputs``).
"""
from __future__ import annotations

import gast


def _helper(node: gast.AST) -> str:
    """``name`` for a call ``rt.name(...)``, else ``""``."""
    func = getattr(node, "func", None)
    if isinstance(node, gast.Call) and isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
            and func.value.id == "rt" and node.args:
        return func.attr
    return ""


class _AfterTransform(gast.NodeTransformer):
    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        helper = _helper(node)
        if helper == "custom_rule" and len(node.args) >= 2:
            return node.args[1]
        if helper == "custom_input":
            node.func.attr = "custom_input_seen"
        return node


class _DropInputs(gast.NodeTransformer):
    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        return node.args[0] if _helper(node) == "custom_input_seen" else node


def after_transform(fdef: gast.FunctionDef) -> gast.FunctionDef:
    """``fdef`` with each ``rt.custom_rule(key, out, ...)`` replaced by ``out`` and each ``rt.custom_input``
    marked as seen."""
    return _AfterTransform().visit(fdef)


def drop_inputs(fdef: gast.FunctionDef) -> gast.FunctionDef:
    """``fdef`` with each ``rt.custom_input_seen(x)`` replaced by ``x`` (the final code)."""
    return _DropInputs().visit(fdef)
