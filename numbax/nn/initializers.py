"""``numbax.nn.initializers``: ``jax.nn.initializers`` over ``numbax.random``, the same samples bit for bit.

Each constructor returns ``init(key, shape, dtype=...)`` as JAX's does, drawing from the ``numbax.random``
sampler JAX's initializer draws from and scaling as JAX scales (so float64 weights equal JAX's in its 64-bit
mode). The default dtype is float64, numbax's default float. Initializers run in Python, where parameters are
made (``init_fun(key, input_shape)``), not inside compiled code. Real floating dtypes only: a complex or integer
dtype is refused (JAX draws complex weights from a disk, which numbax.random does not sample).
"""
from __future__ import annotations

import math
from typing import Callable, Sequence, Union

import numpy as np

from numbax import random
from numbax.errors import NumbaxDtypeError

__all__ = ["zeros", "ones", "constant", "uniform", "normal", "truncated_normal", "variance_scaling",
           "glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal", "lecun_uniform", "lecun_normal",
           "he_uniform", "he_normal", "kaiming_uniform", "kaiming_normal"]

Axes = Union[int, Sequence[int]]
Initializer = Callable[..., np.ndarray]


def _real_dtype(dtype) -> np.dtype:
    """``dtype`` (float64 for ``None``) if it is a real floating type; a ``NumbaxDtypeError`` otherwise."""
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    if not np.issubdtype(dtype, np.floating):
        raise NumbaxDtypeError(f"numbax.nn.initializers draw real floating weights, not {dtype}",
                               hint="pass dtype=np.float64 or np.float32.")
    return dtype


def zeros(key, shape, dtype=None) -> np.ndarray:
    """An array of zeros (``key`` is unused)."""
    return np.zeros(shape, _real_dtype(dtype))


def ones(key, shape, dtype=None) -> np.ndarray:
    """An array of ones (``key`` is unused)."""
    return np.ones(shape, _real_dtype(dtype))


def constant(value, dtype=None) -> Initializer:
    """An initializer of arrays full of ``value``."""

    def init(key, shape, dtype=dtype):
        return np.full(shape, value, _real_dtype(dtype))

    return init


def uniform(scale=1e-2, dtype=None) -> Initializer:
    """An initializer of samples uniform in ``[0, scale)``."""

    def init(key, shape, dtype=dtype):
        dtype = _real_dtype(dtype)
        return random.uniform(key, shape, dtype) * np.asarray(scale, dtype)

    return init


def normal(stddev=1e-2, dtype=None) -> Initializer:
    """An initializer of normal samples of standard deviation ``stddev``."""

    def init(key, shape, dtype=dtype):
        dtype = _real_dtype(dtype)
        return random.normal(key, shape, dtype) * np.asarray(stddev, dtype)

    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0) -> Initializer:
    """An initializer of standard normal samples truncated to ``[lower, upper]``, times ``stddev``."""

    def init(key, shape, dtype=dtype):
        dtype = _real_dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) * np.asarray(stddev, dtype)

    return init


def _size(shape: Sequence[int], axes: Axes) -> int:
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def _compute_fans(shape: Sequence[int], in_axis: Axes, out_axis: Axes, batch_axis: Axes) -> tuple:
    """JAX's effective input and output sizes: axes not named make the receptive field."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor with "
                         "default in_axis. Must be at least 2D or specify in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive_field_size, out_size * receptive_field_size


def variance_scaling(scale, mode: str, distribution: str, in_axis: Axes = -2, out_axis: Axes = -1,
                     batch_axis: Axes = (), dtype=None) -> Initializer:
    """An initializer whose samples have variance ``scale / n``, ``n`` the fan the ``mode`` names.

    Args:
        scale: The variance's numerator.
        mode: ``"fan_in"``, ``"fan_out"``, ``"fan_avg"`` or ``"fan_geo_avg"``.
        distribution: ``"truncated_normal"`` (at two standard deviations), ``"normal"`` or ``"uniform"``.
        in_axis, out_axis, batch_axis: The axes of the weights' inputs, outputs and batch.
        dtype: The default dtype of the weights.

    Returns:
        ``init(key, shape, dtype=dtype)``, as ``jax.nn.initializers.variance_scaling``'s.
    """

    def init(key, shape, dtype=dtype):
        shape = tuple(int(d) for d in shape)
        dtype = _real_dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominators = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                        "fan_geo_avg": (fan_in * fan_out) ** 0.5}
        if mode not in denominators:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = np.asarray(scale / denominators[mode], dtype)
        if distribution == "truncated_normal":
            stddev = np.sqrt(variance) / np.asarray(.87962566103423978, dtype)  # the std of N(0, 1) on [-2, 2]
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * np.sqrt(variance)
        if distribution == "uniform":
            return random.uniform(key, shape, dtype, -1) * np.sqrt(3 * variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    return init


def _scaling(scale: float, mode: str, distribution: str, name: str) -> Callable[..., Initializer]:
    def constructor(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype=None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)

    constructor.__name__ = constructor.__qualname__ = name
    constructor.__doc__ = (f"``variance_scaling({scale}, {mode!r}, {distribution!r}, in_axis, out_axis, batch_axis, "
                           f"dtype)``, as ``jax.nn.initializers.{name}``.")
    return constructor


glorot_uniform = xavier_uniform = _scaling(1.0, "fan_avg", "uniform", "glorot_uniform")
glorot_normal = xavier_normal = _scaling(1.0, "fan_avg", "truncated_normal", "glorot_normal")
lecun_uniform = _scaling(1.0, "fan_in", "uniform", "lecun_uniform")
lecun_normal = _scaling(1.0, "fan_in", "truncated_normal", "lecun_normal")
he_uniform = kaiming_uniform = _scaling(2.0, "fan_in", "uniform", "he_uniform")
he_normal = kaiming_normal = _scaling(2.0, "fan_in", "truncated_normal", "he_normal")
