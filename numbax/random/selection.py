"""selection: permutations, choices and categorical draws, JAX's bit for bit.

Numba kernels draw the random indices (``numbax.runtime.random.indices``); plain NumPy gathers with them. The
functions that gather (``take``, ``permute``, ``draw_choice``, ``draw_categorical``) are written in
the NumPy that numbax compiles and marked ``specialized_from_source``: outside ``jit`` they run as
Python, inside it numbax compiles their source at the call. Both paths share them, and a gathered
array carries the derivative that indexing it has.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from numbax.ast_passes.specialize.compile_time import specialized_from_source
from numbax.random.arguments import Shape, as_key, as_shape, check_broadcast, fail, inexact_dtype
from numbax.runtime.random.continuous import gumbel_kernel
from numbax.runtime.random.indices import choice_kernel, permutation_kernel, shuffle_kernel, weighted_choice_kernel

__all__ = ["permutation", "choice", "categorical"]


@specialized_from_source
def take(x, index, axis):
    """``np.take(x, index, axis)`` for a 1-D ``index``: ``x``'s entries along ``axis``, in ``index``'s order."""
    if axis == 0:
        return x[index]
    return np.ascontiguousarray(np.moveaxis(np.moveaxis(x, axis, 0)[index], 0, axis))


@specialized_from_source
def permute(key, x, axis, independent):
    """``jax.random.permutation(key, x, axis, independent)`` of an array ``x``, ``axis`` in ``[0, x.ndim)``."""
    if independent and x.ndim > 1:
        return np.ravel(x)[np.ravel(shuffle_kernel(key, x.shape, axis))].reshape(x.shape)
    return take(x, permutation_kernel(key, x.shape[axis]), axis)


@specialized_from_source
def draw_choice(key, a, shape, replace, p, axis, from_range):
    """``jax.random.choice`` past its checks: of ``range(a)`` where ``from_range``, else of the array ``a``
    along ``axis`` (in ``[0, a.ndim)``), by the weights ``p`` (None: uniformly)."""
    if from_range:
        n = a
    else:
        n = a.shape[axis]
    if p is None:
        index = choice_kernel(key, shape, n, replace)
    else:
        index = weighted_choice_kernel(key, shape, n, replace, p)
    if from_range:
        return index
    if a.ndim > 1 and math.prod(shape) == 0:
        return np.zeros(shape, a.dtype)  # JAX's: the draw shape, not the gathered one (a 1-D a's gathered one)
    return take(a, np.ravel(index), axis).reshape(a.shape[:axis] + shape + a.shape[axis + 1:])


@specialized_from_source
def draw_categorical(key, logits, axis, shape, dtype):
    """``jax.random.categorical`` past its checks: ``axis`` negative, ``shape`` the sample's (its trailing
    dimensions the batch shape, ``logits.shape`` without ``axis``), or None for the batch shape."""
    if shape is None:
        noise_shape = logits.shape
    else:
        position = len(shape) + axis + 1
        noise_shape = shape[:position] + (logits.shape[axis],) + shape[position:]
    if logits.dtype != dtype:  # integer logits, which carry no derivative
        logits = logits.astype(dtype)
    return np.argmax(gumbel_kernel(key, noise_shape, dtype) + logits, axis=axis)


def permutation_of_range(ndim: int, dtype: np.dtype) -> bool:
    """Whether ``permutation``'s ``x`` is an int ``n`` (permute ``arange(n)``) rather than an array."""
    if ndim:
        return False
    if not np.issubdtype(dtype, np.integer):
        raise fail(f"numbax.random.permutation: x must be an integer or an array with at least one axis, got a "
                   f"{dtype} scalar")
    return True


def check_choice_counts(n: int, shape: Shape, replace: bool, p_shape: Optional[Shape]) -> None:
    """A choice of ``shape`` from ``n`` entries, weighted by a ``p`` of ``p_shape`` (None: unweighted), must be
    possible. The kernels check again where ``n`` or ``p`` is known only when they run."""
    draws = math.prod(shape)
    if draws == 0:
        return
    if n <= 0:
        raise fail("numbax.random.choice: a must be positive unless no samples are taken")
    if not replace and draws > n:
        raise fail(f"numbax.random.choice: cannot take {draws} samples from {n} without replacement",
                   "draw fewer samples, or pass replace=True")
    if p_shape is not None and p_shape != (n,):
        raise fail(f"numbax.random.choice: p has shape {p_shape}, not ({n},) as a.shape[axis]")


def categorical_arguments(logits_shape: Optional[Shape], ndim: int, axis: int, shape):
    """``(axis, shape)``: ``axis`` made negative, and ``shape`` checked against the batch shape (``logits_shape``
    without ``axis``, where it is known now; None when only its length is)."""
    if ndim == 0:
        raise fail("numbax.random.categorical: logits must have at least one axis, the categories'")
    axis = axis % ndim - ndim
    if shape is None:
        return axis, None
    shape = as_shape(shape, "categorical")
    batch_shape = (1,) * (ndim - 1) if logits_shape is None else logits_shape[:axis] + logits_shape[axis:][1:]
    check_broadcast("categorical", shape, batch_shape)
    return axis, shape


def permutation(key, x, axis: int = 0, independent: bool = False) -> np.ndarray:
    """A random permutation of ``arange(x)``, or of ``x``'s entries along ``axis``: ``jax.random.permutation``.

    Args:
        key: a key.
        x: an int ``n`` (permute ``arange(n)``) or an array.
        axis: the axis to permute.
        independent: permute each slice along ``axis`` independently.
    """
    key, array = as_key(key, "permutation"), np.asarray(x)
    if permutation_of_range(array.ndim, array.dtype):
        return permutation_kernel(key, int(x))
    return permute(key, array, axis % array.ndim, bool(independent))


def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0) -> np.ndarray:
    """A random sample of ``a`` (or ``arange(a)``), optionally weighted or without replacement: ``jax.random.choice``.

    Args:
        key: a key.
        a: an int ``n`` or an array to sample along ``axis``.
        shape: the number of draws, as a shape.
        replace: draw with replacement.
        p: probabilities of the entries (``None``: uniform).
        axis: the axis of ``a`` to draw along.
    """
    key, shape, array = as_key(key, "choice"), as_shape(shape, "choice"), np.asarray(a)
    from_range = array.ndim == 0
    axis = 0 if from_range else axis % array.ndim
    weights = None if p is None else np.asarray(p)
    if weights is not None:
        inexact_dtype(weights.dtype, "choice")
    check_choice_counts(int(a) if from_range else array.shape[axis], shape, bool(replace),
                        None if p is None else weights.shape)
    return draw_choice(key, int(a) if from_range else array, shape, bool(replace), weights, axis, from_range)


def categorical(key, logits, axis: int = -1, shape=None) -> np.ndarray:
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis``: ``jax.random.categorical``.

    The Gumbel-max trick: the index of the largest ``logits + gumbel noise``.

    Args:
        key: a key.
        logits: unnormalised log-probabilities, float32 or float64.
        axis: the axis of categories.
        shape: the sample's shape, ending with the batch shape (``logits.shape`` without ``axis``);
            ``None`` means the batch shape.
    """
    logits = np.asarray(logits)
    axis, shape = categorical_arguments(logits.shape, logits.ndim, axis, shape)
    return draw_categorical(as_key(key, "categorical"), logits, axis, shape,
                            inexact_dtype(logits.dtype, "categorical").type)
