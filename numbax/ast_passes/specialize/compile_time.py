"""Calls of numbax's own Python-level functions (``tree_util``) run at compile time, on containers of leaves.

``tree_map(f, params)`` inside a compiled function maps over a pytree whose
structure is known while specializing, so the map itself runs now: the
container is flattened in Python and ``f`` is specialized for each leaf, its
calls landing in the generated code in leaf order.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List

from numbax.ast_passes.specialize.values import LocalFunction
from numbax.errors import NumbaxError


def run_at_compile_time(fn: Callable, spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` now, with function arguments specialized at each call; errors at ``node``."""

    def as_python(value: Any) -> Any:
        if isinstance(value, LocalFunction) or (callable(value) and not isinstance(value, type)):
            return lambda *a, **k: spec.call_value(node, value, list(a), dict(k))
        return value

    try:
        return fn(*[as_python(a) for a in args], **{k: as_python(v) for k, v in kwargs.items()})
    except NumbaxError:
        raise
    except Exception as exc:  # the user's own error (mismatched structures), at their line
        spec.fail(node, f"{type(exc).__name__} in {fn.__name__} at compile time: {exc}")

