"""The cache directory's folders and files: the user's own, verified on every read, replaced atomically.

Whatever numbax reads from its cache runs in the reading process (generated
modules are executed, entries and Numba's index and data files unpickled), so:

- The cache directory is created owner-only (``0o700``) and refused, with a
  ``NumbaxCacheError`` naming it and the fix, when another user owns it or
  group or others may write it, as ccache and pip do. Its subfolders are
  checked the same way, and a subfolder that is a symbolic link is refused:
  writes through it would land outside the cache.
- A path that cannot hold a cache (a file, a read-only directory, a folder
  that cannot be created) gives one ``NumbaxCacheWarning`` and no disk cache in
  this process: compiled code is kept in memory. A cache only saves time, and a
  read-only home (a container, a cluster's compute node) should not stop a
  program that would run without it.
- Files are read without following a symbolic link (``O_NOFOLLOW``), and only
  regular files. Sealed entries carry the name they were written under and the
  sha256 of their content: a truncated, damaged, swapped or foreign entry reads
  as missing, so the caller compiles again and replaces it.
- Files are written atomically: a temporary file in the same folder, then
  ``os.replace`` (which replaces a symbolic link, never its target).

Each folder is checked once per process; each file is hashed once, when read.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
import warnings
from typing import Dict, Optional, Tuple

from numbax.errors import NumbaxCacheError, NumbaxCacheWarning

_CHECKED: Dict[Tuple[str, bool], Optional[str]] = {}
_SEAL = b"numbax-entry"
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def directory(path: str) -> Optional[str]:
    """The cache directory at ``path`` (created owner-only if missing); None if it cannot hold a cache.

    Raises:
        NumbaxCacheError: another user owns it, or group or others may write it.
    """
    return _checked(os.path.abspath(os.path.expanduser(path)), follow=True)


def subdirectory(root: str, name: str) -> Optional[str]:
    """The folder ``root/name`` (created owner-only if missing); None if it cannot hold entries.

    Raises:
        NumbaxCacheError: it is a symbolic link, another user owns it, or group or others may write it.
    """
    return _checked(os.path.join(root, name), follow=False)


def _checked(path: str, follow: bool) -> Optional[str]:
    """``_check`` once per folder and process (a refusal is not remembered: it raises again)."""
    key = (path, follow)
    if key not in _CHECKED:
        _CHECKED[key] = _check(path, follow)
    return _CHECKED[key]


def _check(path: str, follow: bool) -> Optional[str]:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)  # the parents as any program makes them (~/.cache)
    except OSError as exc:
        return _unusable(path, f"it cannot be created ({exc})")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:  # a folder already, or what the checks below find
        pass
    except OSError as exc:
        return _unusable(path, f"it cannot be created ({exc})")
    try:
        info = os.stat(path) if follow else os.lstat(path)
    except OSError as exc:
        return _unusable(path, f"it cannot be read ({exc.strerror})")
    if stat.S_ISLNK(info.st_mode):
        raise NumbaxCacheError(f"the cache folder {path} is a symbolic link; numbax follows no link out of its "
                               "cache directory", hint=f"remove the link (`rm {path}`): numbax makes the folder again.")
    if not stat.S_ISDIR(info.st_mode):
        return _unusable(path, "it is not a directory")
    _refuse_if_others_control(path, info)
    if not info.st_mode & stat.S_IWUSR or not os.access(path, os.W_OK | os.X_OK):
        return _unusable(path, "it is read-only")
    return path


def _refuse_if_others_control(path: str, info: os.stat_result) -> None:
    """Raise ``NumbaxCacheError`` if someone else could put code into ``path``: its owner, or anyone who may write."""
    me = os.geteuid() if hasattr(os, "geteuid") else info.st_uid
    if info.st_uid != me:
        raise NumbaxCacheError(
            f"the cache directory {path} belongs to another user (uid {info.st_uid}; you are uid {me}), and what "
            "numbax loads from it runs in your process",
            hint="set NUMBAX_CACHE_DIR (or numbax.config.update('cache_dir', ...)) to a directory of your own.")
    writers = [who for who, bit in (("group", stat.S_IWGRP), ("others", stat.S_IWOTH)) if info.st_mode & bit]
    if writers:
        raise NumbaxCacheError(
            f"the cache directory {path} can be written by {' and '.join(writers)} (mode "
            f"{oct(stat.S_IMODE(info.st_mode))}), and what numbax loads from it runs in your process",
            hint=f"run `chmod go-w {path}`, or set NUMBAX_CACHE_DIR to a directory of your own.")


def _unusable(path: str, why: str) -> None:
    warnings.warn(f"numbax cannot keep its cache in {path}: {why}. Compiled code is kept in memory for this "
                  "process only; set NUMBAX_CACHE_DIR to a writable directory of your own to keep it across "
                  "processes.", NumbaxCacheWarning, stacklevel=2)
    return None


def read(path: str) -> Optional[bytes]:
    """The content of the regular file at ``path``; None if missing, unreadable or a symbolic link."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return handle.read()


def write(path: str, data: bytes) -> bool:
    """Put ``data`` at ``path`` atomically (a temporary file beside it, then ``os.replace``); False if refused."""
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".", suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
        return True
    except OSError:  # a full or read-only file system costs the next process a compilation, nothing more
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False


def _header(name: str, payload: bytes) -> bytes:
    return b"%s %s %s\n" % (_SEAL, name.encode(), hashlib.sha256(payload).hexdigest().encode())


def read_sealed(path: str) -> Optional[bytes]:
    """What ``write_sealed(path, payload)`` wrote; None if missing, damaged, or written under another name."""
    blob = read(path)
    if blob is None:
        return None
    header, newline, payload = blob.partition(b"\n")
    if not newline or header + newline != _header(os.path.basename(path), payload):
        return None
    return payload


def write_sealed(path: str, payload: bytes) -> bool:
    """Put ``payload`` at ``path`` atomically, behind a header with the file's name and the payload's sha256."""
    return write(path, _header(os.path.basename(path), payload) + payload)
