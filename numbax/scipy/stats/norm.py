"""``numbax.scipy.stats.norm``: the normal distribution's functions, as ``jax.scipy.stats.norm``."""
from __future__ import annotations

import numpy as np

from numbax.ast_passes.specialize.compile_time import specialized_from_source
from numbax.scipy import special

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


@specialized_from_source
def logpdf(x, loc=0, scale=1):
    """``log`` of the density at ``x``."""
    z = (x - loc) / scale
    return -0.5 * z * z - np.log(scale) - 0.9189385332046728


@specialized_from_source
def pdf(x, loc=0, scale=1):
    """The density at ``x``."""
    return np.exp(logpdf(x, loc, scale))


@specialized_from_source
def cdf(x, loc=0, scale=1):
    """The probability below ``x``."""
    return special.ndtr((x - loc) / scale)


@specialized_from_source
def logcdf(x, loc=0, scale=1):
    """``log(cdf(x))``, accurate far in the lower tail."""
    return special.log_ndtr((x - loc) / scale)


@specialized_from_source
def sf(x, loc=0, scale=1):
    """The probability above ``x``."""
    return special.ndtr((loc - x) / scale)


@specialized_from_source
def logsf(x, loc=0, scale=1):
    """``log(sf(x))``."""
    return special.log_ndtr((loc - x) / scale)


@specialized_from_source
def ppf(q, loc=0, scale=1):
    """The quantile of probability ``q``."""
    return special.ndtri(q) * scale + loc


@specialized_from_source
def isf(q, loc=0, scale=1):
    """The quantile of upper-tail probability ``q``."""
    return ppf(1 - q, loc, scale)
