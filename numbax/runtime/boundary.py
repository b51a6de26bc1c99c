"""boundary: 0-d arrays where compiled code meets the caller.

Inside compiled code a 0-d array is a number, Numba's own view: Numba turns a
0-d array into a number in arithmetic, so a 0-d array that a loop or a branch
rebinds (a ``fori_loop`` carry) would otherwise need one variable of two types.
At the entry of generated code each 0-d array argument is read as its number
(``number``); what the code returns has each number made a 0-d array
(``arrays_out``).

Why a 0-d array and not a NumPy scalar (``np.float64``): JAX returns an array
for every result, a 0-d one included, and a 0-d array has all that JAX users
read of one (``.shape == ()``, ``.dtype``, ``.ndim``, ``.size``, ``.item()``,
``float(b)``, formatting) while staying an array (``b[()]``, ``b[...]``). It is
also the one that costs nothing extra per call: Numba's C dispatch boxes a
returned 0-d array itself, so later calls never reach Python, whereas a NumPy
scalar would have to be made in Python after every call. Its dtype is the
compiled code's (float32 and int8 results stay float32 and int8, where Numba
boxes a number as a Python ``float`` or ``int``).

    >>> import numba
    >>> numba.njit(lambda x, y: arrays_out((number(x) * 2.0, y)))(np.array(1.5), np.ones(2))
    (array(3.), array([1., 1.]))
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from numbax.runtime import cached
from numbax.runtime.loops import compile_source

__all__ = ["number", "arrays_out"]


def number(x):
    """``x`` itself, or the number a 0-d array holds (compiled)."""
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


def arrays_out(value):
    """``value`` with each number (in a tuple, each item) made a 0-d array of its dtype (compiled)."""
    if isinstance(value, tuple):
        return tuple(arrays_out(v) for v in value)
    return np.asarray(value) if isinstance(value, (int, float, complex, bool, np.generic)) else value


@overload(number)
def _number(x):
    if isinstance(x, types.Array) and x.ndim == 0:
        return lambda x: x[()]
    return lambda x: x


@cached.overload(arrays_out, numbers=True)  # compiled once per machine; run once per call, outside loops
def _arrays_out(value):
    if isinstance(value, types.BaseTuple):
        items = ", ".join(f"arrays_out(value[{i}])" for i in range(len(value)))
        return compile_source(f"def impl(value):\n    return ({items}{',' if len(value) == 1 else ''})",
                              arrays_out=arrays_out)
    if isinstance(value, (types.Number, types.Boolean)):
        return lambda value: np.asarray(value)
    return lambda value: value
