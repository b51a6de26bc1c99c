"""``numbax.scipy.linalg``: ``jax.scipy.linalg``'s factorizations and solves, as NumPy numbax specializes.

A triangular solve reads only its triangle (the other one gets no derivative, as in JAX); it is computed
by ``np.linalg.solve`` of that triangle. ``cholesky`` reads one triangle too, and its derivative is in that
triangle (JAX's has parts in both that sum to the same: the two agree along every symmetric direction).
``eigh`` has no derivative rule yet: differentiating it is refused.
Keywords JAX accepts and ignores (``overwrite_a``, ``overwrite_b``, ``check_finite``, ``debug``) are accepted
and ignored here too.
"""
from __future__ import annotations

import numpy as np

from numbax.ast_passes.specialize.compile_time import specialized_from_source

__all__ = ["cholesky", "solve_triangular", "cho_factor", "cho_solve", "solve", "inv", "det", "eigh"]


@specialized_from_source
def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of ``a``: upper (``a = Uᴴ U``) unless ``lower``, of the Hermitian matrix whose
    lower (or upper) triangle is ``a``'s, as SciPy and JAX read it. Its derivative is that function's: in the
    triangle read (on symmetric directions, the same as JAX's)."""
    if lower:
        return np.linalg.cholesky(np.tril(a) + np.conj(np.tril(a, -1)).T)
    return np.conj(np.linalg.cholesky(np.conj(np.triu(a)).T + np.triu(a, 1))).T


@specialized_from_source
def _triangle(a, lower, unit_diagonal):
    """The triangle of ``a`` a solve reads, ones on its diagonal with ``unit_diagonal``."""
    part = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        return part - np.diag(np.diag(part)) + np.eye(a.shape[0])
    return part


@specialized_from_source
def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
                     check_finite=True):
    """``x`` with ``op(a) x = b``, ``a`` triangular (``trans``: 0 or "N" ``a``, 1 or "T" its transpose,
    2 or "C" its conjugate transpose)."""
    t = _triangle(a, lower, unit_diagonal)
    if trans == 0 or trans == "N":
        return np.linalg.solve(t, b)
    if trans == 1 or trans == "T":
        return np.linalg.solve(t.T, b)
    if trans == 2 or trans == "C":
        return np.linalg.solve(np.conj(t).T, b)
    raise ValueError(f"Invalid 'trans' value {trans}")


@specialized_from_source
def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)``: the Cholesky factor of ``a`` and which triangle it is, for ``cho_solve``."""
    return cholesky(a, lower=lower), lower


@specialized_from_source
def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """``x`` with ``a x = b``, from ``cho_factor(a)``."""
    c, lower = c_and_lower
    if lower:
        factor = np.tril(c)
        return np.linalg.solve(np.conj(factor).T, np.linalg.solve(factor, b))
    factor = np.triu(c)
    return np.linalg.solve(factor, np.linalg.solve(np.conj(factor).T, b))


@specialized_from_source
def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False, check_finite=True,
          assume_a="gen"):
    """``x`` with ``a x = b`` (``assume_a`` "gen", "sym" or "her": the same solve, as JAX's)."""
    if assume_a not in ("gen", "sym", "her"):
        raise NotImplementedError(f"numbax.scipy.linalg.solve: assume_a={assume_a!r} is not supported; "
                                  "use cho_solve(cho_factor(a), b) for a positive definite a")
    return np.linalg.solve(a, b)


@specialized_from_source
def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of ``a``."""
    return np.linalg.inv(a)


@specialized_from_source
def det(a, overwrite_a=False, check_finite=True):
    """The determinant of ``a``."""
    return np.linalg.det(a)


@specialized_from_source
def eigh(a, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, turbo=True, eigvals=None,
         type=1, check_finite=True):
    """The eigenvalues (ascending) and eigenvectors of the Hermitian ``a``, from its lower triangle unless
    ``lower`` is False (no derivative rule yet)."""
    w, v = np.linalg.eigh(a if lower else np.conj(a).T)  # the upper triangle of a is the lower one of aᴴ
    if eigvals_only:
        return w
    return w, v
