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

Called, not copied: Numba links a called function's LLVM IR into its caller and optimizes and emits it again
there, so every generated function paid again for the machine code of each helper it calls (three quarters of
the IR that LLVM optimized for the Gaussian process's step). ``helper_called`` tells the backend which
library is such a helper's, and what its caller needs instead of the IR: a ``CalledHelper``, which Numba
keeps with the caller's cached code and calls before loading it in a new process, loads the helper's machine
code from this cache (compiling it where the cache lost it) under the symbol the caller calls.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import itertools
import os
import re
import secrets
import sys
import tempfile
import weakref
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import numba
from llvmlite import binding as llvm_binding
from numba.core import caching
from numba.core import types as numba_types
from numba.core.bytecode import FunctionIdentity
from numba.core.typing.templates import builtin_registry
from numba.extending import overload as _numba_overload

_RUNTIME = os.path.dirname(os.path.abspath(__file__)) + os.sep
_KERNEL_FILE = re.compile(r"<numbax\.runtime ([0-9a-f]{16})>")
# Numba compiles an implementation with the flags of its first caller where they are not set, and its disk cache
# does not tell flags apart: set, they are the same for every caller (generated code's error model, no fastmath).
_JIT_OPTIONS = {"cache": True, "error_model": "numpy", "fastmath": False}
_FOLDERS: List[Callable[[], Optional[str]]] = []
# the overload template of each function's array implementations, by the module and name of the function and
# of the typer (a function may have several overloads), which are the same in every process
_TEMPLATES: Dict[Tuple[str, str, str, str], type] = {}
_CALLED: Set[Tuple[str, str, str, str]] = set()  # the keys of those overloaded with ``called``


def _names_differ_across_processes() -> None:
    """Start Numba's count of compiled functions at a random point of 2**56 in this process.

    Numba names a function's machine code by its qualified name, its argument types and that count (the
    ``abi:vN`` tag), which starts at 1 in every process. Two different functions of one qualified name and
    types (two of the runtime's kernels, all named ``impl``; two closures of one factory) compiled in two
    processes could get the same name, and a process that loaded both from this cache linked one in place of
    the other: wrong numbers or a crash. From random starting points, names made by different processes
    differ (two processes' ranges of a million functions overlap with odds below 1e-10).
    """
    FunctionIdentity._unique_ids = itertools.count(1 + secrets.randbits(56))


_names_differ_across_processes()


def overload(fn: Callable, called: bool = False, numbers: bool = False,
             **options: Any) -> Callable[[Callable], Callable]:
    """``numba.extending.overload(fn, **options)``, its implementations for array arguments kept in the disk
    cache.

    An implementation for numbers alone is compiled with its caller as before: a helper on numbers is often
    called once per element of a loop, where cached code is called rather than inlined if it is large or
    LLVM's level is 0 (``numbax.backends.numba_cpu.helper_calls``). ``called``:
    generated code calls the implementations for arrays by symbol whatever their size
    (``numbax.backends.numba_cpu.helper_calls``), for a helper that allocates or raises, where inlining gains
    nothing and LLVM would optimize its code again in every caller. ``numbers``: the implementations for
    numbers alone are cached too, for a helper whose arguments are shapes and dtypes (``np.zeros(n)``) or that
    makes an array of numbers.
    """
    if _RuntimeLocator not in caching.CacheImpl._locator_classes:
        caching.CacheImpl._locator_classes.insert(0, _RuntimeLocator)
    jit_options = options.pop("jit_options", {})

    def register(typer: Callable) -> Callable:
        @functools.wraps(typer)
        def for_arrays(*args, **kwargs):
            return typer(*args, **kwargs) if numbers or _any_array(args, kwargs) else None

        @functools.wraps(typer)
        def for_numbers(*args, **kwargs):
            return None if _any_array(args, kwargs) else typer(*args, **kwargs)

        _numba_overload(fn, jit_options={**_JIT_OPTIONS, **jit_options}, **options)(for_arrays)
        key = (fn.__module__, fn.__qualname__, typer.__module__, typer.__qualname__)  # a CalledHelper's
        if key in _TEMPLATES:
            raise ValueError(f"two overloads of {fn.__module__}.{fn.__qualname__} by one name, {typer.__qualname__}")
        _TEMPLATES[key] = _template_of(fn, for_arrays)
        if called:
            _CALLED.add(key)
        if not numbers:
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


def _template_of(fn: Callable, typer: Callable) -> type:
    """The overload template that ``numba.extending.overload`` just registered for ``fn`` with ``typer``."""
    registered, function_type = builtin_registry.globals[-1]
    template = function_type.templates[0]
    assert registered is fn and template._overload_func is typer, "Numba registered the overload elsewhere"
    return template


@dataclasses.dataclass(frozen=True)
class CalledHelper:
    """A runtime helper's machine code for one signature, as a caller calls it: by its symbol.

    Numba runs it (``reload_init``) before it loads the caller's cached code in a new process: it loads the
    helper's code from the runtime's cache, or compiles it where the cache lost it, and maps the caller's
    symbol to it where the helper now has another name.
    """

    template: Tuple[str, str, str, str]  # its key in _TEMPLATES
    args: tuple  # the types the call passed, positional and keyword, as the overload's typer saw them
    kws: tuple
    folded: tuple  # the implementation's signature: the arguments folded, defaults as Omitted
    symbol: str

    def __call__(self) -> None:
        if self.symbol not in _LOADED:
            _LOADED[self.symbol] = _load(self)

    @property
    def always_called(self) -> bool:
        """Whether callers call it by symbol whatever its size (``overload(..., called=True)``)."""
        return self.template in _CALLED


_LOADED: Dict[str, Any] = {}  # symbol -> the CompileResult that defines it (its library must stay alive)
_BY_LIBRARY: "weakref.WeakKeyDictionary[Any, Optional[CalledHelper]]" = weakref.WeakKeyDictionary()


def helper_called(library: Any) -> Optional[CalledHelper]:
    """The cached runtime helper that a Numba code library holds, or None for any other library.

    A caller links a library after it typed the call, which compiled (or loaded) the helper: the overload
    templates know every helper's library by then.
    """
    if library not in _BY_LIBRARY:
        for key, template in _TEMPLATES.items():
            for (_, args, kws, _), (dispatcher, _) in list(template._impl_cache.items()):
                for cres in list(getattr(dispatcher, "overloads", {}).values()):
                    _BY_LIBRARY[cres.library] = CalledHelper(key, tuple(args), tuple(kws), tuple(cres.signature.args),
                                                             cres.fndesc.mangled_name)
                    _LOADED.setdefault(cres.fndesc.mangled_name, cres)
        _BY_LIBRARY.setdefault(library, None)
    return _BY_LIBRARY[library]


def _load(helper: CalledHelper) -> Any:
    """The CompileResult of ``helper``, loaded (or compiled) into this process, its symbol defined."""
    from numba.core.registry import cpu_target
    from numba.core.runtime import rtsys

    importlib.import_module(helper.template[0])
    template = _TEMPLATES[helper.template]
    implementation = template._overload_func(*helper.args, **dict(helper.kws))
    if isinstance(implementation, tuple):  # (signature, function)
        implementation = implementation[1]
    dispatcher = numba.jit(**template._jit_options)(implementation)
    context = cpu_target.target_context
    rtsys.initialize(context)
    cres = dispatcher._cache._load_overload(helper.folded, context)
    if cres is None:
        dispatcher.compile(helper.folded)
        cres = dispatcher.overloads[helper.folded]
    name = cres.fndesc.mangled_name
    if name != helper.symbol:
        llvm_binding.add_symbol(helper.symbol, cres.library.get_pointer_to_function(name))
    return cres
