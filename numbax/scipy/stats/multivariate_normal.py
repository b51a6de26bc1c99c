"""``numbax.scipy.stats.multivariate_normal``: the density of a normal vector, as JAX's."""
from __future__ import annotations

import numpy as np

from numbax.ast_passes.specialize.compile_time import specialized_from_source

__all__ = ["logpdf", "pdf"]


@specialized_from_source
def logpdf(x, mean, cov, allow_singular=None):
    """``log`` of the density at ``x`` (a vector, or rows of vectors) of mean ``mean`` and covariance
    ``cov``, by its Cholesky factor."""
    if allow_singular is not None:
        raise NotImplementedError("numbax.scipy.stats.multivariate_normal.logpdf: allow_singular is not "
                                  "supported (as in JAX)")
    factor = np.linalg.cholesky(0.5 * (cov + cov.T))  # as JAX's: a derivative in cov that is symmetric
    n = cov.shape[-1]
    log_det = np.sum(np.log(np.diag(factor)))
    if x.ndim == 1:
        y = np.linalg.solve(factor, x - mean)
        return -0.5 * np.sum(y * y) - 0.5 * n * np.log(2 * np.pi) - log_det
    y = np.linalg.solve(factor, (x - mean).T)
    return -0.5 * np.sum(y * y, axis=0) - 0.5 * n * np.log(2 * np.pi) - log_det


@specialized_from_source
def pdf(x, mean, cov):
    """The density at ``x``."""
    return np.exp(logpdf(x, mean, cov))
