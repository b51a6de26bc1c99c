"""resolve: what each free name of a user function denotes, and how generated code names it.

Free names are looked up as Python does (closure cells, then globals, then
builtins). Objects that generated code must call or read (``np.tanh``,
``math.pi``, ``np.float32``) are written under one canonical spelling, so
``from numpy import tanh``, ``np.tanh`` and ``numbax.numpy.tanh`` all become
``np.tanh``.
"""
from __future__ import annotations

import builtins
import sys
import types
from typing import Any, Dict, Optional, Tuple

import gast
import numpy as np

_MISSING = object()

# module object -> (import statement, spelling in generated code)
_MODULES: Dict[str, Tuple[str, str]] = {
    "numpy": ("import numpy as np", "np"),
    "numpy.linalg": ("import numpy as np", "np.linalg"),
    "numpy.random": ("import numpy as np", "np.random"),
    "numpy.fft": ("import numpy as np", "np.fft"),
    "math": ("import math", "math"),
    "cmath": ("import cmath", "cmath"),
}

_CANONICAL: Optional[Dict[int, Tuple[str, str, Any]]] = None


def _own_name(module: Any, attr: str) -> bool:
    """Whether ``module.attr`` is a class under its own name: ``np.float64``, not its alias ``np.double``."""
    obj = getattr(module, attr, None)
    return isinstance(obj, type) and obj.__name__ == attr


def _build_index() -> Dict[int, Tuple[str, str, Any]]:
    import importlib

    index: Dict[int, Tuple[str, str, Any]] = {}
    for modname, (imp, spelling) in reversed(list(_MODULES.items())):
        module = importlib.import_module(modname)
        index[id(module)] = (imp, spelling, module)
        for attr in sorted(dir(module), key=lambda a: (not _own_name(module, a), a)):
            if attr.startswith("_"):
                continue
            obj = getattr(module, attr)
            if isinstance(obj, (int, float, str, bool)) and not isinstance(obj, type):
                continue
            index.setdefault(id(obj), (imp, f"{spelling}.{attr}", obj))
    for name in dir(builtins):
        obj = getattr(builtins, name)
        if callable(obj) and not name.startswith("_"):
            index[id(obj)] = ("", name, obj)
    for obj, spelling in _runtime_stand_ins():
        index[id(obj)] = ("from numbax import runtime as rt", spelling, obj)
    return index


def _add_late(index: Dict[int, Tuple[str, str, Any]]) -> None:
    """Index the stand-ins of modules the user's code has imported since the index was built."""
    for module in [m for m in _LATE if m in sys.modules and m not in _LATE_INDEXED]:
        _LATE_INDEXED.add(module)
        for obj, spelling in _LATE[module]():
            index[id(obj)] = ("from numbax import runtime as rt", spelling, obj)


def _runtime_stand_ins():
    """The ``numbax.runtime`` helpers that generated code calls by their ``rt.`` names."""
    from numbax.runtime import checks, collectives, gpu_shards, shards
    from numbax.runtime.debug import debug_callback, debug_print
    from numbax.runtime.identity import custom_input, custom_input_seen, custom_primal, custom_rule, stop_gradient
    from numbax.runtime.batching import batch_size
    from numbax.runtime.scan import stack_buffer
    from numbax.runtime.running_extrema import cummax, cummin
    from numbax.runtime.pooling import max_pool

    return [(cummax, "rt.cummax"), (cummin, "rt.cummin"), (max_pool, "rt.max_pool"),
            (debug_print, "rt.debug_print"), (debug_callback, "rt.debug_callback"),
            (stop_gradient, "rt.stop_gradient"), (custom_rule, "rt.custom_rule"),
            (custom_input, "rt.custom_input"), (custom_input_seen, "rt.custom_input_seen"),
            (custom_primal, "rt.custom_primal"), (stack_buffer, "rt.stack_buffer"), (batch_size, "rt.batch_size")] + \
        [(getattr(module, name), f"rt.{name}") for module in (checks, collectives, gpu_shards, shards)
         for name in module.__all__]


def _scipy_stand_ins():
    """SciPy functions Numba cannot call, and the runtime helpers generated code calls instead."""
    special = sys.modules["scipy.special"]
    return [(special.expit, "rt.expit"), (special.erf, "rt.erf"), (special.logsumexp, "rt.logsumexp"),
            (special.erfc, "rt.erfc"), (special.erfinv, "rt.erfinv"), (special.log_expit, "rt.log_expit"),
            (special.ndtr, "rt.ndtr"),
            (special.ndtri, "rt.ndtri"), (special.gammaln, "rt.gammaln"), (special.digamma, "rt.digamma"),
            (special.psi, "rt.digamma")]


def _random_kernels():
    """The kernels of ``numbax.random`` that compiled code calls (``rt.random_normal``)."""
    from numbax.runtime.random.kernels import KERNELS

    return [(kernel, f"rt.{name}") for name, kernel in KERNELS.items()]


# Modules whose functions get stand-ins only once the user's code imports them: importing them here
# would cost every first compilation (scipy.special: a tenth of a second).
_LATE = {"scipy.special": _scipy_stand_ins, "numbax.random": _random_kernels}
_LATE_INDEXED: set = set()


def canonical_reference(obj: Any) -> Optional[Tuple[str, str]]:
    """``(import line, spelling)`` for an object generated code can name, else ``None``."""
    global _CANONICAL
    if _CANONICAL is None:
        _CANONICAL = _build_index()
    entry = _CANONICAL.get(id(obj))
    if entry is None and len(_LATE_INDEXED) < len(_LATE):
        _add_late(_CANONICAL)
        entry = _CANONICAL.get(id(obj))
    if entry is None or entry[2] is not obj:
        return None
    return entry[0], entry[1]


def reference_node(spelling: str) -> gast.expr:
    """A load expression for a dotted spelling such as ``np.linalg.norm``."""
    parts = spelling.split(".")
    node: gast.expr = gast.Name(id=parts[0], ctx=gast.Load(), annotation=None, type_comment=None)
    for part in parts[1:]:
        node = gast.Attribute(value=node, attr=part, ctx=gast.Load())
    return node


class Namespace:
    """The free names of one user function: closure cells, then globals, then builtins."""

    def __init__(self, closure: Dict[str, Any], globals_: Dict[str, Any]):
        self.closure = closure
        self.globals = globals_

    def lookup(self, name: str) -> Any:
        """The object ``name`` denotes, or ``MISSING``."""
        for scope in (self.closure, self.globals):
            if name in scope:
                return scope[name]
        return getattr(builtins, name, _MISSING)


MISSING = _MISSING


def is_user_function(obj: Any) -> bool:
    """Whether ``obj`` is a Python function numbax should compile itself (inline or transform)."""
    if not isinstance(obj, types.FunctionType):
        return False
    module = obj.__globals__.get("__name__") or ""  # where it was defined (functools.wraps copies __module__)
    return not module.split(".")[0] in ("numpy", "scipy", "numba", "math", "builtins", "numbax")


def function_key(fn: types.FunctionType) -> tuple:
    """What tells specializations of user functions apart (and finds recursion): the code and the closure
    cells, so that two closures of one ``def`` over different values are two functions."""
    return (fn.__code__,) + tuple(id(cell) for cell in fn.__closure__ or ())
