"""Generated source on disk, so that a new process calling a function it has run before skips the passes.

Numba's disk cache keeps the machine code of each generated module; this
cache keeps, per specialization, numbax's side of it: the generated source and
what calling it needs (a ``pipeline.Generated``), in
``<cache_dir>/generated/<key>.pkl``. The key hashes everything that source
depends on:

- numbax's version and its own source files as numbax was imported (size and
  modification time of each: ``numbax.source_files``; nothing is read or
  written once they change under a running process), and the versions of
  Python, NumPy and Numba;
- the transformation (``"jit"``, or what a subclass of ``Jitted`` declares)
  and the config options the passes may read;
- the function's source text and, recursively, what each free name of it
  denotes: modules by name, NumPy, math and builtin callables by their
  qualified names, numbers, strings and containers of them by value, user
  functions (the ones inlined) by their own source text and free names, and
  transformations (``grad(f)``, ``vmap(f)``) by their options and function;
- the specialization key: static argument values (fingerprinted the same
  way), the argument structure, and each leaf's type, dtype and ndim.

A free name whose value cannot be fingerprinted like that (an array, a user
module, a class, any other object) keeps the function off the disk: it is
specialized by the passes in each process, as without this cache. So is a
specialization that captured constant arrays or whose output structure does
not survive pickling, and every specialization while ``NUMBAX_DUMP`` asks to
see the passes' output. Editing the function, a function it calls, a value it
reads or numbax itself changes the key: a stale entry is never found, only
left behind. Each entry is sealed with its key and the sha256 of its pickle
(``numbax.cache_files``), so a damaged or swapped one is a miss, compiled again
and replaced, and it is read only from a cache directory that is the user's own.
"""
from __future__ import annotations

import builtins
import dataclasses
import functools
import hashlib
import os
import pickle
import sys
import types
from typing import Any, Dict, Optional

import numpy as np

from numbax import cache_files, source_files, tree_util
from numbax._version import __version__

FORMAT = 2
_SAFE_PACKAGES = frozenset({"numpy", "math", "cmath", "numbax"})
_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_CONFIG_READ_BY_PASSES = ("enable_x64", "debug_nans", "debug_infs")
_STAMP: Optional[str] = None


class Uncacheable(Exception):
    """A value the key cannot describe by content or by a stable name."""


# --------------------------------------------------------------------------
# Fingerprints: nested tuples of strings, the same in every process for the same program.


def _free_names(code: types.CodeType) -> set:
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _free_names(const)
    return names


_MISSING = object()


def _lookup(fn: types.FunctionType, name: str) -> Any:
    """What a free name of ``fn`` denotes now: closure cell, then global, then builtin."""
    code = fn.__code__
    if fn.__closure__ and name in code.co_freevars:
        try:
            return fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:
            return _MISSING
    if name in fn.__globals__:
        return fn.__globals__[name]
    return getattr(builtins, name, _MISSING)


def _function(fn: types.FunctionType, seen: set) -> tuple:
    """A user function: its source text, defaults and, recursively, its free names."""
    from numbax.ast_passes.parse import source_of
    from numbax.errors import NumbaxSourceError

    code = fn.__code__
    if id(code) in seen:  # by identity: code objects of different files can compare equal
        return ("function-again", fn.__module__, fn.__qualname__)
    seen.add(id(code))
    try:
        text, _ = source_of(fn)
    except NumbaxSourceError:
        raise Uncacheable(fn.__qualname__) from None
    names = tuple((name, value(_lookup(fn, name), seen)) for name in sorted(_free_names(code)))
    return ("function", fn.__module__, fn.__qualname__, code.co_filename, code.co_firstlineno, text,
            value(fn.__defaults__, seen), value(fn.__kwdefaults__, seen), names)


def value(v: Any, seen: Optional[set] = None) -> tuple:
    """The fingerprint of a value the passes may read; ``Uncacheable`` if it has none."""
    from numbax.ast_passes.resolve import is_user_function

    seen = set() if seen is None else seen
    t = type(v)
    if t in _SCALARS:
        return (t.__name__, repr(v))
    if v is _MISSING:
        return ("missing",)
    if v is Ellipsis:
        return ("ellipsis",)
    if isinstance(v, np.generic):
        return ("numpy-scalar", t.__name__, repr(v))
    if isinstance(v, np.dtype):
        return ("dtype", repr(v))
    if t in (tuple, list):
        return (t.__name__,) + tuple(value(x, seen) for x in v)
    if t is dict:
        return ("dict",) + tuple((value(k, seen), value(x, seen)) for k, x in v.items())
    if t in (range, slice):
        return (t.__name__, value(v.start, seen), value(v.stop, seen), value(v.step, seen))
    if isinstance(v, types.ModuleType):
        if v.__name__.split(".")[0] in _SAFE_PACKAGES:
            return ("module", v.__name__)
        raise Uncacheable(v.__name__)
    fingerprint = getattr(v, "_numbax_fingerprint", None)
    if fingerprint is not None:  # a transformation (grad, vmap): what it is of, and its options
        return ("transformation", value(fingerprint(), seen))
    v = getattr(v, "_numbax_fun", v)
    if isinstance(v, functools.partial):
        return ("partial", value(v.func, seen), value(v.args, seen), value(v.keywords, seen))
    if is_user_function(v):
        return _function(v, seen)
    name = getattr(v, "__name__", None)
    if isinstance(name, str) and getattr(builtins, name, None) is v:
        return ("builtin", name)
    if isinstance(v, np.ufunc):
        return ("ufunc", v.__name__)
    module, qualname = getattr(v, "__module__", None), getattr(v, "__qualname__", name)
    if isinstance(module, str) and module.split(".")[0] in _SAFE_PACKAGES and isinstance(qualname, str):
        if isinstance(v, types.MethodType):  # its object's state is not in its name
            raise Uncacheable(qualname)
        # a closure numbax made (test_util's ``f_vjp`` of the user's ``f``) is its name and what it closes over
        closure = getattr(v, "__closure__", None) or ()
        if closure and id(v) in seen:
            return ("named-again", module, qualname)
        seen.add(id(v))
        return ("named", module, qualname) + tuple(value(_cell(c, qualname), seen) for c in closure)
    raise Uncacheable(t.__name__)


