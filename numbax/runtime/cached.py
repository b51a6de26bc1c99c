"""The runtime's helpers compiled once per machine, not once per process.

Numba compiles the implementation an ``@overload`` returns when a caller first
needs it, in each process anew: a generated function that calls twenty runtime
helpers paid for twenty compilations on every cold start, whatever compiled
them before. ``overload`` here is Numba's with ``cache=True`` among its
``jit_options``, so each implementation, per signature, goes to Numba's disk
cache and every later process (and every generated function) loads its machine
code instead.

Where it goes: the folder that the backend names with ``use_folder`` (numbax's:
``<cache directory>/runtime/<digest>``, checked as numbax's cache is, with
``digest`` a hash of the source of the whole runtime, so that a runtime changed
anywhere never loads code compiled from another: Numba keys its index on a
function's own bytecode and closure, not on the helpers it calls). Without one
(a runtime copied out by ``numbax.export``, a cache directory that cannot hold
files) it is a temporary folder of the process's own.

Kernels that ``numbax.runtime.loops.compile_source`` writes from text have no
file: ``describe_kernel`` names one by a hash of its text and of the names it
sees, each by a stable identity (a function by its module and qualified name),
so that two kernels of one text that call different functions never share an
entry.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
import tempfile
from typing import Any, Callable, Dict, List, Optional

from numba.core import caching
from numba.core import types as numba_types
from numba.extending import overload as _numba_overload

_RUNTIME = os.path.dirname(os.path.abspath(__file__)) + os.sep
_KERNEL_FILE = re.compile(r"<numbax\.runtime ([0-9a-f]{16})>")
# Numba compiles an implementation with the flags of its first caller where they are not set, and its disk cache
# does not tell flags apart: set, they are the same for every caller (generated code's error model, no fastmath).
_JIT_OPTIONS = {"cache": True, "error_model": "numpy", "fastmath": False}
_FOLDERS: List[Callable[[], Optional[str]]] = []


def overload(fn: Callable, **options: Any) -> Callable[[Callable], Callable]:
    """``numba.extending.overload(fn, **options)``, its implementations for array arguments kept in the disk
    cache.

    An implementation for numbers alone is compiled with its caller as before: code loaded from the cache is
    called, never inlined, and a helper on numbers is often called once per element of a loop.
    """
    if _RuntimeLocator not in caching.CacheImpl._locator_classes:
        caching.CacheImpl._locator_classes.insert(0, _RuntimeLocator)
    jit_options = options.pop("jit_options", {})

    def register(typer: Callable) -> Callable:
        @functools.wraps(typer)
        def for_arrays(*args, **kwargs):
            return typer(*args, **kwargs) if _any_array(args, kwargs) else None

        @functools.wraps(typer)
        def for_numbers(*args, **kwargs):
            return None if _any_array(args, kwargs) else typer(*args, **kwargs)

        _numba_overload(fn, jit_options={**_JIT_OPTIONS, **jit_options}, **options)(for_arrays)
        _numba_overload(fn, jit_options=jit_options, **options)(for_numbers)
        return typer

    return register


def _any_array(args: tuple, kwargs: Dict[str, Any]) -> bool:
    """Whether a Numba type among ``args`` and ``kwargs`` is an array, or a tuple or list holding one."""
    def holds(t: Any) -> bool:
        if isinstance(t, numba_types.Array):
            return True
        if isinstance(t, (numba_types.BaseTuple, numba_types.List)):
            return any(holds(e) for e in getattr(t, "types", None) or (t.dtype,))
        return False

    return any(holds(t) for t in list(args) + list(kwargs.values()))


def use_folder(folder: Callable[[], Optional[str]]) -> None:
    """Cache the runtime's helpers in ``folder()`` (asked when one is first compiled or loaded)."""
    _FOLDERS[:] = [folder]


@functools.lru_cache(maxsize=None)
def _process_folder() -> str:
    return tempfile.mkdtemp(prefix="numbax-runtime-")


def _identity(value: Any) -> str:
    """A name for ``value`` that is the same in every process, for a kernel's cache key."""
    if isinstance(value, numba_types.Type):
        return f"numba type {value}"
    if isinstance(value, (str, int, float, bool, type(None))):
        return repr(value)
    target = getattr(value, "py_func", None) or getattr(value, "_defn", None) or value  # a dispatcher, intrinsic
    module, qualname = getattr(target, "__module__", None), getattr(target, "__qualname__", None)
    if module and qualname and "<locals>" not in qualname:
        return f"{module}.{qualname}"
    bound = [name for name, v in vars(sys.modules.get(module, object)).items() if v is value]  # made by a factory
    if bound:
        return f"{module}.{bound[0]}"
    raise TypeError(f"a runtime kernel sees {value!r}, which has no name that is stable across processes: pass a "
                    "module-level function or class, a Numba type or a constant")


def describe_kernel(source: str, names: Dict[str, Any]) -> str:
    """The file name ``compile_source`` gives a kernel: its text and what its names stand for, hashed."""
    described = "\0".join([source] + [f"{k}={_identity(v)}" for k, v in sorted(names.items())])
    return f"<numbax.runtime {hashlib.sha256(described.encode()).hexdigest()[:16]}>"


class _RuntimeLocator(caching._CacheLocator):
    """Numba's cache locator for the runtime's functions and kernels (see the module's docstring)."""

    def __init__(self, disambiguator: str, py_file: str):
        self._disambiguator = disambiguator
        self._py_file = py_file  # Numba names it when it warns that a function cannot be cached

    @classmethod
    def from_function(cls, py_func, py_file) -> Optional["_RuntimeLocator"]:
        """A locator for a function of the runtime or one of its kernels; None for any other."""
        kernel = _KERNEL_FILE.fullmatch(py_file)
        if kernel:
            return cls(kernel.group(1), py_file)
        if os.path.abspath(py_file).startswith(_RUNTIME) and _FOLDERS:
            return cls(str(py_func.__code__.co_firstlineno), py_file)
        return None

    def get_cache_path(self) -> str:
        """The backend's folder, or this process's own."""
        return (_FOLDERS[0]() if _FOLDERS else None) or _process_folder()

    def get_source_stamp(self) -> str:
        """Constant: the folder holds code of one runtime only."""
        return "numbax.runtime"

    def get_disambiguator(self) -> str:
        """The function's first line, or a kernel's hash: what tells apart functions of one name."""
        return self._disambiguator
