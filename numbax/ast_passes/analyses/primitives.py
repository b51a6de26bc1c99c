"""primitives: which primitive an A-normal-form right-hand side applies, and to which arguments.

``np.tanh(a)`` is the primitive ``numpy.tanh`` applied to ``[a]``; ``a * b``
is ``gast.Mult`` applied to ``[a, b]``; ``a.sum(axis=0)`` is the method
``sum`` with the receiver first. Names in generated code are resolved against
the modules generated code imports (``np``, ``math``) and the builtins.
"""
from __future__ import annotations

import builtins
import dataclasses
import math
import sys
from typing import Any, Dict, List, Optional

import gast
import numpy as np

from numbax import runtime as _runtime
from numbax.primitives.registry import CUSTOM, custom_key, method_key
from numbax.runtime.identity import custom_input_seen, custom_rule

_MODULES = {"np": np, "math": math, "rt": _runtime}


@dataclasses.dataclass
class Application:
    """A primitive applied to atoms: the table key, a readable name, arguments and keywords."""

    key: Any
    name: str
    args: List[gast.expr]
    keywords: Dict[str, gast.expr]


def _dotted(node: gast.expr) -> Optional[str]:
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _module(head: str) -> Any:
    """The module generated code calls ``head``: NumPy, math, the runtime, or MPI's collectives (``mpi``, in
    code of a ``pmap`` across processes, once they are imported)."""
    if head == "mpi":
        return sys.modules.get("numbax.distributed.collectives")
    return _MODULES.get(head)


def _resolve(dotted: str) -> Any:
    head, *rest = dotted.split(".")
    if _module(head) is not None:
        obj = _module(head)
    elif not rest and hasattr(builtins, head):
        return getattr(builtins, head)
    else:
        return None
    for part in rest:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _is_module_reference(node: gast.expr) -> bool:
    dotted = _dotted(node)
    return dotted is not None and _module(dotted.split(".")[0]) is not None


def application(value: gast.expr) -> Optional[Application]:
    """The primitive ``value`` applies, or ``None`` for atoms, subscripts and comparisons."""
    if isinstance(value, gast.BinOp):
        return Application(type(value.op), _OPERATOR_NAMES.get(type(value.op), type(value.op).__name__),
                           [value.left, value.right], {})
    if isinstance(value, gast.UnaryOp):
        return Application(type(value.op), _OPERATOR_NAMES.get(type(value.op), type(value.op).__name__),
                           [value.operand], {})
    if isinstance(value, gast.Attribute) and not _is_module_reference(value):
        return Application(method_key(value.attr), f".{value.attr}", [value.value], {})
    if isinstance(value, gast.Call):
        keywords = {k.arg: k.value for k in value.keywords}
        func = value.func
        if isinstance(func, gast.Attribute) and not _is_module_reference(func):
            args = [func.value] + list(value.args)
            if func.attr in ("reshape", "transpose") and len(value.args) > 1:
                args = [func.value, gast.Tuple(elts=list(value.args), ctx=gast.Load())]
            return Application(method_key(func.attr), f".{func.attr}()", args, keywords)
        dotted = _dotted(func)
        obj = _resolve(dotted) if dotted else None
        if obj is custom_input_seen:
            return Application(obj, "the inputs of a custom_vjp or custom_jvp function's rule (a derivative of a "
                               "derivative through a custom rule is not supported yet)", list(value.args), keywords)
        if obj is custom_rule and value.args and isinstance(value.args[0], gast.Constant):
            number = value.args[0].value  # a user's custom_vjp or custom_jvp function: its own entry
            return Application(custom_key(number), CUSTOM[number][0] if number in CUSTOM else dotted,
                               list(value.args), keywords)
        return Application(obj if obj is not None else ("unknown", dotted),
                           _COLLECTIVE_NAMES.get(dotted, dotted or "a call"), list(value.args), keywords)
    return None


# how the collectives' markers and helpers read in a refusal (``numbax.lax.collective_lowering``)
_COLLECTIVE_NAMES = {
    **{f"rt.collective_{kind}": f"numbax.lax.{kind} differentiated inside the vmap that binds its axis (differentiate "
       "the whole vmap instead, or call the collective outside the differentiated function)"
       for kind in ("psum", "pmean", "pmax", "pmin", "all_gather", "ppermute", "psum_scatter")},
    **{f"rt.gpu_{kind}": f"numbax.lax.{kind} over the GPUs of a pmap, differentiated inside the pmapped function "
       "(differentiate inside it, and apply the collective to the derivatives)"
       for kind in ("psum", "pmean", "pmax", "pmin", "all_gather", "ppermute", "psum_scatter")},
    "rt.max_rows": "numbax.lax.pmax (JAX has no derivative rule for it either)",
    "rt.min_rows": "numbax.lax.pmin (JAX has no derivative rule for it either)",
    **{f"mpi.{call}": f"numbax.lax.{kinds} across processes (differentiate inside the pmapped function, and "
       "apply the collective to the derivatives)"
       for call, kinds in (("allreduce_sum", "psum or psum_scatter"), ("allgather", "pmean or all_gather"),
                           ("allreduce_max", "pmax"), ("allreduce_min", "pmin"), ("permute", "ppermute"),
                           ("rank", "axis_index"))},
}


_OPERATOR_NAMES = {
    gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**", gast.MatMult: "@",
    gast.USub: "unary -", gast.UAdd: "unary +", gast.Mod: "%", gast.FloorDiv: "//",
}
