"""Generated source as a module, backed by a real file named by its content hash.

Numba's disk cache needs a real file and a ``sys.modules`` entry; naming the
file by the hash of its text means the same program finds the same file (and
the same cached machine code) in every process, and a changed program never
finds a stale one. The module is executed from the text numbax generated (or
read from a verified cache entry), never from whatever the file holds: a file
whose content differs (truncated, damaged, swapped, a symbolic link) is
replaced before anything uses it, and an intact one is left alone (Numba
stamps its cache with the file: its content, or in older versions its
modification time). Without a usable cache
directory the module lives in memory only (``linecache`` keeps its lines for
tracebacks).
"""
from __future__ import annotations

import hashlib
import linecache
import os
import sys
import types
from typing import Dict, Optional

from numbax import cache_files

_LOADED: Dict[str, types.ModuleType] = {}


def module_for(source: str, name: str, cache_dir: Optional[str], variant: str = "") -> types.ModuleType:
    """The module of ``source``, with ``cache_dir/numbax_generated_<name>_<hash>.py`` holding exactly its text.

    ``variant`` names compile options that the machine code (but not the source) depends on; the hash
    covers it, so each variant has a file, and a Numba cache, of its own. ``cache_dir`` None (or one that
    refuses the file): the module has no file, and ``module.__file__`` is unset.
    """
    digest = hashlib.sha256((source + variant).encode()).hexdigest()[:16]
    modname = f"numbax_generated_{name}_{digest}"
    module = _LOADED.get(modname)
    if module is None:
        module = _execute(modname, source, _file_holding(source, modname, cache_dir) if cache_dir else None)
        _LOADED[modname] = module
    return module


def _file_holding(source: str, modname: str, cache_dir: str) -> Optional[str]:
    """The path of the module file, written (or replaced) unless it holds ``source`` already; None if refused."""
    path = os.path.join(cache_dir, f"{modname}.py")
    text = source.encode()
    return path if cache_files.read(path) == text or cache_files.write(path, text) else None


def _execute(modname: str, source: str, path: Optional[str]) -> types.ModuleType:
    module = types.ModuleType(modname)
    if path is None:
        filename = f"<numbax generated {modname}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    else:
        filename = module.__file__ = path
    sys.modules[modname] = module
    exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - numbax's own generated code
    return module
