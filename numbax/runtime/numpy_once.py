"""NumPy functions whose Numba implementation takes a second or more to compile, compiled once per machine.

Numba compiles its implementation of ``np.linalg.solve`` (4 s on a loaded
machine), ``np.tril``, ``np.outer``, ``np.moveaxis`` ... into each function
that calls it, in each process anew. ``legalize`` sends a positional call of
one of them in generated code to the helper of the same name here
(``rt.solve(a, b)``), whose compiled form for array arguments is kept in the
disk cache (``numbax.runtime.cached``): it computes exactly what NumPy's
function does in Numba, compiled once.
"""
from typing import Callable

import numpy as np

from numbax.runtime.cached import overload

# NumPy's name (after ``np.``) -> the function; each helper is named by the last part (``rt.solve``)
FUNCTIONS = {
    "moveaxis": np.moveaxis, "tril": np.tril, "triu": np.triu, "outer": np.outer, "diag": np.diag,
    "linalg.solve": np.linalg.solve, "linalg.inv": np.linalg.inv, "linalg.cholesky": np.linalg.cholesky,
    "linalg.det": np.linalg.det, "linalg.slogdet": np.linalg.slogdet, "linalg.eigh": np.linalg.eigh,
    "linalg.qr": np.linalg.qr, "linalg.svd": np.linalg.svd,
}


def _compiled_once(name: str, numpy_fn: Callable) -> Callable:
    def helper(*args):
        return numpy_fn(*args)

    helper.__name__ = helper.__qualname__ = name.rsplit(".", 1)[-1]
    helper.__doc__ = f"``np.{name}``, compiled once per machine."

    @overload(helper)
    def implementation(*args):
        return lambda *args: numpy_fn(*args)

    return helper


for _name, _numpy_fn in FUNCTIONS.items():
    globals()[_name.rsplit(".", 1)[-1]] = _compiled_once(_name, _numpy_fn)
__all__ = [name.rsplit(".", 1)[-1] for name in FUNCTIONS]
