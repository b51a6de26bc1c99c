"""NumPy functions whose Numba implementation takes a second or more to compile, compiled once per machine.

Numba compiles its implementation of ``np.linalg.solve`` (4 s on a loaded
machine), ``np.tril``, ``np.outer``, ``np.moveaxis``, ``np.concatenate``,
``np.ascontiguousarray`` (which every Jacobian's columns go through) ... into
each function that calls it, in each process anew. ``legalize`` sends a positional call of
one of them in generated code to the helper of the same name here
(``rt.solve(a, b)``), whose compiled form for array arguments is kept in the
disk cache (``numbax.runtime.cached``): it computes exactly what NumPy's
function does in Numba, compiled once.
"""
from typing import Callable

import numpy as np
from numba import types

from numbax.runtime.arrays import diagonal
from numbax.runtime.cached import overload


def _compiled_once(name: str, numpy_fn: Callable) -> Callable:
    def helper(*args):
        return numpy_fn(*args)

    helper.__name__ = helper.__qualname__ = name.rsplit(".", 1)[-1]
    helper.__doc__ = f"``np.{name}``, compiled once per machine."

    @overload(helper, called=True)
    def implementation(*args):
        return lambda *args: numpy_fn(*args)

    return helper


moveaxis = _compiled_once("moveaxis", np.moveaxis)
concatenate = _compiled_once("concatenate", np.concatenate)
concat = _compiled_once("concat", np.concat)
ascontiguousarray = _compiled_once("ascontiguousarray", np.ascontiguousarray)
tril = _compiled_once("tril", np.tril)
triu = _compiled_once("triu", np.triu)
outer = _compiled_once("outer", np.outer)


def diag(v, k=0):
    """``np.diag``, compiled once per machine; a matrix's diagonal is a view of it, as NumPy's (Numba's
    ``np.diag`` copies it: a later write into the matrix would not show)."""
    return np.diag(v, k)


@overload(diag, called=True)
def _diag(v, k=0):
    if isinstance(v, types.Array) and v.ndim == 2:
        return lambda v, k=0: diagonal(v, k)
    return lambda v, k=0: np.diag(v, k)


solve = _compiled_once("linalg.solve", np.linalg.solve)
inv = _compiled_once("linalg.inv", np.linalg.inv)
cholesky = _compiled_once("linalg.cholesky", np.linalg.cholesky)
det = _compiled_once("linalg.det", np.linalg.det)
slogdet = _compiled_once("linalg.slogdet", np.linalg.slogdet)
eigh = _compiled_once("linalg.eigh", np.linalg.eigh)
qr = _compiled_once("linalg.qr", np.linalg.qr)
svd = _compiled_once("linalg.svd", np.linalg.svd)

# NumPy's name (after ``np.``) -> its helper, which has the last part's name (``rt.solve``)
FUNCTIONS = {"moveaxis": moveaxis, "concatenate": concatenate, "concat": concat,
             "ascontiguousarray": ascontiguousarray, "tril": tril, "triu": triu, "outer": outer, "diag": diag,
             "linalg.solve": solve, "linalg.inv": inv, "linalg.cholesky": cholesky, "linalg.det": det,
             "linalg.slogdet": slogdet, "linalg.eigh": eigh, "linalg.qr": qr, "linalg.svd": svd}
__all__ = [name.rsplit(".", 1)[-1] for name in FUNCTIONS]
