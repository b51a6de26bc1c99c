"""interpolation: the derivatives of ``np.interp(x, xp, fp)``, as ``jax.numpy.interp`` takes them.

JAX evaluates ``x`` on the segment ``i = clip(searchsorted(xp, x, side="right"), 1, len(xp) - 1)``:
``fp[i - 1] + (x - xp[i - 1]) / dx * (fp[i] - fp[i - 1])``, ``dx = xp[i] - xp[i - 1]``, or ``fp[i - 1]``
where ``|dx|`` is below ``spacing(eps)`` (repeated knots), and ``fp[0]`` / ``fp[-1]`` outside
``[xp[0], xp[-1]]``. So at a knot inside the range the derivative in ``x`` is the slope of the segment to
its right, at ``xp[-1]`` that of the last segment, and outside the range 0 (``interp_slope``); in ``fp`` it
is the weights of that formula, whose transpose ``interp_transpose(g, x, xp)`` gathers a cotangent ``g``
of the result into one of ``fp``'s shape (``slope=True``: the transpose of ``interp_slope`` in ``fp``).

    >>> xp, fp = np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 3.0])
    >>> interp_slope(np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 4.0]), xp, fp)
    array([0. , 2. , 0.5, 0.5, 0.5, 0. ])
    >>> interp_transpose(np.array([1.0, 1.0]), np.array([0.5, 5.0]), xp)
    array([0.5, 0.5, 1. ])
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import register_jitable

from numbax.runtime.cached import overload

__all__ = ["interp_slope", "interp_transpose"]

_REPEATED = float(np.spacing(np.finfo(np.float64).eps))  # |dx| at or below which JAX takes fp[i - 1]


@register_jitable
def _segment(xp, v):
    """JAX's segment of ``v``: ``i`` in ``[1, len(xp) - 1]`` with ``xp[i - 1] <= v < xp[i]`` where it can."""
    i = np.searchsorted(xp, v, side="right")
    return min(max(i, 1), xp.shape[0] - 1)


@register_jitable
def _slopes(flat, xp, fp):
    out = np.zeros(flat.shape[0], np.float64)
    for e in range(flat.shape[0]):
        v = flat[e]
        if v < xp[0] or v > xp[-1]:
            continue
        i = _segment(xp, v)
        dx = xp[i] - xp[i - 1]
        if abs(dx) > _REPEATED:
            out[e] = (fp[i] - fp[i - 1]) / dx
    return out


@register_jitable
def _transposed(g, flat, xp, slope):
    n = xp.shape[0]
    out = np.zeros(n, np.float64)
    for e in range(flat.shape[0]):
        v = flat[e]
        if v < xp[0] or v > xp[-1]:
            if not slope:
                out[0 if v < xp[0] else n - 1] += g[e]
            continue
        i = _segment(xp, v)
        dx = xp[i] - xp[i - 1]
        if abs(dx) <= _REPEATED:
            if not slope:
                out[i - 1] += g[e]
        elif slope:
            out[i] += g[e] / dx
            out[i - 1] -= g[e] / dx
        else:
            t = (v - xp[i - 1]) / dx
            out[i - 1] += g[e] * (1.0 - t)
            out[i] += g[e] * t
    return out


def _flat(x):
    return np.ravel(np.asarray(x, dtype=np.float64))


def interp_slope(x, xp, fp):
    """The derivative of ``np.interp(x, xp, fp)`` in ``x``, JAX's: a float (array) of ``x``'s shape."""
    out = _slopes(_flat(x), np.asarray(xp), np.asarray(fp)).reshape(np.shape(x))
    return out if out.ndim else out[()]


def interp_transpose(g, x, xp, slope=False):
    """``g`` (of the result's shape) gathered into ``fp``'s shape by the weights of ``fp`` in ``np.interp(x, xp,
    fp)`` (with ``slope``: in ``interp_slope(x, xp, fp)``)."""
    return _transposed(_flat(np.broadcast_to(g, np.shape(x))), _flat(x), np.asarray(xp), slope)


@overload(interp_slope)
def _interp_slope(x, xp, fp):
    if isinstance(x, types.Array):
        return lambda x, xp, fp: _slopes(np.ravel(x).astype(np.float64), xp, fp).reshape(x.shape)
    return lambda x, xp, fp: _slopes(np.array([float(x)]), xp, fp)[0]


@overload(interp_transpose)
def _interp_transpose(g, x, xp, slope=False):
    if isinstance(x, types.Array):
        return lambda g, x, xp, slope=False: _transposed(np.ravel(g * np.ones(x.shape)), np.ravel(x).astype(
            np.float64), xp, slope)
    return lambda g, x, xp, slope=False: _transposed(np.array([float(g)]), np.array([float(x)]), xp, slope)
