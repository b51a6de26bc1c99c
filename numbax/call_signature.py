"""From a call's arguments to a specialization key, the flat leaves, and placeholders to compile with."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Dict, List, Sequence, Tuple

import numpy as np

from numbax import tree_util
from numbax.ast_passes.specialize.values import AVal, Dyn
from numbax.errors import NumbaxDtypeError, NumbaxStaticArgumentError, NumbaxTypingError

_LEAF_TYPES = (np.ndarray, float, int, bool, complex, np.generic)


def normalize_static(fun: Callable, static_argnums, static_argnames) -> Tuple[Tuple[int, ...], Tuple[str, ...]]:
    """Static argument positions and names, each completed from the other as JAX does."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    params = list(inspect.signature(fun).parameters)
    nums = {i if i >= 0 else len(params) + i for i in static_argnums}
    names = set(static_argnames) | _closed_over_keywords(fun)
    for i in list(nums):
        if i < len(params):
            names.add(params[i])
    for name in list(names):
        if name in params:
            nums.add(params.index(name))
    return tuple(sorted(nums)), tuple(sorted(names))


def _closed_over_keywords(fun: Callable) -> set:
    """The keywords a ``functools.partial`` binds to hashable values (``mode="a"``, ``n=3``, a function): part
    of the callable in JAX, so compile-time values here, as if static (a branch they rule out is not
    compiled; a call that passes one anew compiles for its value). Keywords bound to arrays stay arguments."""
    names = set()
    while isinstance(fun, functools.partial):
        for name, value in fun.keywords.items():
            try:
                hash(value)
            except TypeError:
                continue
            names.add(name)
        fun = fun.func
    return names


class CallSignature:
    """Splits calls of one function into static values and dynamic leaves."""

    def __init__(self, fun: Callable, static_argnums: Sequence[int]):
        self.signature = inspect.signature(fun)
        self.params = list(self.signature.parameters)
        self.static = frozenset(static_argnums)
        self.nparams = len(self.params)
        self.variadic = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in self.signature.parameters.values())

    def bind(self, args: tuple, kwargs: Dict[str, Any]) -> List[Any]:
        """Positional values of every parameter, defaults filled in (``*args`` a tuple, ``**kwargs`` a dict)."""
        if not kwargs and len(args) == self.nparams and not self.variadic:
            return list(args)
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{exc}") from None
        bound.apply_defaults()
        return [bound.arguments[p] for p in self.params]

    def foldable(self) -> bool:
        """Whether every parameter may be passed by position or by name and none is static."""
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        return not self.static and all(p.kind is kind for p in self.signature.parameters.values())

    def defaults(self, unset: Any) -> tuple:
        """Each parameter's default value, ``unset`` for those without one."""
        return tuple(unset if p.default is p.empty else p.default for p in self.signature.parameters.values())

    def raise_missing(self, folded: tuple, unset: Any) -> None:
        """Python's ``TypeError`` for a call whose folded arguments hold ``unset`` for a required one."""
        self.bind((), {p: v for p, v in zip(self.params, folded) if v is not unset})
        raise TypeError(f"{self.signature} got too few arguments")

    def split(self, values: List[Any]):
        """``(static values, dynamic values)`` in parameter order."""
        if not self.static:
            return (), values
        statics = tuple([v for i, v in enumerate(values) if i in self.static])
        dynamic = [v for i, v in enumerate(values) if i not in self.static]
        return statics, dynamic

    def check_hashable(self, statics: tuple) -> None:
        """JAX's error for static arguments that cannot be cache keys."""
        for value in statics:
            try:
                hash(value)
            except TypeError as exc:
                raise NumbaxStaticArgumentError(
                    "Non-hashable static arguments are not supported. An error occurred while trying to hash "
                    f"an object of type {type(value)}, {value}. The error was:\nTypeError: {exc}",
                    hint="pass a tuple instead of a list or an array, or make the argument dynamic.") from None

    def placeholders(self, values: List[Any], leaves: List[Any], treedef) -> Dict[str, Any]:
        """Parameter -> static value, or the argument's pytree with ``Dyn`` leaves carrying abstract values."""
        for i, (param, value) in enumerate(zip(self.params, values)):
            if i in self.static:
                continue
            for leaf in tree_util.tree_leaves(value):
                check_dtype(param, leaf)
                if not isinstance(leaf, _LEAF_TYPES):  # JAX's TypeError: not a valid JAX type
                    raise NumbaxTypingError(
                        f"argument `{param}` holds a {type(leaf).__name__}, which compiled code cannot take",
                        hint="pass arrays, numbers or containers of them; mark other arguments static with "
                        "static_argnums or static_argnames.")
        dyn_trees = tree_util.tree_unflatten(treedef, [Dyn(None, AVal.of(l)) for l in leaves])
        it = iter(dyn_trees)
        return {p: (values[i] if i in self.static else next(it)) for i, p in enumerate(self.params)}


# dtype kinds Numba compiles: bool, integers, floats (not float16) and complex numbers
_COMPILED_KINDS = frozenset("biufc")


def check_dtype(param: str, leaf: Any) -> None:
    """Refuse an argument whose dtype compiled code cannot represent (float16, object, strings, dates)."""
    dtype = getattr(leaf, "dtype", None)
    if dtype is None or not isinstance(leaf, (np.ndarray, np.generic)):
        return
    if dtype.kind not in _COMPILED_KINDS or dtype == np.float16:
        hint = ("convert it first: x.astype(np.float32)" if dtype == np.float16 else
                "pass a numeric array (x.astype(np.float64)); object and string arrays have no compiled form")
        raise NumbaxDtypeError(f"argument `{param}` has dtype {dtype}, which compiled code cannot represent",
                               hint=hint)


def leaf_key(leaves: List[Any]) -> tuple:
    """The abstract part of the cache key: each leaf's type, dtype and ndim."""
    return tuple([(type(l), getattr(l, "dtype", None), getattr(l, "ndim", 0)) for l in leaves])
