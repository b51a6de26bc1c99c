"""convolution: ``np.convolve(a, v, mode)`` in every mode (Numba's has ``"full"`` only) and its adjoint.

A ``"same"`` or ``"valid"`` convolution is the full one's elements from ``s`` on: ``s = (min(N, M) - 1) // 2``
and ``min(N, M) - 1`` for operands of lengths ``N`` and ``M`` (which NumPy swaps when ``v`` is the longer, so
the result is symmetric in them). The cotangent of either operand, ``like``, for a cotangent ``g`` of the
result is a correlation with the other operand: ``out[k] = sum_j g[j] * other[j + s - k]``
(``convolve_vjp(g, other, like, mode)``, ``like`` read for its length only). It is bilinear in ``g`` and
``other``, and its own adjoints are ``np.convolve`` and itself (``numbax.primitives.polynomials``).

    >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0]), "same")
    array([0., 1., 2.])
    >>> convolve_vjp(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0]), np.zeros(3), "same")
    array([0., 0., 0.])
"""
from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from numbax.runtime.cached import overload

__all__ = ["convolve", "convolve_vjp"]


@register_jitable
def _start(n, m, mode):
    """Where the ``mode`` result starts in the full convolution of lengths ``n`` and ``m``, and its length."""
    shorter, longer = min(n, m), max(n, m)
    if mode == "full":
        return 0, n + m - 1
    if mode == "same":
        return (shorter - 1) // 2, longer
    if mode == "valid":
        return shorter - 1, longer - shorter + 1
    raise ValueError("np.convolve: mode must be 'full', 'same' or 'valid'")


@register_jitable
def _convolve(a, v, mode):
    n, m = a.shape[0], v.shape[0]
    if n == 0 or m == 0:
        raise ValueError("np.convolve: an operand is empty")
    s, length = _start(n, m, mode)
    out = np.zeros(length, (a[:1] * v[:1]).dtype)
    for j in range(length):
        for k in range(max(0, j + s - m + 1), min(n, j + s + 1)):
            out[j] += a[k] * v[j + s - k]
    return out


@register_jitable
def _convolve_vjp(g, other, n_like, mode):
    m = other.shape[0]
    s, _ = _start(n_like, m, mode)
    out = np.zeros(n_like, (g[:1] * other[:1]).dtype)
    for k in range(n_like):
        for j in range(max(0, k - s), min(g.shape[0], k - s + m)):
            out[k] += g[j] * other[j + s - k]
    return out


def convolve(a, v, mode="full"):
    """``np.convolve(a, v, mode)``."""
    return np.convolve(a, v, mode)


def convolve_vjp(g, other, like, mode="full"):
    """The cotangent of the operand ``like`` of ``np.convolve`` (either) whose other operand is ``other``, for
    the cotangent ``g`` of its result."""
    return _convolve_vjp(np.asarray(g), np.asarray(other), len(like), mode)


@overload(convolve)
def _convolve_overload(a, v, mode="full"):
    return lambda a, v, mode="full": _convolve(a, v, mode)


@overload(convolve_vjp)
def _convolve_vjp_overload(g, other, like, mode="full"):
    return lambda g, other, like, mode="full": _convolve_vjp(g, other, like.shape[0], mode)
