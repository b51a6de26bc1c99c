"""``np.linalg.eig`` and ``eigvals`` of a real matrix, which NumPy answers in complex numbers where the
eigenvalues are complex: its result's dtype depends on the values, which compiled code cannot follow.

Numba returns real results and raises its own ``ValueError`` ("must not cause a domain change") where they
would be complex; these helpers raise ``NumbaxDomainError`` at the user's ``where`` instead, saying what
to do. Run as plain Python (the ``python`` backend) they return NumPy's value.
"""
from __future__ import annotations

import numpy as np

from numbax.errors import NumbaxDomainError
from numbax.runtime.cached import overload

__all__ = ["eig", "eigvals"]

_HOW = " of a real matrix with complex eigenvalues: compiled code gives real results only"
_EIG, _EIGVALS = "np.linalg.eig" + _HOW, "np.linalg.eigvals" + _HOW  # one constant each: no text built when compiled


def eig(a, where: str):
    """``np.linalg.eig(a)`` of a real matrix ``a``, called at the user's ``where``."""
    return np.linalg.eig(a)


def eigvals(a, where: str):
    """``np.linalg.eigvals(a)`` of a real matrix ``a``, called at the user's ``where``."""
    return np.linalg.eigvals(a)


@overload(eig)
def _eig(a, where):
    def impl(a, where):
        failed = False
        w, v = np.empty(a.shape[0], a.dtype), np.empty(a.shape, a.dtype)
        try:
            w, v = np.linalg.eig(a)
        except Exception:  # Numba's domain error, the only one a real square matrix meets
            failed = True
        if failed:
            raise NumbaxDomainError(_EIG, where)
        return w, v
    return impl


@overload(eigvals)
def _eigvals(a, where):
    def impl(a, where):
        failed = False
        w = np.empty(a.shape[0], a.dtype)
        try:
            w = np.linalg.eigvals(a)
        except Exception:  # Numba's domain error, the only one a real square matrix meets
            failed = True
        if failed:
            raise NumbaxDomainError(_EIGVALS, where)
        return w
    return impl
