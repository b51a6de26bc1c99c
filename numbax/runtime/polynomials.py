"""polynomials: ``np.polyval``, which Numba lacks, and the pieces of its derivatives.

``polyval(p, x)`` is Horner's rule over the coefficients ``p`` (highest power first), as NumPy computes it;
its derivative in ``x`` is the derivative polynomial, ``p[:-1] * polyder_weights(p)`` (``n - 1, ..., 1``);
in ``p`` it is the powers of ``x``, whose contraction with a cotangent ``g`` is ``polyval_grad_p(g, p, x)``:
``sum(g * x ** (n - 1 - k))`` for each ``k``, ``p`` read for its length only. Each is linear in what carries
a cotangent, so their own derivatives are these again (``numbax.primitives.polynomials``).

    >>> polyval(np.array([1.0, 2.0, 3.0]), np.array([0.0, 2.0]))
    array([ 3., 11.])
    >>> polyval_grad_p(np.array([1.0, 1.0]), np.zeros(3), np.array([0.0, 2.0]))
    array([4., 2., 2.])
    >>> polyder_weights(np.zeros(4))
    array([3., 2., 1.])
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError

from numbax.runtime.cached import overload

__all__ = ["polyval", "polyval_grad_p", "polyder_weights"]


def _vector(fn: str, p) -> None:
    if np.ndim(p) != 1:
        raise TypeError(f"{fn}: the coefficients must be a 1-D array, not {np.ndim(p)}-D")


def polyval(p, x):
    """``np.polyval(p, x)`` of a 1-D ``p``."""
    _vector("polyval", p)
    return np.polyval(p, x)


def polyval_grad_p(g, p, x):
    """The cotangent of ``p`` in ``np.polyval(p, x)`` for the cotangent ``g`` of its result."""
    _vector("polyval_grad_p", p)
    n = len(p)
    acc = np.asarray(g * np.ones_like(x, dtype=np.float64))
    out = np.zeros(n, np.result_type(acc, np.float64))
    for k in range(n - 1, -1, -1):
        out[k] = np.sum(acc)
        acc = acc * x
    return out


def polyder_weights(p):
    """The factors ``n - 1, ..., 1`` that turn ``p[:-1]`` into the coefficients of ``p``'s derivative."""
    return np.arange(len(p) - 1, 0, -1).astype(np.float64)


def _check_vector(fn: str, p) -> None:
    if not (isinstance(p, types.Array) and p.ndim == 1):
        raise TypingError(f"{fn}: the coefficients must be a 1-D array, not {p}")


@overload(polyval)
def _polyval(p, x):
    _check_vector("polyval", p)

    def impl(p, x):
        y = x * 0 + np.sum(p[:1])
        for i in range(1, p.shape[0]):
            y = y * x + p[i]
        return y

    return impl


@overload(polyval_grad_p)
def _polyval_grad_p(g, p, x):
    _check_vector("polyval_grad_p", p)
    if isinstance(g, types.Array) or isinstance(x, types.Array):
        def impl(g, p, x):
            acc = g * (x * 0 + 1.0)
            out = np.zeros(p.shape[0], np.float64)
            for k in range(p.shape[0] - 1, -1, -1):
                out[k] = np.sum(acc)
                acc = acc * x
            return out

        return impl

    def scalar(g, p, x):
        acc = g * 1.0
        out = np.zeros(p.shape[0], np.float64)
        for k in range(p.shape[0] - 1, -1, -1):
            out[k] = acc
            acc = acc * x
        return out

    return scalar


@overload(polyder_weights)
def _polyder_weights(p):
    _check_vector("polyder_weights", p)
    return lambda p: np.arange(p.shape[0] - 1, 0, -1).astype(np.float64)
