"""coverage: which NumPy functions and operators each transformation has rules for."""
from __future__ import annotations

import builtins
import math
from typing import Dict

import gast
import numpy as np

_OPERATORS = {
    gast.Add: "operator.add", gast.Sub: "operator.sub", gast.Mult: "operator.mul", gast.Div: "operator.truediv",
    gast.Pow: "operator.pow", gast.MatMult: "operator.matmul", gast.USub: "operator.neg",
    gast.UAdd: "operator.pos", gast.Mod: "operator.mod", gast.FloorDiv: "operator.floordiv",
    gast.Not: "operator.not_", gast.Invert: "operator.invert", gast.BitAnd: "operator.and_",
    gast.BitOr: "operator.or_", gast.BitXor: "operator.xor", gast.LShift: "operator.lshift",
    gast.RShift: "operator.rshift", gast.Lt: "operator.lt", gast.LtE: "operator.le", gast.Gt: "operator.gt",
    gast.GtE: "operator.ge", gast.Eq: "operator.eq", gast.NotEq: "operator.ne", gast.Is: "operator.is_",
    gast.IsNot: "operator.is_not", gast.In: "operator.contains", gast.NotIn: "operator.not_contains",
    gast.And: "operator.and", gast.Or: "operator.or",
}
_MODULES = (("numpy", np), ("numpy.linalg", np.linalg), ("math", math), ("builtins", builtins))


def _runtime_names(key) -> list:
    """The user-facing names of a runtime stand-in: ``scipy.special.expit`` for ``rt.expit``."""
    from numbax.runtime import grad as grad_runtime, special
    from numbax.primitives.linalg import SPLIT_RESULTS

    if getattr(key, "__module__", None) == special.__name__ and key.__name__ in special.__all__:
        return [f"scipy.special.{key.__name__}"]
    for fn, spellings in SPLIT_RESULTS.items():  # one primitive per result of an unpacked call
        if any(getattr(grad_runtime, s.split(".")[-1], None) is key for s in spellings):
            return _names_of(fn)
    return []


def _names_of(key) -> list:
    if key in _OPERATORS:
        return [_OPERATORS[key]]
    runtime_names = _runtime_names(key)
    if runtime_names:
        return runtime_names
    if isinstance(key, tuple) and key[0] == "method":
        return [f"numpy.ndarray.{key[1]}"]
    names = []
    for modname, module in _MODULES:
        for attr in dir(module):
            if not attr.startswith("_") and getattr(module, attr, None) is key:
                names.append(f"{modname}.{attr}")
    return names


def coverage() -> Dict[str, Dict[str, bool]]:
    """``{"numpy.tanh": {"grad": True, "jvp": True}, ...}``: every function a transformation has a rule for,
    with one column per mode (reverse: ``grad``, ``vjp``; forward: ``jvp``).

    A non-differentiable function (``numpy.sign``, comparisons) counts as
    covered in both: its rule is that no derivative flows through it. So does a
    composite (``numpy.diff``), compiled as the primitives it is written in.
    """
    from numbax.primitives.registry import NONDIFFERENTIABLE, REGISTRY

    out: Dict[str, Dict[str, bool]] = {}
    for key, primitive in REGISTRY.items():
        if primitive.vjp is None and primitive.composite is None:
            continue
        for name in _names_of(key):
            row = out.setdefault(name, {"grad": True, "jvp": False})
            row["jvp"] = row["jvp"] or primitive.jvp is not None or primitive.vjp is NONDIFFERENTIABLE or \
                primitive.composite is not None
    return dict(sorted(out.items()))
