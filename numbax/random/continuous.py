"""continuous: uniform, normal, exponential, Gumbel, truncated normal and gamma samples, JAX's bit for bit.

Each sampler is a thin Python function (argument checks, NumPy defaults) around a Numba kernel
``*_kernel(key, shape, dtype, ...)`` of ``numbax.runtime.random.continuous``.
"""
from __future__ import annotations

import numpy as np

from numbax.random.arguments import as_key, as_shape, check_broadcast, fail, float_dtype, parameter, sample_shape
from numbax.runtime.random.continuous import exponential_kernel, gamma_kernel, gumbel_kernel, normal_kernel, \
    truncated_normal_kernel, uniform_kernel

__all__ = ["uniform", "normal", "exponential", "gumbel", "truncated_normal", "gamma"]


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0) -> np.ndarray:
    """Floats uniform in ``[minval, maxval)``: ``jax.random.uniform``, bit for bit.

    Args:
        key: a key from ``PRNGKey``, ``split`` or ``fold_in``.
        shape: the sample's shape (an int ``n`` means ``(n,)``).
        dtype: float32 or float64 (NumPy's default, float64, where JAX defaults to float32).
        minval, maxval: bounds that broadcast to ``shape``.

    Returns:
        An array of ``shape`` and ``dtype`` (0-d for ``shape=()``).
    """
    shape, dtype = as_shape(shape, "uniform"), float_dtype(dtype, "uniform")
    check_broadcast("uniform", shape, np.shape(minval), np.shape(maxval))
    return uniform_kernel(as_key(key, "uniform"), shape, dtype.type, parameter(minval, dtype, shape),
                          parameter(maxval, dtype, shape))


def _standard_sampler(name: str, kernel, summary: str):
    """The public sampler ``name(key, shape=(), dtype=None)`` around a kernel of a parameterless distribution."""
    def sampler(key, shape=(), dtype=None) -> np.ndarray:
        shape, dtype = as_shape(shape, name), float_dtype(dtype, name)
        return kernel(as_key(key, name), shape, dtype.type)

    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = f"""{summary}: ``jax.random.{name}``, bit for bit.

    Args:
        key: a key.
        shape: the sample's shape (an int ``n`` means ``(n,)``).
        dtype: float32 or float64 (default float64).
    """
    return sampler


normal = _standard_sampler("normal", normal_kernel,
                           "Standard normal samples, ``sqrt(2) * erf_inv(u)`` for ``u`` uniform in ``(-1, 1)``")
exponential = _standard_sampler("exponential", exponential_kernel, "Standard exponential samples, ``-log1p(-u)``")
gumbel = _standard_sampler("gumbel", gumbel_kernel,
                           "Standard Gumbel samples, ``-log(-log(u))`` (JAX's default ``mode='low'``)")


def truncated_normal(key, lower, upper, shape=None, dtype=None) -> np.ndarray:
    """Standard normal samples conditioned on ``lower < x < upper``: ``jax.random.truncated_normal``.

    Args:
        key: a key.
        lower, upper: the bounds, broadcast to ``shape``.
        shape: the sample's shape; ``None`` takes the bounds' broadcast shape.
        dtype: float32 or float64 (default float64).
    """
    dtype = float_dtype(dtype, "truncated_normal")
    shape = sample_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    return truncated_normal_kernel(as_key(key, "truncated_normal"), shape, dtype.type, np.asarray(lower, dtype),
                                   np.asarray(upper, dtype))


def gamma(key, a, shape=None, dtype=None) -> np.ndarray:
    """Gamma(a) samples by Marsaglia and Tsang's rejection method: ``jax.random.gamma``, bit for bit.

    Args:
        key: a key.
        a: the shape parameter(s), positive, broadcast to ``shape``.
        shape: the sample's shape; ``None`` takes ``a``'s shape.
        dtype: float32 or float64 (default float64).
    """
    dtype = float_dtype(dtype, "gamma")
    shape = sample_shape("gamma", shape, np.shape(a))
    alpha = np.asarray(a, dtype)
    check_gamma_parameter(alpha)
    return gamma_kernel(as_key(key, "gamma"), shape, dtype.type, alpha)


def check_gamma_parameter(alpha: np.ndarray) -> None:
    """``gamma``'s ``a`` must be positive (the kernel checks again where ``a`` is known only when it runs)."""
    if not np.all(alpha > 0):
        raise fail("numbax.random.gamma: the shape parameter a must be positive",
                   "a <= 0 would make JAX's rejection loop run forever")
