"""Why a compiled function compiles again: the parts of a specialization key that differ from the last one.

A key is ``(argument structure, static values, leaf types, debug_nans, debug_infs)``
followed by the ``(name, value)`` pairs of the call's form (``vmap``'s ``in_axes``;
``Jitted._specialization``). ``log_compiles`` prints the key in words and, for
a later compilation, what changed since the nearest earlier one.

    >>> import numpy as np
    >>> old = ("T", (2,), ((np.ndarray, np.dtype("float64"), 1),), False, False)
    >>> new = ("T", (3,), ((np.ndarray, np.dtype("float64"), 2),), False, False)
    >>> explain(new, [old], ["x"], ["n"])
    'static n: 2 -> 3; x: float64[1-d] -> float64[2-d]'
"""
from __future__ import annotations

from typing import Any, List, Sequence


def describe_leaf(leaf: Any) -> str:
    """``float64[2-d]`` for an array leaf, ``float`` for a Python number."""
    kind, dtype, ndim = leaf
    if dtype is None:
        return kind.__name__
    return f"{dtype}[{ndim}-d]" if ndim else f"{dtype} {kind.__name__}"


def describe(key: tuple, static_names: Sequence[str]) -> str:
    """The key in words: static values by name, then each leaf's type."""
    treedef, statics, leaves, nans, infs = key[:5]
    parts = [f"{name}={value!r}" for name, value in zip(static_names, statics)]
    parts += [f"{name}={value!r}" for name, value in key[5:]]
    parts.append("leaves " + ", ".join(describe_leaf(leaf) for leaf in leaves) if leaves else "no array leaves")
    parts += [flag for flag, on in (("debug_nans", nans), ("debug_infs", infs)) if on]
    return "; ".join(parts)


def explain(key: tuple, earlier: List[tuple], leaf_names: Sequence[str], static_names: Sequence[str]) -> str:
    """What differs between ``key`` and the earlier key that differs least.

    ``leaf_names`` names the leaves (the parameters, when each is one array or number); else they are
    numbered.
    """
    def differences(old: tuple) -> List[str]:
        out = []
        if old[0] != key[0]:
            out.append(f"argument structure {old[0]} -> {key[0]}")
        for name, a, b in zip(static_names, old[1], key[1]):
            if a != b:
                out.append(f"static {name}: {a!r} -> {b!r}")
        if len(old[2]) == len(key[2]):
            names = list(leaf_names) if len(leaf_names) == len(key[2]) else [f"leaf {i}" for i in range(len(key[2]))]
            for name, a, b in zip(names, old[2], key[2]):
                if a != b:
                    out.append(f"{name}: {describe_leaf(a)} -> {describe_leaf(b)}")
        for flag, a, b in (("debug_nans", old[3], key[3]), ("debug_infs", old[4], key[4])):
            if a != b:
                out.append(f"{flag} {'on' if b else 'off'}")
        for (name, a), (_, b) in zip(old[5:], key[5:]):
            if a != b:
                out.append(f"{name}: {a!r} -> {b!r}")
        return out or ["nothing numbax keys on (another thread compiled it meanwhile)"]

    return "; ".join(min((differences(old) for old in earlier), key=len))
