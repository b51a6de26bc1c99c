"""Whether evaluating an expression can have an effect besides its value."""
from __future__ import annotations

import gast
import numpy as np

from numbax.ast_passes.tree_copy import walk
from numbax.runtime import checks

_PURE_BUILTINS = {"len", "range", "min", "max", "abs", "float", "int", "bool", "complex", "round", "zip",
                  "enumerate", "tuple"}
_IMPURE_NUMPY = {"random", "copyto", "put", "place", "fill_diagonal", "putmask"}
_MUTATING_METHODS = {"fill", "sort", "resize", "put", "itemset", "partition", "setflags", "setfield", "byteswap",
                     "tofile", "dump", "append", "pop", "index_add", "save_row"}
# runtime helpers called for what they do
_EFFECTS = {"debug_print", "debug_callback", "scalar_output", "real_output", "assume_equal", "check_contraction"} | set(checks.__all__)


def _callee_path(func: gast.expr):
    parts = []
    while isinstance(func, gast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, gast.Name):
        parts.append(func.id)
        return list(reversed(parts))
    return None


_READ_ONLY_EFFECTS = set(checks.__all__) | {"check_contraction", "assume_equal", "scalar_output", "real_output"}


def is_check(call: gast.expr) -> bool:
    """Whether ``call`` is a run-time check (``rt.check_index(...)``, ``rt.check_contraction``): an effect that
    only reads its arguments."""
    path = _callee_path(call.func) if isinstance(call, gast.Call) else None
    return bool(path) and len(path) > 1 and path[0] == "rt" and path[-1] in _READ_ONLY_EFFECTS


# checks that read only their operands' shapes (``np.shape``), never the numbers in them
_SHAPE_CHECKS = {"check_broadcast", "check_in_place", "check_store", "check_where", "check_dot", "check_vdot",
                 "check_matmul", "check_contraction", "check_row"}


def checks_shapes(call: gast.expr) -> bool:
    """Whether ``call`` is a run-time check that reads only its operands' shapes: made on every row of arrays
    of one shape, it passes or fails on the first row as on any."""
    return is_check(call) and _callee_path(call.func)[-1] in _SHAPE_CHECKS


def changes_arguments(call: gast.Call) -> bool:
    """Whether a call that is not pure may change what it is given (a run-time check only reads it)."""
    return not is_check(call)


def _writes_output(path, call: gast.Call) -> bool:
    """Whether ``call`` is a NumPy ufunc given its output array (``np.multiply(a, b, out)``)."""
    ufunc = getattr(np, path[1], None) if len(path) == 2 and path[0] == "np" else None
    return isinstance(ufunc, np.ufunc) and len(call.args) > ufunc.nin


def is_pure(expr: gast.expr) -> bool:
    """True when ``expr`` only computes a value (NumPy/math calls, arithmetic, indexing)."""
    call = gast.Call
    for node in walk(expr):
        if type(node) is call:
            path = _callee_path(node.func)
            if path is None and isinstance(node.func, gast.Attribute):  # a method of a value computed here
                path = ["", node.func.attr]  # (``rt.reshape(e, s).astype(t)``), whose receiver the walk reaches
            if path is None:
                return False
            if len(path) == 1 and path[0] not in _PURE_BUILTINS:
                return False
            if path[0] in ("np", "math", "cmath"):
                if _IMPURE_NUMPY.intersection(path[1:]) or _writes_output(path, node):
                    return False
                continue
            if len(path) > 1 and (path[-1] in _MUTATING_METHODS or path[-1] in _EFFECTS):
                return False
    return True
