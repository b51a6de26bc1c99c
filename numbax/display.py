"""display: syntax highlighting of generated source, for terminals and for Jupyter.

Highlighting is a nicety: without pygments the source comes back as plain text
(escaped and wrapped in ``<pre>`` for HTML, so that it still displays).
"""
from __future__ import annotations

import html

__all__ = ["highlight_html", "highlight_terminal"]


def highlight_terminal(source: str) -> str:
    """Python source with ANSI colour codes for a 256-colour terminal.

    Args:
        source: Python source text.

    Returns:
        The highlighted text, or ``source`` unchanged if pygments is missing.
    """
    try:
        from pygments import highlight
        from pygments.formatters import Terminal256Formatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return source
    return highlight(source, PythonLexer(), Terminal256Formatter())


def highlight_html(source: str) -> str:
    """Python source as self-contained HTML (inline styles), for ``_repr_html_`` in Jupyter.

    Args:
        source: Python source text.

    Returns:
        A ``<div>`` whose styles are inline (no stylesheet needed); without
        pygments, the escaped source in a ``<pre>``.

    >>> highlight_html("x = 1").startswith("<div")
    True
    """
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return f"<pre>{html.escape(source)}</pre>"
    return highlight(source, PythonLexer(), HtmlFormatter(noclasses=True))
