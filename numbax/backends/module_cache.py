"""Generated source as a real, importable module file named by its content hash.

Numba's disk cache needs a real file and a ``sys.modules`` entry; naming the
file by the hash of its text means the same program finds the same file (and
the same cached machine code) in every process, and a changed program never
finds a stale one. An existing file is never rewritten: Numba's cache checks
the file's modification time.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import types
from typing import Dict

_LOADED: Dict[str, types.ModuleType] = {}


def module_for(source: str, name: str, cache_dir: str, variant: str = "") -> types.ModuleType:
    """Import ``source`` from ``cache_dir/numbax_<name>_<hash>.py`` (writing it first if missing).

    ``variant`` names compile options that the machine code (but not the source) depends on; the hash
    covers it, so each variant has a file, and a Numba cache, of its own.
    """
    digest = hashlib.sha256((source + variant).encode()).hexdigest()[:16]
    modname = f"numbax_generated_{name}_{digest}"
    module = _LOADED.get(modname)
    if module is not None:
        return module
    os.makedirs(cache_dir, exist_ok=True)
    path = os.path.join(cache_dir, f"{modname}.py")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            handle.write(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    _LOADED[modname] = module
    return module
