"""``has_nan``/``has_inf`` for the checks ``debug_nans``/``debug_infs`` put in generated code."""
from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload

__all__ = ["has_nan", "has_inf"]


def has_nan(x) -> bool:
    """Whether the number or array ``x`` holds a NaN (never, for integers and booleans)."""
    x = np.asarray(x)
    return bool(np.issubdtype(x.dtype, np.inexact) and np.isnan(x).any())


def has_inf(x) -> bool:
    """Whether the number or array ``x`` holds an infinity (never, for integers and booleans)."""
    x = np.asarray(x)
    return bool(np.issubdtype(x.dtype, np.inexact) and np.isinf(x).any())


def _overload_check(python, test):
    @overload(python)
    def _check(x):
        if isinstance(x, types.Array) and isinstance(x.dtype, types.Float):
            def float_array(x):
                for value in x.flat:
                    if test(value):
                        return True
                return False
            return float_array
        if isinstance(x, types.Array) and isinstance(x.dtype, types.Complex):
            def complex_array(x):
                for value in x.flat:
                    if test(value.real) or test(value.imag):
                        return True
                return False
            return complex_array
        if isinstance(x, types.Float):
            return lambda x: test(x)
        if isinstance(x, types.Complex):
            return lambda x: test(x.real) or test(x.imag)
        return lambda x: False


_overload_check(has_nan, math.isnan)
_overload_check(has_inf, math.isinf)
