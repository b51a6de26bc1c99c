"""Turning compile-time values back into expressions of generated code."""
from __future__ import annotations

from typing import Any, Dict, Set

import gast
import numpy as np

from numbax.ast_passes import resolve
from numbax.ast_passes.naming import Namer
from numbax.ast_passes.specialize.values import Dyn, LocalFunction, is_static_scalar


class Unrepresentable(Exception):
    """A compile-time value that generated code cannot spell (a string, an arbitrary object)."""


def name_node(name: str, ctx=None) -> gast.Name:
    """A ``gast.Name`` (load context unless ``ctx`` is given)."""
    return gast.Name(id=name, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def constant_node(value: Any) -> gast.expr:
    """A literal for a Python or NumPy scalar, keeping NumPy's dtype (``np.float32(0.5)``, ``np.float64(0.5)``).

    A NumPy scalar stays one: NumPy 2 (NEP 50) promotes a float32 array to float64 with ``np.float64(0.5)``
    (strong) but not with ``0.5`` (a weak Python float), so the literal of a folded ``np.sin(0.5)`` keeps its
    type. ``np.bool_`` is spelled ``True``: no dtype is below bool, so its weakness never matters.
    """
    if isinstance(value, np.generic) and not isinstance(value, np.bool_):
        # float32's shortest repr round-trips in float32: np.float32(0.1), not np.float32(0.10000000149011612)
        item = float(str(value)) if isinstance(value, np.floating) and np.isfinite(value) else value.item()
        return gast.Call(func=resolve.reference_node(f"np.{value.dtype.name}"),
                         args=[constant_node(item)], keywords=[])
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        text = "np.nan" if np.isnan(value) else ("np.inf" if value > 0 else "-np.inf")
        return gast.parse(text).body[0].value
    if isinstance(value, (int, float)) and value < 0:
        return gast.UnaryOp(op=gast.USub(), operand=gast.Constant(value=-value, kind=None))
    return gast.Constant(value=value, kind=None)


class Materializer:
    """Spells compile-time values in generated code; hoists constant arrays into parameters."""

    def __init__(self, namer: Namer, imports: Set[str]):
        self.namer = namer
        self.imports = imports
        self.constants: Dict[str, np.ndarray] = {}
        self._constant_ids: Dict[int, str] = {}

    def reference(self, obj: Any) -> gast.expr:
        """The canonical spelling of a module-level object (``np.tanh``), recording its import."""
        if isinstance(obj, np.dtype):
            obj = obj.type
        ref = resolve.canonical_reference(obj)
        if ref is None:
            raise Unrepresentable(f"{getattr(obj, '__name__', type(obj).__name__)!s}")
        if ref[0]:
            self.imports.add(ref[0])
        return resolve.reference_node(ref[1])

    def constant_array(self, value: np.ndarray, hint: str = "const") -> gast.expr:
        """A hidden parameter holding a constant array captured by the function."""
        name = self._constant_ids.get(id(value))
        if name is None:
            name = self.namer.new(hint)
            self._constant_ids[id(value)] = name
            self.constants[name] = value
        return name_node(name)

    def node(self, value: Any, hint: str = "const") -> gast.expr:
        """An expression that evaluates to ``value`` at run time."""
        if isinstance(value, Dyn):
            return value.expr()
        if isinstance(value, (np.generic, np.ndarray)) and value.dtype == np.float16:
            raise Unrepresentable("a float16 value (NumPy's result here: np.sin of a bool is one), which Numba has "
                                  "no arithmetic for,")
        if value is None or isinstance(value, str) or is_static_scalar(value):
            return constant_node(value)
        if isinstance(value, tuple):
            return gast.Tuple(elts=[self.node(v, hint) for v in value], ctx=gast.Load())
        if isinstance(value, list):
            return gast.List(elts=[self.node(v, hint) for v in value], ctx=gast.Load())
        if isinstance(value, np.ndarray):
            return self.constant_array(value, hint)
        if isinstance(value, range):
            args = [value.start, value.stop, value.step] if value.step != 1 else [value.start, value.stop]
            return gast.Call(func=name_node("range"), args=[constant_node(a) for a in args], keywords=[])
        if isinstance(value, slice):
            return gast.Slice(*(None if v is None else self.node(v) for v in (value.start, value.stop, value.step)))
        if value is Ellipsis:
            return gast.Constant(value=Ellipsis, kind=None)
        if isinstance(value, LocalFunction):
            raise Unrepresentable(f"the local function {value.name!r}")
        return self.reference(value)
