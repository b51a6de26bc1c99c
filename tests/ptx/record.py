"""Note each kernel Numba's CUDA simulator launches: its module, its name and its arguments' Numba types.

``install(folder)`` wraps the simulator's launch; ``flush()`` writes what this process saw, once per distinct
kernel and signature, to ``folder/kernels-<pid>.pickle``. A generated module's text is written with it (its
file may be gone by then); a module of numbax's is imported again by ``check``.
"""
from __future__ import annotations

import linecache
import os
import pickle
from typing import Any, Dict, Optional, Tuple

_SEEN: Dict[Tuple[str, str, tuple], str] = {}
_FOLDER: Optional[str] = None


def install(folder: str) -> None:
    """Record every kernel this process launches in the simulator, for ``flush`` to write into ``folder``."""
    global _FOLDER
    from numba.cuda.simulator import kernel as simulated

    if _FOLDER is not None:
        return
    _FOLDER = folder
    os.makedirs(folder, exist_ok=True)
    launch = simulated.FakeCUDAKernel.__call__

    def recorded(self, *args):
        if not (self._device or simulated._kernel_context):
            fn = self.fn
            key = (fn.__module__, fn.__name__, tuple(argument_type(a) for a in args))
            if key not in _SEEN:
                _SEEN[key] = "".join(linecache.getlines(fn.__code__.co_filename))
        return launch(self, *args)

    simulated.FakeCUDAKernel.__call__ = recorded


def flush() -> None:
    """Write the kernels recorded so far (nothing where ``install`` was not called)."""
    if _FOLDER is not None and _SEEN:
        with open(os.path.join(_FOLDER, f"kernels-{os.getpid()}.pickle"), "wb") as out:
            pickle.dump(_SEEN, out)


def argument_type(value: Any):
    """The Numba type numba.cuda gives ``value`` as a kernel's argument (a device array is never read-only),
    or, where it has none (the launch fails on a GPU), the name of the value's Python type."""
    from numba import typeof, types

    value = getattr(value, "_ary", value)  # the simulator's device array wraps a NumPy array
    if isinstance(value, tuple):
        items = [argument_type(v) for v in value]
        return "tuple" if any(isinstance(t, str) for t in items) else types.BaseTuple.from_types(items)
    try:
        found = typeof(value)
    except ValueError:
        return type(value).__name__
    if isinstance(found, types.Array):
        return types.Array(found.dtype, found.ndim, found.layout)
    return found
