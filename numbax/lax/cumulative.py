"""``jax.lax``'s cumulative reductions along one axis, written in the NumPy numbax compiles.

Called outside compiled code each runs as NumPy; inside, numbax specializes its source like the user's, so
every transformation differentiates, batches and compiles it from the registry's rules. ``reverse=True``
accumulates from the end of the axis, as JAX does. ``cummax``/``cummin`` are not here: JAX's derivative at
ties follows the pairwise tree of its associative scan, which a running maximum does not reproduce.

    >>> cumsum(np.array([1.0, 2.0, 3.0]), reverse=True)
    array([6., 5., 3.])
"""
from __future__ import annotations

import numpy as np

from numbax.ast_passes.specialize.compile_time import specialized_from_source
from numbax import lax

__all__ = ["cumsum", "cumprod", "cumlogsumexp"]


@specialized_from_source
def cumsum(operand, axis=0, reverse=False):
    """The running sums of ``operand`` along ``axis`` (``jax.lax.cumsum``)."""
    if reverse:
        return np.flip(np.cumsum(np.flip(operand, axis), axis=axis), axis)
    return np.cumsum(operand, axis=axis)


@specialized_from_source
def cumprod(operand, axis=0, reverse=False):
    """The running products of ``operand`` along ``axis`` (``jax.lax.cumprod``)."""
    if reverse:
        return np.flip(np.cumprod(np.flip(operand, axis), axis=axis), axis)
    return np.cumprod(operand, axis=axis)


@specialized_from_source
def cumlogsumexp(operand, axis=0, reverse=False):
    """``log(cumsum(exp(operand)))`` along ``axis`` without overflow (``jax.lax.cumlogsumexp``): each prefix's
    (each suffix's with ``reverse``) ``logsumexp``, the other elements masked to ``-inf`` (quadratic in the
    axis's length, for a derivative that is every transformation's)."""
    rows = np.moveaxis(operand, axis, -1)
    n = rows.shape[-1]
    prefix = np.tri(n) > 0.5
    if reverse:
        prefix = prefix.T
    masked = np.where(prefix, np.expand_dims(rows, -2), -np.inf)
    top = np.max(masked, axis=-1, keepdims=True)
    top = lax.stop_gradient(np.where(np.isfinite(top), top, 0.0))  # as numbax.scipy.special.logsumexp
    return np.moveaxis(np.sum(np.log(np.sum(np.exp(masked - top), axis=-1, keepdims=True)) + top, axis=-1), -1, axis)
