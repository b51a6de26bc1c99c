"""``numbax.scipy``: ``jax.scipy``'s functions, in the layout JAX gives them, written in the NumPy numbax compiles.

``special`` (``logsumexp``, ``expit``, ``logit``, ``xlogy``, ``xlog1py``, ``erf``, ``erfc``, ``ndtr``, ``ndtri``,
``log_ndtr``, ``gammaln``, ``digamma``), ``stats`` (``norm``, ``multivariate_normal``) and ``linalg``
(``cholesky``, ``solve_triangular``, ``cho_factor``, ``cho_solve``, ``solve``, ``inv``, ``det``, ``slogdet``,
``eigh``). Each is plain NumPy and ``scipy.special``: called outside compiled code it runs as NumPy; inside,
numbax specializes its source like the user's, so every transformation differentiates, batches and compiles
it from the registry's rules.
"""
from numbax.scipy import linalg, special, stats  # noqa: F401

__all__ = ["linalg", "special", "stats"]
