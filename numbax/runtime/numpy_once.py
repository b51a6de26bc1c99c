"""NumPy functions that generated code calls, compiled once per machine instead of in every process.

Numba compiles its implementation of a NumPy function when it types a call of it, in each process anew:
``np.linalg.solve`` (4 s on a loaded machine), ``np.tril``, ``np.moveaxis``, ``np.concatenate``,
``np.ascontiguousarray`` (which every Jacobian's columns go through), and in every program the functions
that make arrays (``np.empty``, ``np.zeros``, ``np.arange``, ``np.array``: a tenth of a second each with
the allocator they share). The backend (``numbax.backends.numba_cpu.numpy_calls``) sends a call of one of
them in generated code to its helper here before typing: a function of the same name whose implementation
is the NumPy function called with the same arguments (so the same Numba implementation, the same bits),
kept in the disk cache (``numbax.runtime.cached``) and called by symbol. Generated source still reads
``np.linalg.solve(a, b)``.
"""
from typing import Callable, Dict, Optional, Tuple

import numpy as np
from numba import types

from numbax.runtime.arrays import diagonal
from numbax.runtime.cached import overload
from numbax.runtime.loops import compile_source


def _compiled_once(numpy_fn: Callable, name: str, numbers: bool = False) -> Callable:
    """A helper ``name`` computing ``numpy_fn(*args)``, compiled once per machine for array arguments (for
    any with ``numbers``: an array-making function's are shapes and dtypes)."""
    def helper(*args):
        return numpy_fn(*args)

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = f"``np.{name}``, compiled once per machine."

    @overload(helper, called=True, numbers=numbers)
    def implementation(*args):  # the arguments passed one by one (Numba's ``np.array(*args)`` fails to compile)
        passed = ", ".join(f"args[{i}]" for i in range(len(args)))
        return compile_source(f"def impl(*args):\n    return fn({passed})\n", fn=numpy_fn)

    return helper


def diag(v, k=0):
    """``np.diag``, compiled once per machine; a matrix's diagonal is a view of it, as NumPy's (Numba's
    ``np.diag`` copies it: a later write into the matrix would not show). ``legalize`` writes ``rt.diag``."""
    return np.diag(v, k)


@overload(diag, called=True)
def _diag(v, k=0):
    if isinstance(v, types.Array) and v.ndim == 2:
        return lambda v, k=0: diagonal(v, k)
    return lambda v, k=0: np.diag(v, k)


# NumPy's function -> (its helper, its parameters in NumPy's order, which is Numba's, or None): the backend
# sends a call with at most these arguments, keywords among them passed by position (with None: a call without
# keywords), and leaves any other call to Numba
_SLOW = dict.fromkeys([np.moveaxis, np.concatenate, np.concat, np.ascontiguousarray, np.tril, np.triu, np.outer,
                       np.linalg.solve, np.linalg.inv, np.linalg.cholesky, np.linalg.det, np.linalg.slogdet,
                       np.linalg.eigh, np.linalg.qr, np.linalg.svd])
# of the whole array (with an axis, Numba's implementation for it, or the runtime's)
# (``np.median`` is the runtime's always: ``legalize`` sends it there, for NumPy's NaN)
_REDUCING = {np.mean: ("a",), np.sum: ("a",), np.var: ("a",), np.std: ("a",),
             np.sort: ("a",), np.argsort: ("a",),
             np.cumsum: ("a",), np.cumprod: ("a",)}
_MAKING = {np.empty: ("shape", "dtype"), np.zeros: ("shape", "dtype"), np.ones: ("shape", "dtype"),
           np.full: ("shape", "fill_value", "dtype"), np.arange: ("start", "stop", "step", "dtype"),
           np.eye: ("N", "M", "k", "dtype"), np.identity: ("n", "dtype"), np.linspace: ("start", "stop", "num"),
           np.array: ("object", "dtype"), np.asarray: ("a", "dtype"), np.copy: ("a",),
           np.empty_like: ("prototype", "dtype"), np.zeros_like: ("a", "dtype"), np.ones_like: ("a", "dtype"),
           np.full_like: ("a", "fill_value", "dtype")}
HELPERS: Dict[Callable, Tuple[Callable, Optional[Tuple[str, ...]]]] = {
    **{fn: (_compiled_once(fn, fn.__name__), params) for fn, params in {**_SLOW, **_REDUCING}.items()},
    **{fn: (_compiled_once(fn, fn.__name__, numbers=True), params) for fn, params in _MAKING.items()}}
__all__ = ["diag"]  # what generated code names: ``legalize`` writes ``rt.diag``
