"""Cotangents where a value changes kind: between complex and real values (JAX's convention: the adjoint of a real
is real), and through a write that casts to integers."""
from __future__ import annotations

import numpy as np
from numba import types

from numbax.runtime.cached import overload

__all__ = ["match_kind", "stored_cotangent"]


def match_kind(g, x):
    """The cotangent ``g`` in the kind of its primal ``x``: its real part for a real ``x`` (``x + 1j * x``
    sends a complex cotangent back to a real input), complex for a complex ``x`` (``np.real(z)`` sends a
    real one back to a complex input)."""
    if np.iscomplexobj(x):
        return g if np.iscomplexobj(g) else np.asarray(g) + 0j if np.ndim(g) else complex(g)
    return np.real(g) if np.ndim(g) else float(np.real(g))


def _is_complex(t) -> bool:
    return isinstance(getattr(t, "dtype", t), types.Complex)


@overload(match_kind)
def _match_kind(g, x):
    if _is_complex(x):
        if _is_complex(g):
            return lambda g, x: g
        return lambda g, x: g + 0j
    if _is_complex(g):
        return lambda g, x: g.real
    return lambda g, x: g


def stored_cotangent(g, array):
    """What passes through a write into ``array`` (or a cast to its dtype, ``.astype``) of a value whose
    (co)tangent is ``g``: ``g`` itself, its real part where ``array`` holds real floats and ``g`` is complex
    (the cast keeps the real part, as JAX's ``convert_element_type``), or zeros where ``array`` holds integers
    or booleans (the cast has no derivative then). For writes whose target's dtype numbax did not infer: Numba
    decides it once, at compile time. ``array`` may be a list or tuple of arrays (``np.split``'s), written
    element by element."""
    if isinstance(array, (list, tuple)):
        array = array[0] if array else 0.0
    kind = np.asarray(array).dtype.kind
    if kind == "f" and np.iscomplexobj(g):
        return np.real(g) if np.ndim(g) else float(np.real(g))
    if kind in "fc":
        return g
    return np.zeros_like(g) if np.ndim(g) else 0.0


@overload(stored_cotangent)
def _stored_cotangent(g, array):
    if isinstance(array, (types.List, types.UniTuple)):  # a sequence of arrays: their elements' dtype
        array = array.dtype
    if isinstance(getattr(array, "dtype", array), types.Float) and _is_complex(g):
        return lambda g, array: np.real(g)
    if isinstance(getattr(array, "dtype", array), (types.Float, types.Complex)):
        return lambda g, array: g
    if isinstance(g, types.Array):
        return lambda g, array: np.zeros_like(g)
    return lambda g, array: 0.0
