"""The ``python`` backend: run generated code as plain Python, for debugging."""
from __future__ import annotations

from typing import Callable, Optional

from numbax.backends.module_cache import module_for


def compile_function(source: str, name: str, cache_dir: Optional[str], **options) -> Callable:
    """The generated function, uncompiled."""
    return getattr(module_for(source, name, cache_dir), name)
