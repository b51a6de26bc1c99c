"""unparse: gast -> Python source text, with comments that point back to the user's lines.

Uses the standard library's ``ast.unparse`` (astunparse writes ``a[(:, 0)]``
for ``a[:, 0]`` on Python >= 3.9). Statements tagged with an origin get a
comment naming the user's line whenever the generated text differs from it.
"""
from __future__ import annotations

import ast
from typing import Dict, Optional

import gast

from numbax.ast_passes import anno
from numbax.origin import Origin


def _to_ast(node: gast.AST) -> ast.AST:
    """Convert to ``ast``, carrying statement annotations across."""
    converted = gast.gast_to_ast(node)
    _copy_stmt_annos(node, converted)
    return converted


def _copy_stmt_annos(src, dst) -> None:
    for field in ("body", "orelse", "finalbody"):
        a, b = getattr(src, field, None), getattr(dst, field, None)
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for x, y in zip(a, b):
                anno.copyanno(x, y)
                _copy_stmt_annos(x, y)


class _CommentingUnparser(ast._Unparser):
    """``ast.unparse`` plus ``# file:line: source`` comments and a map of generated lines to origins."""

    def __init__(self):
        super().__init__()
        self.line_origins: Dict[int, Origin] = {}
        self._last: Optional[tuple] = None  # (origin, kind) of the last statement commented
        self._last_primal: Optional[Origin] = None  # forward mode alternates a line's statements and tangents
        self._last_tangent: Optional[Origin] = None

    def traverse(self, node):
        if isinstance(node, ast.FunctionDef):  # a function's first line cites the user's line again
            self._last = self._last_primal = self._last_tangent = None
        if isinstance(node, ast.stmt):
            self._comment(node)
        super().traverse(node)

    def _comment(self, node: ast.stmt) -> None:
        origin: Optional[Origin] = anno.getanno(node, anno.Key.ORIGIN)
        grad_of = anno.getanno(node, anno.Key.GRAD_OF)
        tangent_of = anno.getanno(node, anno.Key.TANGENT_OF)
        if origin is None or isinstance(node, (ast.FunctionDef,)):
            return
        line_no = "".join(self._source).count("\n") + 2
        self.line_origins[line_no] = origin
        kind = "grad" if grad_of is not None else "tangent" if tangent_of is not None else None
        previous = self._last
        self._last = (origin, kind)
        if kind == "tangent":
            seen, self._last_tangent = self._last_tangent == origin, origin
        elif kind is None and previous is not None and previous[1] == "tangent":
            seen = self._last_primal == origin
        else:
            seen = previous == (origin, kind)
        if kind is None:
            self._last_primal = origin
        if seen:
            return
        user_text = origin.line.strip()
        if grad_of is not None:
            self.fill(f"# grad of: {grad_of}")  # an adjoint statement, under grad, vjp or a jit'd step
            self.line_origins[line_no + 1] = origin
        elif tangent_of is not None:
            self.fill(f"# tangent of: {tangent_of}")  # a tangent statement, under jvp
            self.line_origins[line_no + 1] = origin
        elif user_text and user_text != ast.unparse(node).split("\n")[0].strip():
            self.fill(f"# {origin.short()}: {user_text}")
            self.line_origins[line_no + 1] = origin


def unparse(node: gast.AST) -> str:
    """Python source for ``node`` (no comments)."""
    return ast.unparse(gast.gast_to_ast(node))


def unparse_with_origins(node: gast.AST) -> tuple:
    """Source text with origin comments, and ``{generated line: Origin}`` for error reports."""
    unparser = _CommentingUnparser()
    text = unparser.visit(_to_ast(node))
    return text, unparser.line_origins

