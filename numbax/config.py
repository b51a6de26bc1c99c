"""Global settings, set with ``numbax.config.update(name, value)`` or the context managers here.

Both numbax's names and JAX's (``"jax_disable_jit"``) are accepted.
"""
from __future__ import annotations

import contextlib
import os
import threading
from typing import Any, Callable, Dict, Iterator, List

_DEFAULTS: Dict[str, Any] = {
    "disable_jit": False,
    "log_compiles": False,
    "enable_x64": True,
    "debug_nans": False,
    "debug_infs": False,
    "cache_dir": os.environ.get("NUMBAX_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "numbax"),
    # how many CPU devices ``numbax.devices("cpu")`` lists (``pmap`` runs one shard per device), as JAX's
    # ``jax_num_cpu_devices``; checked where it is read (``numbax.devices``)
    "cpu_device_count": os.environ.get("NUMBAX_CPU_DEVICE_COUNT", "1"),
}


# How many threads have ``disable_jit``, ``debug_nans`` or ``debug_infs`` on, and who wants to know
# when that count leaves or reaches zero: compiled functions called through Numba's C dispatch never
# read the thread-local settings, so they route every call through the Python path meanwhile (which
# runs the original function, or compiles and runs the checked specialization).
_PYTHON_PATH_OPTIONS = ("disable_jit", "debug_nans", "debug_infs")
_jit_disabled_threads = 0
_disable_jit_listeners: List[Callable[[bool], None]] = []
_count_lock = threading.Lock()


def _count_disable_jit(was: bool, now: bool) -> None:
    global _jit_disabled_threads
    if was == now:
        return
    with _count_lock:
        _jit_disabled_threads += 1 if now else -1
        if _jit_disabled_threads == (1 if now else 0):
            for listener in list(_disable_jit_listeners):
                listener(now)


def jit_disabled_anywhere() -> bool:
    """Whether some thread has ``disable_jit`` (or a debug check) on; a thread that exits with it on keeps
    counting."""
    return _jit_disabled_threads > 0


def on_disable_jit_change(listener: Callable[[bool], None]) -> None:
    """Call ``listener(True)`` when the first thread turns ``disable_jit`` on, ``listener(False)`` when the last
    turns it off."""
    _disable_jit_listeners.append(listener)


class _State(threading.local):
    """The current values, one attribute per option (read on every compiled call, so kept cheap)."""

    def __init__(self):
        self.__dict__.update(_DEFAULTS)
        _count_disable_jit(False, self._python_path())

    def _python_path(self) -> bool:
        return any(bool(self.__dict__.get(name)) for name in _PYTHON_PATH_OPTIONS)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _PYTHON_PATH_OPTIONS:
            was = self._python_path()
            super().__setattr__(name, value)
            _count_disable_jit(was, self._python_path())
            return
        super().__setattr__(name, value)


state = _State()


def _canonical(name: str) -> str:
    key = name[4:] if name.startswith("jax_") else name
    if key not in _DEFAULTS:
        raise AttributeError(f"unknown numbax config option {name!r}; known: {', '.join(sorted(_DEFAULTS))}")
    return key


def update(name: str, value: Any) -> None:
    """Set an option (``"disable_jit"``, ``"log_compiles"``, ``"cache_dir"``, ...; JAX's names too)."""
    setattr(state, _canonical(name), value)


def read(name: str) -> Any:
    """The current value of an option."""
    return getattr(state, _canonical(name))


@contextlib.contextmanager
def _override(name: str, value: Any) -> Iterator[None]:
    key = _canonical(name)
    old = getattr(state, key)
    setattr(state, key, value)
    try:
        yield
    finally:
        setattr(state, key, old)


def disable_jit(disable: bool = True):
    """Context manager: run transformed functions' original Python instead of compiled code."""
    return _override("disable_jit", disable)


def debug_nans(enable: bool = True):
    """Context manager: raise ``FloatingPointError`` at the line whose operation first produces a NaN."""
    return _override("debug_nans", enable)


def debug_infs(enable: bool = True):
    """Context manager: raise ``FloatingPointError`` at the line whose operation first produces an infinity."""
    return _override("debug_infs", enable)


def enable_x64(enable: bool = True):
    """Context manager accepted for JAX compatibility: numbax follows NumPy, whose default is already 64-bit."""
    return _override("enable_x64", enable)


def log_compiles(enable: bool = True):
    """Context manager: print each compilation with its cache key and why the cache missed."""
    return _override("log_compiles", enable)


def __getattr__(name: str) -> Any:
    if name.startswith("jax_") or name in _DEFAULTS:
        return read(name)
    raise AttributeError(name)
