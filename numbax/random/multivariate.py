"""multivariate: ``jax.random.multivariate_normal``, from the same standard normal bits as JAX's.

``mean + factor @ z`` with ``z = normal(key, shape + (n,))``, JAX's bits, and ``factor`` JAX's for the
method: the Cholesky factor of ``cov`` (``'cholesky'``, the default), ``v * sqrt(w)`` of its symmetric
eigendecomposition (``'eigh'``) or ``u * sqrt(s)`` of its SVD (``'svd'``), each from LAPACK as NumPy calls it.
The samples equal JAX's to rounding (the factor and the products are LAPACK's and numbax's arithmetic, not
XLA's), for eigenvectors or singular vectors of the signs LAPACK gives both. Inside compiled code the source
below is specialized like the user's, for a 2-D ``cov`` (Numba's linear algebra takes no stacks of matrices)
and a ``shape`` given (a tuple known at compile time: the default, from run-time dims, is refused there).
"""
from __future__ import annotations

import numpy as np

from numbax.ast_passes.specialize.compile_time import specialized_from_source
from numbax.random.continuous import normal

__all__ = ["multivariate_normal"]


@specialized_from_source
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Multivariate normal samples of ``mean`` and covariance ``cov``: ``jax.random.multivariate_normal``.

    Args:
        key: a key.
        mean: the mean, of shape ``(..., n)``.
        cov: the covariance, of shape ``(..., n, n)``, symmetric positive (semi-)definite.
        shape: the batch shape of the samples, broadcast with ``mean.shape[:-1]`` and ``cov.shape[:-2]``
            (their broadcast by default).
        dtype: float32 or float64 (default: ``mean``'s).
        method: ``'cholesky'``, ``'eigh'`` or ``'svd'``: how ``cov`` is factored.

    Returns:
        An array of shape ``shape + (n,)``.
    """
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean, cov = np.asarray(mean), np.asarray(cov)
    if mean.ndim < 1:
        raise ValueError("multivariate_normal requires mean.ndim >= 1")
    if cov.ndim < 2:
        raise ValueError("multivariate_normal requires cov.ndim >= 2")
    n = mean.shape[-1]
    if cov.shape[-1] != n or cov.shape[-2] != n:
        raise ValueError("multivariate_normal requires cov.shape == (..., n, n) for the n of mean.shape[-1]")
    if shape is not None:
        z_shape = tuple(shape) + (n,)
    elif cov.ndim == 2:
        z_shape = mean.shape  # the batch shape is mean's
    else:
        z_shape = np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]) + (n,)
    if method == "svd":
        u, s, _ = np.linalg.svd(cov)
        factor = u * np.expand_dims(np.sqrt(s), -2)
    elif method == "eigh":
        w, v = np.linalg.eigh(cov)
        factor = v * np.expand_dims(np.sqrt(w), -2)
    else:
        factor = np.linalg.cholesky(cov)
    z = normal(key, z_shape, mean.dtype if dtype is None else dtype)
    return mean + np.sum(factor * np.expand_dims(z, -2), axis=-1)
