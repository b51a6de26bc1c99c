"""Transformations made afresh are found again: ``numbax.grad(loss)(params)`` in a loop costs a lookup.

JAX users write ``jax.grad(loss)(params, x, y)`` inside their loops. A numbax
transformation is an object that reads the function's source, binds its
signature and keeps its compiled specializations, so making one anew on each
call would cost the construction and lose what it compiled. Every public
constructor (``jit``, ``grad``, ``vmap``, the Jacobians, ``checkpoint``, and
what ``jvp``, ``linearize`` and ``vjp`` make inside) is wrapped by ``reused``:
it returns the transformation it made before for the same function object and
the same options, so both spellings share one object and its specializations.

The key is the constructor, the function by identity (a function defined again
is a new object, and misses), and each other argument as given, positional
and keyword apart, reduced to its type and value: ``None``, ``bool``, ``int``
and ``str`` and tuples, lists and dicts of them (``True``, ``1`` and ``(1,)``
are different keys, as a list and a tuple are different pytree prefixes of
``in_axes``). A call with any other argument (a float, a NumPy integer, an
object) is not cached: it makes its transformation as before.

Each entry holds its function and transformation strongly, so the cache is a
bounded LRU of ``BOUND`` entries; an evicted transformation lives on only where
the user keeps it. 4096 (as ``jax._src.util.cache``) is far more (function, options)
pairs than a program makes afresh in one loop, so a loop never misses, while a
stream of new functions (lambdas made in a loop) leaves at most 4096 entries:
measured, 4 KiB each made and not called, 19 KiB each for a small function
called once (its specialization's generated code; the modules loaded from it
are kept by ``backends.module_cache`` whether or not the cache keeps their
transformation), so tens of megabytes at most for such functions.

What a specialization depends on besides the call's arguments (``debug_nans``,
``debug_infs``) is in each specialization's key (``Jitted._specialization``), so
a transformation found again compiles anew under another configuration, as a
kept one does. A transformation found again is the object made first: its
``.source`` is that of its latest specialization, whichever spelling called it.
The key also holds the identities of the module globals the function reads
(and those of the functions it calls by name, to their ends): a global bound
anew makes another transformation, which compiles with the new value, as a
transformation made afresh did before this cache (a kept one runs the value it
compiled with, as JAX's ``jit`` does).
"""
from __future__ import annotations

import collections
import functools
import threading
import types
from typing import Any, Callable, List, Optional, Tuple

BOUND = 4096
_LAYERS = 64  # transformations of transformations deeper than this are not cached
_MAX_FUNCTIONS = 256  # a function reading more functions than this by name is not cached
_ABSENT = object()
_ENTRIES: "collections.OrderedDict[tuple, Tuple[Any, Any]]" = collections.OrderedDict()
_LOCK = threading.Lock()
_ATOMS = frozenset({type(None), bool, int, str})
_CONTAINERS = frozenset({tuple, list})


class _Unkeyed(Exception):
    """An option that has no key by type and value: the call is not cached."""


def _option(value: Any) -> tuple:
    """``value`` as its type and value, hashable (``_Unkeyed`` if it is not built of atoms)."""
    kind = type(value)
    if kind in _ATOMS:
        return (kind, value)
    if kind in _CONTAINERS:
        return (kind,) + tuple(_option(v) for v in value)
    if kind is dict:
        return (kind,) + tuple((_option(k), _option(v)) for k, v in value.items())
    raise _Unkeyed


def _functions(fun: Any) -> List[types.FunctionType]:
    """The Python functions under ``fun``'s layers (a transformation's ``fun``, a partial's ``func``, a bound
    method's ``__func__``, a custom rule's function)."""
    for _ in range(_LAYERS):
        if isinstance(fun, types.FunctionType):
            return [fun]
        if isinstance(fun, functools.partial):
            fun = fun.func
        elif isinstance(fun, types.MethodType):
            fun = fun.__func__
        elif getattr(fun, "fun", None) is not None:
            fun = fun.fun
        else:
            return []
    raise _Unkeyed


def _globals_stamp(fun: Any) -> tuple:
    """The identities of the module globals that ``fun`` and the functions it reads by name read, in order: a
    global bound anew since a transformation was made (``SCALE = 3.0``) makes another key, so the code compiled
    for the old value is not run, as it was not before this cache. (A value changed in place, an array's
    elements or an object's attribute, is the same object: the code compiled for it runs, as with JAX's jit.)"""
    stamp: List[int] = []
    seen: set = set()
    todo = _functions(fun)
    while todo:
        function = todo.pop()
        if function.__code__ in seen:
            continue
        seen.add(function.__code__)
        if len(seen) > _MAX_FUNCTIONS:
            raise _Unkeyed
        names, namespace = _names(function.__code__), function.__globals__
        for name in names:
            value = namespace.get(name, _ABSENT)
            stamp.append(id(value))
            if isinstance(value, types.FunctionType):
                todo.append(value)
        for cell in function.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # a cell not filled yet
                continue
            stamp.append(id(value))
            if isinstance(value, types.FunctionType):
                todo.append(value)
    return tuple(stamp)


@functools.lru_cache(maxsize=None)
def _names(code: types.CodeType) -> Tuple[str, ...]:
    """The global names ``code`` and the code of the functions and lambdas it defines read."""
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.extend(_names(const))
    return tuple(dict.fromkeys(names))


def _key(constructor: Callable, args: tuple, kwargs: dict) -> Optional[tuple]:
    """The cache key of ``constructor(*args, **kwargs)``: None where the call is not cached."""
    if not args:
        return None
    try:
        return (constructor, _identity(args[0]), _option(args[1:]), _option(kwargs), _globals_stamp(args[0]))
    except _Unkeyed:
        return None


def _identity(fun: Any) -> tuple:
    """``fun`` by identity; a bound method (made anew at each ``model.apply``) by its function's and its object's,
    each held alive by the entry's bound method, so neither id is reused while the entry lives."""
    if isinstance(fun, types.MethodType):
        return id(fun.__func__), id(fun.__self__)
    return (id(fun),)


def reused(constructor: Callable) -> Callable:
    """``constructor``, returning the transformation it made before for the same function and options.

    Args:
        constructor: a function whose first positional argument is the function to transform, and whose
            result depends on nothing but its arguments.

    Returns:
        The constructor with the same name, signature and docstring, cached by ``reused``'s key.
    """

    @functools.wraps(constructor)
    def made(*args, **kwargs):
        key = _key(constructor, args, kwargs)
        if key is None:
            return constructor(*args, **kwargs)
        with _LOCK:
            entry = _ENTRIES.get(key)
            if entry is not None:
                _ENTRIES.move_to_end(key)
                return entry[1]
        transformed = constructor(*args, **kwargs)  # outside the lock: it may make transformations itself
        with _LOCK:
            # the function is held with its transformation: while the entry lives, its id is not reused
            entry = _ENTRIES.setdefault(key, (args[0], transformed))
            if len(_ENTRIES) > BOUND:
                _ENTRIES.popitem(last=False)
        return entry[1]

    return made


def size() -> int:
    """How many transformations the cache holds now (at most ``BOUND``)."""
    return len(_ENTRIES)


def clear_caches() -> None:
    """Forget every transformation made so far (``jax.clear_caches``): one made afresh after this compiles anew,
    reading the configuration (``cache_dir``, ...) and module globals as they are then; a transformation the
    program kept keeps what it compiled."""
    with _LOCK:
        _ENTRIES.clear()
