"""Transformations of functions with ``*args`` or ``**kwargs``: made per count of arguments at the call.

JAX counts a call's positional arguments as passed: ``grad(f)(a, b)`` of ``def f(*xs)``
differentiates ``a``, and ``vmap(g, in_axes=(0, 0, None))(a, b, c)`` of ``def g(a, *rest)``
maps ``a`` and ``rest[0]``; keyword arguments are passed by name (``grad`` does not
differentiate them, ``vmap`` maps them over axis 0), as for named parameters. ``jit`` binds
``*args`` as a tuple and specializes on its length (``call_signature``); every other
transformation of such a function is an ``AtArity``, which makes, once per count of positional
arguments and set of keyword names, the same transformation of a function of named parameters
that calls the function (``wrapper.fixed_arity``), and calls that: each transformation then
reads named parameters, as it always has. ``jvp``, ``vjp`` and ``linearize``, which see their
primals, make that function at once (``at_arity``).
"""
from __future__ import annotations

import inspect
import types
from typing import Any, Callable, Dict, Optional, Tuple

from numbax.api import Jitted
from numbax.ast_passes import wrapper
from numbax.ast_passes.parse import function_of


def user_function(fun: Any) -> Any:
    """The function under layers of numbax transformations (a function, a ``functools.partial``, ...)."""
    while isinstance(fun, Jitted):
        fun = fun.fun
    return fun


def variadic(fun: Any) -> bool:
    """Whether the Python function under ``fun``'s transformations has ``*args`` or ``**kwargs`` parameters
    (a builtin is left to ``jit``'s refusal of functions without source)."""
    try:
        parameters = inspect.signature(user_function(fun)).parameters.values()
        python = isinstance(inspect.unwrap(function_of(user_function(fun))), types.FunctionType)
    except (TypeError, ValueError):
        return False
    return python and any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters)


def at_arity(fun: Any, count: int, keywords: Tuple[str, ...] = ()) -> Any:
    """``fun``, or where it takes ``*args`` or ``**kwargs`` a function of named parameters that calls it with
    ``count`` positional arguments and these keywords (``wrapper.fixed_arity``)."""
    if not variadic(fun):
        return fun
    return wrapper.fixed_arity(fun, inspect.unwrap(function_of(user_function(fun))), count, tuple(sorted(keywords)))


class AtArity(Jitted):
    """``cls(fun, *options, **keywords)`` for a ``fun`` with ``*args`` or ``**kwargs``: at each call, that
    transformation of ``at_arity(fun, ...)`` for the call's count of positional arguments and keyword names
    (made once for each), with the ``jit`` static arguments of ``rejits`` added."""

    def __init__(self, cls: type, options: tuple, keywords: Dict[str, Any], fun: Any, rejits: tuple = ()):
        self._cls, self._options, self._keywords, self._target, self._rejits = cls, options, keywords, fun, rejits
        self._made: Dict[Tuple[int, Tuple[str, ...]], Jitted] = {}
        self._latest: Optional[Jitted] = None
        super().__init__(inspect.unwrap(user_function(fun)))  # a custom_jvp function: the function it wraps

    def at(self, args: tuple, kwargs: Dict[str, Any]) -> Jitted:
        """The transformation that runs a call with these arguments (Python's ``TypeError`` for a call that
        the function cannot take)."""
        key = (len(args), tuple(sorted(kwargs)))
        made = self._made.get(key)
        if made is None:
            self._signature.bind(args, kwargs)
            made = self._cls(at_arity(self._target, *key), *self._options, **self._keywords)
            for static_argnums, static_argnames, backend in self._rejits:
                made = made.rejit(static_argnums, static_argnames, backend)
            self._made[key] = made
        self._latest = made
        return made

    def __reduce__(self):
        rebuild, (cls, state) = super().__reduce__()
        return rebuild, (cls, {**state, "_made": {}, "_latest": None})  # made again by the calls that need them

    def __call__(self, *args, **kwargs):
        """The call goes straight to the transformation made for its count (Numba's C dispatch could find no
        signature of a function with ``*args`` here: its typing of each argument would be wasted)."""
        made = self._made.get((len(args), tuple(sorted(kwargs)) if kwargs else ()))
        if made is None:
            made = self.at(args, kwargs)
        self._latest = made
        return made(*args, **kwargs)

    def _call(self, args: tuple, kwargs: Dict[str, Any]):
        return self.at(args, kwargs)(*args, **kwargs)

    def _numbax_specialize(self, spec, node, args, kwargs):
        """Called inside another compiled function: the transformation for this call, specialized there."""
        try:
            made = self.at(tuple(args), kwargs)
        except TypeError as exc:
            spec.fail(node, f"{exc} (calling {self!r})")
        return made._numbax_specialize(spec, node, args, kwargs)

    def generate(self, args: tuple, kwargs: Dict[str, Any], after_pass: Optional[str] = None,
                 general: bool = False):
        """The middle end of the transformation for this call (``Jitted.generate``)."""
        return self.at(args, kwargs).generate(args, kwargs, after_pass, general)

    def export_parameters(self, args: tuple):
        """``numbax.export``'s parameters of the transformation for this call (``Jitted.export_parameters``)."""
        return self.at(args, {}).export_parameters(args)

    def export_output(self, out: Any, returns) -> Any:
        """The user's result, as the transformation of the latest call packages it."""
        return self._latest.export_output(out, returns)

    @property
    def source(self) -> Optional[str]:
        """The generated source of the most recent call's specialization (None before the first call)."""
        return self._latest.source if self._latest is not None else None

    def rejit(self, static_argnums=(), static_argnames=(), backend: str = "cpu") -> "AtArity":
        """``jit`` of this transformation: ``jit`` of the one made for each call."""
        return AtArity(self._cls, self._options, self._keywords, self._target,
                       self._rejits + ((static_argnums, static_argnames, backend),))

    def _numbax_fingerprint(self) -> tuple:
        """What code generated for a call of this transformation depends on (the disk cache of a caller's)."""
        return ("at_arity", self._cls.__module__, self._cls.__qualname__, self._target, self._options,
                self._keywords, self._rejits)

    def __repr__(self) -> str:
        if self._latest is not None:
            return repr(self._latest)
        label = getattr(self._cls, "label", self._cls.__name__)
        return f"<numbax.{label} of {getattr(function_of(self.fun), '__qualname__', self.fun)}>"


def _per_arity(cls: type, fun: Any, options: tuple, keywords: Dict[str, Any]) -> Optional[AtArity]:
    """``Jitted.per_arity``: an ``AtArity`` for a transformation (not itself one) of a function with ``*args`` or
    ``**kwargs``, None otherwise."""
    if not issubclass(cls, AtArity) and variadic(fun):
        return AtArity(cls, options, keywords, fun)
    return None


Jitted.per_arity = _per_arity
