"""``math`` as a GPU computes it, for kernels run in Numba's CUDA simulator.

The simulator runs a kernel's Python as Python, where ``math.sqrt(-1.0)`` raises ``ValueError`` and
``math.exp(1000.0)`` ``OverflowError``; on a GPU they are NaN and infinity, as in NumPy. ``MATH`` answers as
``math`` does wherever ``math`` returns, and as NumPy's ufunc of the same function where ``math`` raises, so a
kernel that computes a NaN or an infinity in the simulator gives what the GPU gives. It imports NumPy only.

    >>> MATH.sqrt(4.0), MATH.sqrt(-1.0), MATH.exp(1000.0), MATH.log(0.0), MATH.pi == math.pi
    (2.0, nan, inf, -inf, True)
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

# math's functions that raise where IEEE arithmetic gives NaN or an infinity, and NumPy's ufunc of each
_IEEE = {"sqrt": np.sqrt, "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "exp": np.exp,
         "exp2": np.exp2, "expm1": np.expm1, "pow": np.power, "sin": np.sin, "cos": np.cos, "tan": np.tan,
         "asin": np.arcsin, "acos": np.arccos, "sinh": np.sinh, "cosh": np.cosh, "acosh": np.arccosh,
         "atanh": np.arctanh, "fmod": np.fmod, "hypot": np.hypot, "ldexp": np.ldexp}


def _ieee(name: str) -> Callable:
    exact, ufunc = getattr(math, name), _IEEE[name]

    def function(*args: Any) -> float:
        try:
            return exact(*args)
        except (ValueError, OverflowError, ZeroDivisionError):
            with np.errstate(all="ignore"):
                return float(ufunc(*args))

    function.__name__ = function.__qualname__ = name
    return function


class _Math:
    """``math``, with the functions of ``_IEEE`` answering NaN and infinities instead of raising."""

    def __init__(self):
        for name in _IEEE:
            setattr(self, name, _ieee(name))

    def __getattr__(self, name: str) -> Any:
        return getattr(math, name)


MATH = _Math()
