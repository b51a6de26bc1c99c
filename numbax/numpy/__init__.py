"""``numbax.numpy``: the namespace JAX code imports as ``jnp`` -- NumPy itself.

Every attribute is NumPy's own object (``numbax.numpy.tanh is numpy.tanh``), so
values stay NumPy arrays and every transformation recognises ``jnp.tanh``
exactly as ``np.tanh``. With ``debug_nans`` or ``debug_infs`` on
(``numbax.config``), a function looked up here checks what it returns and
raises ``FloatingPointError`` at the caller's line:

    >>> import numbax, numbax.numpy as jnp
    >>> with numbax.config.debug_nans():
    ...     jnp.log(jnp.array([-1.0, 2.0]))
    Traceback (most recent call last):
    FloatingPointError: invalid value (nan) encountered in numpy.log at ...
"""
from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable, List

import numpy as _np

from numbax import config as _config


def _bad_values(value: Any) -> str:
    """``"nan"``, ``"inf"`` or ``""``: what the enabled checks find in ``value`` (a result or tuple of them)."""
    for part in value if isinstance(value, tuple) else (value,):
        array = _np.asarray(part) if isinstance(part, (_np.ndarray, _np.generic, float, complex)) else None
        if array is None or not _np.issubdtype(array.dtype, _np.inexact):
            continue
        if _config.state.debug_nans and _np.isnan(array).any():
            return "nan"
        if _config.state.debug_infs and _np.isinf(array).any():
            return "inf"
    return ""


@functools.lru_cache(maxsize=None)
def _checked(function: Callable) -> Callable:
    name = getattr(function, "__name__", repr(function))

    @functools.wraps(function)
    def checked(*args, **kwargs):
        result = function(*args, **kwargs)
        found = _bad_values(result)
        if found:
            caller = sys._getframe(1)
            where = f"{os.path.basename(caller.f_code.co_filename)}:{caller.f_lineno}"
            kind = "invalid value (nan)" if found == "nan" else "overflow or division by zero (inf)"
            raise FloatingPointError(f"{kind} encountered in numpy.{name} at {where}")
        return result

    checked.__numbax_primitive__ = function
    return checked


def __getattr__(name: str) -> Any:
    """NumPy's ``name``; a checking wrapper of a function while ``debug_nans``/``debug_infs`` is on."""
    value = getattr(_np, name)
    if (_config.state.debug_nans or _config.state.debug_infs) and callable(value) and not isinstance(value, type):
        return _checked(value)
    return value


def __dir__() -> List[str]:
    return dir(_np)
