"""The per-call fast path: hand plain array arguments straight to a Numba dispatcher.

When every argument is a dynamic leaf (no static arguments, no containers, no
captured constants) and the generated code did not depend on dtypes or ndims,
Numba's own type dispatch (in C) is all a call needs. The fast dispatcher has
compilation disabled and only holds signatures numbax compiled through the full
path, so an unseen argument type raises ``TypeError`` and falls back to it.
"""
from __future__ import annotations

from typing import Any, List


class FastPath:
    """A compile-disabled Numba dispatcher for one generated function."""

    def __init__(self, dispatcher: Any, options: dict):
        import numba

        self.source_module = dispatcher.py_func.__module__
        self.dispatcher = numba.njit(cache=True, **options)(dispatcher.py_func)

    def add(self, leaves: List[Any]) -> None:
        """Make the signature of these argument values callable without numbax's dispatch."""
        import numba

        sig = tuple(numba.typeof(leaf) for leaf in leaves)
        self.dispatcher.disable_compile(False)
        self.dispatcher.compile(sig)
        self.dispatcher.disable_compile(True)


def is_no_match(exc: TypeError) -> bool:
    """Whether Numba refused the argument types (rather than the function raising TypeError)."""
    return str(exc).startswith("No matching definition")


def eligible(compiled: Any, treedef_is_flat: bool) -> bool:
    """Whether a compiled specialization can serve calls through the fast path."""
    generated = compiled.generated
    return (treedef_is_flat and not generated.constants and not generated.reads_avals
            and (compiled.single or compiled.flat_tuple))
