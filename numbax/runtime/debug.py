"""Debugging helpers for generated code: the checks of ``debug_nans``/``debug_infs`` (``has_nan``,
``has_inf``), and ``numbax.debug.print``/``callback`` (``debug_print``, ``debug_callback``), which leave
compiled code for Python's own ``str.format`` and the user's function through Numba's object mode."""
from __future__ import annotations

import math

import numpy as np
import importlib

import numba
from numba import types

from numbax.runtime.cached import overload

__all__ = ["has_nan", "has_inf", "debug_print", "debug_callback"]


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


def debug_print(fmt, args, names, values) -> None:
    """``print(fmt.format(*args, **dict(zip(names, values))))``."""
    print(fmt.format(*args, **dict(zip(names, values))))


def debug_callback(module, qualname, args, names, values) -> None:
    """Call the module-level function ``module.qualname`` with these arguments; its result is dropped."""
    function = importlib.import_module(module)
    for part in qualname.split("."):
        function = getattr(function, part)
    function(*args, **dict(zip(names, values)))


@overload(debug_print)
def _debug_print(fmt, args, names, values):
    def impl(fmt, args, names, values):
        with numba.objmode():
            debug_print(fmt, args, names, values)
    return impl


@overload(debug_callback)
def _debug_callback(module, qualname, args, names, values):
    def impl(module, qualname, args, names, values):
        with numba.objmode():
            debug_callback(module, qualname, args, names, values)
    return impl