def _cell(cell: types.CellType, owner: str) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # not yet filled
        raise Uncacheable(owner) from None


def structure(treedef: Any) -> tuple:
    """The fingerprint of an argument or output structure (builtin containers and namedtuples only)."""
    data = treedef.node_data()
    if data is None:
        return ("*",)
    node_type, aux = data
    if node_type in (list, tuple, dict, type(None)):
        kind = (node_type.__name__, value(aux))
    elif issubclass(node_type, tuple) and hasattr(node_type, "_fields"):
        kind = ("namedtuple", node_type.__module__, node_type.__qualname__, node_type._fields)
    else:
        raise Uncacheable(node_type.__qualname__)
    return kind + tuple(structure(child) for child in tree_util.treedef_children(treedef))


def _key_part(part: Any) -> tuple:
    """A specialization key, or a part of one: structures, static values and leaf types."""
    if isinstance(part, tree_util.PyTreeDef):
        return structure(part)
    if isinstance(part, type) and part.__module__.split(".")[0] in ("builtins", "numpy"):
        return ("type", part.__module__, part.__qualname__)
    if type(part) is tuple:
        return ("tuple",) + tuple(_key_part(p) for p in part)
    return value(part)


def _compiler_stamp() -> str:
    """numbax's version and its source files as it was imported, and the versions of what generated code is
    made for."""
    global _STAMP
    if _STAMP is None:
        import numba

        _STAMP = repr((FORMAT, __version__, sys.version, np.__version__, numba.__version__,
                       source_files.AT_IMPORT))
    return _STAMP


def key_for(fn: Any, tag: str, key: Any) -> Optional[str]:
    """The file name of ``fn``'s specialization ``key`` under transformation ``tag``; None if uncacheable."""
    from numbax import config

    if os.environ.get("NUMBAX_DUMP") or source_files.changed(look=False):
        return None
    try:
        text = repr((_compiler_stamp(), tag, tuple(config.read(o) for o in _CONFIG_READ_BY_PASSES),
                     value(fn), _key_part(key)))
    except Uncacheable:
        return None
    return hashlib.sha256(text.encode()).hexdigest()[:32]


# --------------------------------------------------------------------------
# The entries.


def _path(cache_dir: str, key: str) -> Optional[str]:
    folder = cache_files.subdirectory(cache_dir, "generated")
    return None if folder is None else os.path.join(folder, f"{key}.pkl")


def _record(generated: Any) -> Optional[Dict[str, Any]]:
    """What ``generated`` holds, in a form that unpickles to an equal ``Generated``; None if it cannot."""
    from numbax.ast_passes.specialize.builder import DYNAMIC

    if generated.constants:
        return None
    fields = {f.name: getattr(generated, f.name) for f in dataclasses.fields(generated)}
    returns = fields.pop("returns")
    if returns is not None:
        example = tree_util.tree_unflatten(returns.treedef, [0] * returns.treedef.num_leaves)
        statics = tuple(None if s is DYNAMIC else (s,) for s in returns.statics)
        avals = tuple(None if a is None else (a.dtype.str, a.ndim, a.weak) for a in returns.avals)
        fields["returns"] = (example, statics, avals)
    else:
        fields["returns"] = None
    return fields


def _generated(record: Dict[str, Any], generated_type: type) -> Any:
    from numbax.ast_passes.specialize.builder import DYNAMIC, ReturnSpec
    from numbax.ast_passes.specialize.values import AVal

    fields = dict(record)
    if fields["returns"] is not None:
        example, statics, avals = fields["returns"]
        fields["returns"] = ReturnSpec(tree_util.tree_structure(example),
                                       tuple(DYNAMIC if s is None else s[0] for s in statics),
                                       tuple(None if a is None else AVal(np.dtype(a[0]), a[1], a[2]) for a in avals))
    return generated_type(**fields)


def load(cache_dir: str, key: str, generated_type: type) -> Optional[Any]:
    """The ``Generated`` stored under ``key``, or None (missing, damaged, written for another key, of another
    layout)."""
    path = _path(cache_dir, key)
    payload = None if path is None else cache_files.read_sealed(path)
    if payload is None:
        return None
    record = pickle.loads(payload)
    if set(record) != {f.name for f in dataclasses.fields(generated_type)}:
        return None
    return _generated(record, generated_type)


def store(cache_dir: str, key: str, generated: Any) -> None:
    """Keep ``generated`` under ``key`` if it survives the round trip exactly (else keep nothing)."""
    record = _record(generated)
    path = _path(cache_dir, key)
    if record is None or path is None or source_files.changed():
        return
    try:
        data = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        again = _generated(pickle.loads(data), type(generated))
        if again != generated:
            return
    except Exception:  # an unpicklable output structure or static return value, or one without ==
        return
    cache_files.write_sealed(path, data)
