"""JAX's indexed updates, ``x.at[idx].set(v)`` and the rest, inside compiled code: functional updates.

``x.at[idx]`` of a run-time array is a compile-time value (``AtIndex``); its methods call the NumPy
functions below, which numbax specializes from their source like the user's: a copy of ``x`` written at
``idx`` from ``x``'s own values there (``x`` itself unchanged, as in JAX; no view of the copy is read after
the write), differentiated and batched like any other code. Outside
compiled code a NumPy array has no ``.at``; inside it, the methods JAX has are these:

- ``set``, ``add``, ``subtract``, ``multiply``, ``divide``, ``power``, ``min``, ``max``, and ``get``.

An update other than ``set`` through an integer-array index is refused: JAX accumulates repeated indices
(a scatter) where NumPy's ``out[idx] += v`` applies one of them. Keywords (``mode=``, ``indices_are_sorted=``,
...) are refused, not ignored; numbax checks indices and raises ``IndexError`` where JAX would clamp or drop
an out-of-bounds one.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numbax import tree_util
from numbax.ast_passes.specialize.compile_time import specialized_from_source
from numbax.ast_passes.specialize.values import Dyn


@specialized_from_source
def at_set(x, index, value):
    """``x.at[index].set(value)``."""
    out = np.copy(x)
    out[index] = value
    return out


@specialized_from_source
def at_add(x, index, value):
    """``x.at[index].add(value)``."""
    out = np.copy(x)
    out[index] = x[index] + value
    return out


@specialized_from_source
def at_subtract(x, index, value):
    """``x.at[index].subtract(value)``."""
    out = np.copy(x)
    out[index] = x[index] - value
    return out


@specialized_from_source
def at_multiply(x, index, value):
    """``x.at[index].multiply(value)``."""
    out = np.copy(x)
    out[index] = x[index] * value
    return out


@specialized_from_source
def at_divide(x, index, value):
    """``x.at[index].divide(value)``."""
    out = np.copy(x)
    out[index] = x[index] / value
    return out


@specialized_from_source
def at_power(x, index, value):
    """``x.at[index].power(value)``."""
    out = np.copy(x)
    out[index] = x[index] ** value
    return out


@specialized_from_source
def at_min(x, index, value):
    """``x.at[index].min(value)``."""
    out = np.copy(x)
    out[index] = np.minimum(x[index], value)
    return out


@specialized_from_source
def at_max(x, index, value):
    """``x.at[index].max(value)``."""
    out = np.copy(x)
    out[index] = np.maximum(x[index], value)
    return out


@specialized_from_source
def at_get(x, index):
    """``x.at[index].get()``."""
    return x[index]


_UPDATES = {"set": at_set, "add": at_add, "subtract": at_subtract, "multiply": at_multiply, "divide": at_divide,
            "power": at_power, "min": at_min, "max": at_max}


class AtIndexer:
    """``x.at`` of a run-time array ``x``: indexed, an ``AtIndex``."""

    def __init__(self, array: Dyn):
        self.array = array

    def at_index(self, index: Any) -> "AtIndex":
        """``x.at[index]``."""
        return AtIndex(self.array, index)


class AtIndex:
    """``x.at[index]``: its methods are JAX's indexed updates (``set``, ``add``, ...) and ``get``."""

    def __init__(self, array: Dyn, index: Any):
        self.array = array
        self.index = index

    def __getattr__(self, name: str) -> "_Update":
        if name.startswith("__"):
            raise AttributeError(name)
        return _Update(self, name)


def _array_index(index: Any) -> bool:
    """Whether ``index`` holds an array (or a run-time value that may be one) as an index: an integer-array
    index may repeat a position."""
    for leaf in tree_util.tree_leaves(index if isinstance(index, tuple) else (index,)):
        if isinstance(leaf, np.ndarray) or (isinstance(leaf, Dyn) and (leaf.aval is None or leaf.aval.ndim > 0)):
            return True
    return False


class _Update:
    """``x.at[index].<name>``, called inside compiled code."""

    def __init__(self, at: AtIndex, name: str):
        self.at = at
        self.name = name

    def _numbax_specialize(self, spec, node, args, kwargs):
        what = f"x.at[...].{self.name}"
        if kwargs:
            spec.fail(node, f"{what}() with the keyword {sorted(kwargs)[0]!r}, which numbax does not implement",
                      hint="call it without keywords (numbax checks indices and raises IndexError out of bounds).")
        if self.name == "get":
            if args:
                spec.fail(node, f"{what}() takes no arguments")
            return spec.call_python_function(node, at_get, [self.at.array, self.at.index], {})
        if self.name not in _UPDATES:
            spec.fail(node, f"{what} is not one of JAX's indexed updates",
                      hint=f"use one of {', '.join(sorted(_UPDATES))} or get.")
        if len(args) != 1:
            spec.fail(node, f"{what}() takes one argument, the values")
        if self.name != "set" and _array_index(self.at.index):
            spec.fail(node, f"{what}() through an integer-array index, whose repeated positions JAX accumulates",
                      hint="index with integers and slices, or build the update with a loop.")
        return spec.call_python_function(node, _UPDATES[self.name], [self.at.array, self.at.index, args[0]], {})
