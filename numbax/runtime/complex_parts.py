"""Cotangents at the boundary between complex and real values (JAX's convention: the adjoint of a real is real)."""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

__all__ = ["match_kind"]


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
