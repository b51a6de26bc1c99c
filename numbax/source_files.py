"""numbax's own source files as this process found them, so that its disk cache never files code made from a
mix of two versions of numbax.

The caches key what they keep by numbax's source: generated source by every file's size and modification time
(``numbax.generated_cache``), machine code by the content of the runtime and the CPU backend
(``numbax.backends.numba_cpu.compile.runtime_digest``). Both are read from the files when first needed, but
numbax imports most of its modules later, on first use. If the files change while a process runs (an upgrade
or a checkout under a running notebook), the process holds modules of two versions, and what it compiled would
be filed under a key that names one of them: a later process of that version would load code made by the
other. So the files are stamped once, when ``numbax`` is imported (before any other of its modules), and every
write of a user function's code or source checks them again, as does each runtime helper's cache when it opens
and the runtime's digest when it is first taken: once they differ, this process reads and writes no cache entry
(it warns once, and compiles in memory as without a cache directory).
"""
from __future__ import annotations

import os
import warnings
from typing import Iterable, Iterator, Tuple

_ROOT = os.path.dirname(os.path.abspath(__file__))  # numbax's folder: this module is at its top

Stamp = Tuple[str, int, int]  # a file's path relative to numbax's folder, its size and modification time (ns)


def paths(packages: Iterable[str] = ("",)) -> Iterator[str]:
    """Every ``.py`` file under the given subfolders of numbax's folder, in a fixed order."""
    for package in packages:
        for folder, subfolders, names in os.walk(os.path.join(_ROOT, package)):
            subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
            yield from (os.path.join(folder, n) for n in sorted(names) if n.endswith(".py"))


def _stamps(packages: Iterable[str] = ("",)) -> Tuple[Stamp, ...]:
    """The stamp of every ``.py`` file under the given subfolders of numbax's folder (``paths``)."""
    found = []
    start = len(os.path.join(_ROOT, ""))
    for path in paths(packages):
        try:
            info = os.stat(path)
        except OSError:  # removed since the walk listed it
            found.append((path[start:], -1, -1))
            continue
        found.append((path[start:], info.st_size, info.st_mtime_ns))
    return tuple(found)


AT_IMPORT: Tuple[Stamp, ...] = _stamps()
_changed = False


def root() -> str:
    """numbax's folder."""
    return _ROOT


def changed(packages: Iterable[str] = ("",), look: bool = True) -> bool:
    """Whether a source file under ``packages`` (subfolders of numbax's folder; all of it by default) differs
    from when numbax was imported; once one does, for the rest of the process (warned once). ``look=False``:
    whether one was found to differ so far, without looking at the files."""
    global _changed
    if _changed or not look:
        return _changed
    packages = tuple(packages)
    prefixes = tuple(os.path.join(p, "") for p in packages if p)
    before = {s for s in AT_IMPORT if not prefixes or s[0].startswith(prefixes)}
    if set(_stamps(packages)) == before:
        return False
    _changed = True
    from numbax.errors import NumbaxCacheWarning

    warnings.warn(f"numbax's source files in {_ROOT} changed while this process ran: it keeps its compiled code "
                  "in memory and neither reads nor writes the disk cache any more. Restart Python to use the "
                  "cache again.", NumbaxCacheWarning, stacklevel=2)
    return True
