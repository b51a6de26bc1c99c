"""Compile generated source with ``numba.njit(cache=True)``."""
from __future__ import annotations

from typing import Callable, Dict, Tuple

from numbax.backends.module_cache import module_for

_DISPATCHERS: Dict[Tuple, Callable] = {}


def compile_function(source: str, name: str, cache_dir: str, parallel: bool = False,
                     fastmath: bool = False) -> Callable:
    """A Numba dispatcher for the generated function (shared by identical sources)."""
    import numba

    module = module_for(source, name, cache_dir)
    key = (module.__name__, parallel, fastmath)
    dispatcher = _DISPATCHERS.get(key)
    if dispatcher is None:
        dispatcher = numba.njit(cache=True, parallel=parallel, fastmath=fastmath)(getattr(module, name))
        _DISPATCHERS[key] = dispatcher
    return dispatcher


def typing_errors() -> tuple:
    """The Numba exception classes that mean generated code failed to compile."""
    from numba.core import errors

    return (errors.TypingError, errors.UnsupportedError, errors.LoweringError, errors.NumbaError)
