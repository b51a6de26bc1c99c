"""The per-call fast path: signatures that Numba's C dispatcher may serve without numbax's Python code.

A ``numbax.api.Jitted`` is a Numba dispatcher at the C level. When every
argument is a dynamic leaf (no static arguments, no containers, no captured
constants), Numba's type dispatch is all a call needs (a Numba type holds the
dtype and ndim that numbax's cache key and generated code read): numbax registers the compiled entry point
for the exact Numba types of those arguments in the C table, and later calls
with the same types run it directly. Any other call misses the table and takes
numbax's Python path.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

# Argument types whose Numba type code says everything numbax's cache key does. Python ints are left
# out: Numba's C dispatch types every int as int64, numbax types ints >= 2**63 as uint64.
FAST_LEAF_TYPES = frozenset({np.ndarray, float, complex, bool})


def entry_for(function: Any, leaves: List[Any]) -> Optional[Tuple[Tuple[int, ...], Any]]:
    """``(Numba type codes of the leaves, compiled entry point)`` of the overload these leaves just ran."""
    overloads = getattr(function, "overloads", None)
    if overloads is None:  # NUMBA_DISABLE_JIT: a plain Python function
        return None
    from numba.core.typing.typeof import Purpose, typeof

    types = tuple(typeof(leaf, Purpose.argument) for leaf in leaves)
    result = overloads.get(types)
    if result is None or result.objectmode:
        return None
    return tuple(t._code for t in types), result.entry_point


def eligible(compiled: Any) -> bool:
    """Whether a compiled specialization returns what the user gets, with nothing to add or rebuild."""
    generated = compiled.generated
    return not generated.constants and not generated.assumes_shapes and \
        (compiled.single or compiled.flat_tuple)
