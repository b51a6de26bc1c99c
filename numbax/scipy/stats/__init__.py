"""``numbax.scipy.stats``: ``jax.scipy.stats``'s ``norm`` and ``multivariate_normal``."""
from numbax.scipy.stats import multivariate_normal, norm  # noqa: F401

__all__ = ["multivariate_normal", "norm"]
