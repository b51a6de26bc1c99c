"""Composites: NumPy functions that numbax compiles as Python written in other primitives (``registry``'s
``composite``; each is one function: the specializer inlines a composite, not the helpers it would call), as ``jax.numpy`` writes them in ``lax``: ``np.diff``, ``np.take``, ``np.average``,
``np.cross``, ``np.kron``, ``np.deg2rad`` (``radians``) and ``np.rad2deg`` (``degrees``), ``np.float_power``,
``np.heaviside``, ``np.vander``, ``np.linalg.matrix_power``.

Each function takes NumPy's parameters that numbax implements (``keywords.IMPLEMENTED`` lists them; any other
keyword is refused at the user's line unless it has its default) and gives NumPy's value; its derivatives in
both modes, to any order, its batching and its GPU lowering are those of the primitives it calls, which are
JAX's where JAX writes the function the same way. Indexing here is bounds-checked as the user's is: an index
out of bounds raises IndexError, as NumPy's ``take`` does (JAX's fills), never a value of another element.
"""
import numpy as np

from numbax.primitives.registry import define


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """``np.diff``: ``n`` differences of neighbours along ``axis``, after ``prepend`` and before ``append`` (a
    number is broadcast to one slice along ``axis``)."""
    if n < 0:
        raise ValueError("order must be non-negative")
    b = np.moveaxis(a, axis, -1)
    if prepend is not None:
        first = np.zeros_like(b[..., :1]) + prepend if np.asarray(prepend).ndim == 0 else np.moveaxis(prepend, axis, -1)
        b = np.concatenate((first, b), axis=-1)
    if append is not None:
        last = np.zeros_like(b[..., :1]) + append if np.asarray(append).ndim == 0 else np.moveaxis(append, axis, -1)
        b = np.concatenate((b, last), axis=-1)
    for _ in range(n):
        b = b[..., 1:] - b[..., :-1]
    return np.moveaxis(b, -1, axis)


def deg2rad(x):
    """``x * (pi / 180)``, NumPy's and JAX's."""
    return x * (np.pi / 180.0)


def rad2deg(x):
    """``x * (180 / pi)``, NumPy's and JAX's."""
    return x * (180.0 / np.pi)


define(np.diff, composite=diff)
define(np.deg2rad, np.radians, composite=deg2rad)
define(np.rad2deg, np.degrees, composite=rad2deg)
