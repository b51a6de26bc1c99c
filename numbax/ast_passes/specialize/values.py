"""The values of partial evaluation: what is known at compile time and what is not.

During specialization every expression evaluates to a Python object. Objects
known when compiling (numbers of static arguments, modules, functions,
containers, ``len(params)``) are ordinary Python values; a value known only at
run time is a ``Dyn`` holding the expression that computes it. Containers may
hold ``Dyn`` leaves: ``params`` is a real Python list of tuples of ``Dyn``.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Optional, Tuple

import gast
import numpy as np

from numbax.ast_passes.tree_copy import copy_tree


@dataclasses.dataclass(frozen=True)
class AVal:
    """The abstract value of an array or scalar: its dtype, number of dimensions, and weakness.

    A Python number (``bool``, ``int``, ``float``, ``complex``) is *weak*, as in
    JAX and NumPy 2: in arithmetic with an array it takes the array's dtype.
    """

    dtype: np.dtype
    ndim: int
    weak: bool = False

    @staticmethod
    def of(value: Any) -> "AVal":
        """The abstract value of a concrete argument."""
        if isinstance(value, np.ndarray) or isinstance(value, np.generic):
            return AVal(value.dtype, value.ndim)
        return AVal(np.asarray(value).dtype, 0, weak=isinstance(value, (bool, int, float, complex)))


class Dyn:
    """A value known only at run time, held as the expression that computes it."""

    __slots__ = ("node", "aval")

    def __init__(self, node: gast.expr, aval: Optional[AVal] = None):
        self.node = node
        self.aval = aval

    def expr(self) -> gast.expr:
        """A fresh copy of the expression, safe to place in the tree."""
        return copy_tree(self.node)

    @property
    def name(self) -> Optional[str]:
        """The variable's name if the expression is a plain name."""
        return self.node.id if isinstance(self.node, gast.Name) else None

    def __repr__(self) -> str:
        import ast

        return f"Dyn({ast.unparse(gast.gast_to_ast(self.node))})"

    def __bool__(self):
        raise NeedStatic("the truth value of a run-time value")


class MaybeBound(Dyn):
    """A run-time variable assigned on only some of the paths that reach here (``if c: a = ...``): ``flag`` names
    the run-time bool that says whether this path assigned it, which a read checks first (Python's
    UnboundLocalError; compiled code would read a zeroed value)."""

    __slots__ = ("flag",)

    def __init__(self, value: Dyn, flag: str):
        super().__init__(value.node, value.aval)
        self.flag = flag


class Rows(Dyn):
    """A run-time array whose number of rows is known when compiling (``random.split(key, 3)``): starred
    unpacking (``key, *subkeys = ...``) takes its rows one by one."""

    __slots__ = ("rows",)

    def __init__(self, node: gast.expr, aval: Optional[AVal], rows: int):
        super().__init__(node, aval)
        self.rows = rows


class Items(Dyn):
    """A run-time tuple whose items' abstract values are known (``np.linalg.eigh(a)``'s ``(w, v)``): unpacked
    (``w, v = ...``) or indexed by a number, each item keeps its own."""

    __slots__ = ("items",)

    def __init__(self, node: gast.expr, items: Tuple[AVal, ...]):
        super().__init__(node)
        self.items = items

    def item(self, index: Any) -> Optional[AVal]:
        """The abstract value of ``self[index]`` for a compile-time ``index``; None for another index."""
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool) and \
                -len(self.items) <= index < len(self.items):
            return self.items[index]
        return None


class Method(Dyn):
    """``x.attr`` of a run-time ``x``, held with ``x``'s abstract value (``receiver``): called, its result's
    abstract value is inferred from it (``dtypes.method_call``)."""

    __slots__ = ("receiver",)

    def __init__(self, node: gast.expr, receiver: Optional[AVal]):
        super().__init__(node)
        self.receiver = receiver

    def __iter__(self):
        raise NeedStatic("iteration over a run-time value")

    def __index__(self):
        raise NeedStatic("a run-time value used as a container index")

    __hash__ = None


class RunTimeList:
    """A list whose length is known only at run time (``[f(x) for x in xs]`` over a run-time array, ``append``
    in a loop of run-time length), held as ``items``: the array of its items, one per row, never empty
    (``specialize.run_time_lists``)."""

    __slots__ = ("items",)

    def __init__(self, items: Dyn):
        self.items = items

    def __bool__(self):
        raise NeedStatic("the truth value of a list made at run time")

    def __iter__(self):
        raise NeedStatic("unpacking a list made at run time")


class NeedStatic(Exception):
    """Raised when compile-time evaluation meets a run-time value where it needs a known one.

    A loop over a static ``range`` catches it and unrolls instead; elsewhere it
    becomes a ``NumbaxSpecializationError`` at the user's line.
    """


@dataclasses.dataclass
class LocalFunction:
    """A ``def`` or ``lambda`` inside the compiled function: a closure over its environment."""

    node: gast.FunctionDef
    env: Dict[str, Any]
    name: str
    defaults: list = dataclasses.field(default_factory=list)
    namespace: Any = None  # the defining function's free names, for calls made from another function
    # the specializer of the function that defined it: its run-time values are that function's variables,
    # which a call from another function receives as parameters (``Specializer.import_value``)
    owner: Any = None
    kw_defaults: Dict[str, Any] = dataclasses.field(default_factory=dict)


def defining_scope(owner: Any, name: str) -> Any:
    """The specializer whose variable ``name`` is, read by a function ``owner`` defined: ``owner``'s own, or
    else one it closes over in turn (a local function's environment chains its maker's variables first)."""
    while owner is not None and name not in owner.env:
        owner = owner.closure_owner
    return owner


@dataclasses.dataclass
class Imported:
    """An argument of a helper's call that is another function's run-time value (what a local function closes
    over): the calling code imports it (``Specializer.import_value``) before passing it."""

    leaf: Dyn
    owner: Any


@dataclasses.dataclass
class Partial:
    """``functools.partial(f, ...)`` made inside the compiled function: ``f`` may be a local function."""

    func: Any
    args: tuple
    keywords: Dict[str, Any]
    owner: Any = None  # the specializer whose variables its run-time arguments are


class Poison:
    """A name whose compile-time value differs between the branches that reach a join."""

    def __init__(self, name: str, why: str):
        self.name = name
        self.why = why


def is_static_scalar(value: Any) -> bool:
    """Numbers and booleans known at compile time (they can become literals)."""
    return isinstance(value, (bool, int, float, complex, np.bool_, np.number)) and not isinstance(value, Dyn)


def contains_dyn(value: Any) -> bool:
    """Whether a (possibly nested) container holds a run-time value."""
    if isinstance(value, Dyn):
        return True
    if isinstance(value, LocalFunction):  # its environment is its maker's variables (itself among them), not
        return False                       # values it holds: a call imports what it reads (import_value)
    if isinstance(value, (list, tuple)):
        return any(contains_dyn(v) for v in value)
    if isinstance(value, dict):
        return any(contains_dyn(v) for v in value.values())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(contains_dyn(getattr(value, f.name)) for f in dataclasses.fields(value))
    return False
