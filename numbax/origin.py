"""Where a node came from: the user's file, line and column, for errors and comments."""
from __future__ import annotations

import dataclasses
import linecache
import os
from types import CodeType


@dataclasses.dataclass(frozen=True)
class Origin:
    """A position in the user's source: file, 1-based line, 0-based column and that line's text."""

    filename: str
    lineno: int
    col_offset: int
    line: str
    function: str = ""

    @classmethod
    def of_line(cls, filename: str, lineno: int, function: str = "") -> "Origin":
        """Line ``lineno`` of ``filename``, from its start, with its text (where an error has no column)."""
        return cls(filename, lineno, 0, linecache.getline(filename, lineno), function)

    @classmethod
    def of_code(cls, code: CodeType) -> "Origin":
        """The first line of a function's code: its ``def`` line, or its first decorator's."""
        return cls.of_line(code.co_filename, code.co_firstlineno, code.co_qualname)

    def location(self) -> str:
        """``file:line`` as editors and terminals recognise it."""
        return f"{self.filename}:{self.lineno}"

    def position(self) -> str:
        """``file:line:column``, as run-time checks pass it to the errors they raise."""
        return f"{self.filename}:{self.lineno}:{self.col_offset}"

    def short(self) -> str:
        """``basename:line``, for comments in generated code."""
        return f"{os.path.basename(self.filename)}:{self.lineno}"

    def excerpt(self) -> str:
        """The user's line, indented, with a caret under the column."""
        text = self.line.rstrip("\n")
        stripped = text.lstrip()
        indent = len(text) - len(stripped)
        caret = max(self.col_offset - indent, 0)
        return f"    {stripped}\n    {' ' * caret}^"
