"""Global settings, set with ``numbax.config.update(name, value)`` or the context managers here.

Both numbax's names and JAX's (``"jax_disable_jit"``) are accepted.
"""
from __future__ import annotations

import contextlib
import os
import threading
from typing import Any, Dict, Iterator

_DEFAULTS: Dict[str, Any] = {
    "disable_jit": False,
    "log_compiles": False,
    "enable_x64": True,
    "debug_nans": False,
    "debug_infs": False,
    "cache_dir": os.environ.get("NUMBAX_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "numbax"),
}


class _State(threading.local):
    """The current values, one attribute per option (read on every compiled call, so kept cheap)."""

    def __init__(self):
        self.__dict__.update(_DEFAULTS)


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


def log_compiles(enable: bool = True):
    """Context manager: print each compilation with its cache key and why the cache missed."""
    return _override("log_compiles", enable)


def __getattr__(name: str) -> Any:
    if name.startswith("jax_") or name in _DEFAULTS:
        return read(name)
    raise AttributeError(name)
