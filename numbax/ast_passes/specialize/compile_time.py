"""Calls of numbax's own Python-level functions (``tree_util``, ``grad``, ``jit``) run at compile time.

``tree_map(f, params)`` inside a compiled function maps over a pytree whose
structure is known while specializing, so the map itself runs now: the
container is flattened in Python and ``f`` is specialized for each leaf, its
calls landing in the generated code in leaf order. ``numbax.grad(loss)`` written
inside a compiled function builds the transformation now; calling it then
specializes the gradient in place (``numbax.transforms.grad.nested``). Functions
marked ``specialized_from_source`` are compiled instead, from their source.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List

from numbax import tree_util
from numbax.ast_passes.specialize.values import LocalFunction, Partial, contains_dyn
from numbax.errors import NumbaxError


def run_at_compile_time(fn: Callable, spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` now, with function arguments specialized at each call; errors at ``node``."""

    def as_python(value: Any) -> Any:
        if isinstance(value, LocalFunction) or (callable(value) and not isinstance(value, type)):
            return lambda *a, **k: spec.call_value(node, value, list(a), dict(k))
        return value

    try:
        return fn(*[as_python(a) for a in args], **{k: as_python(v) for k, v in kwargs.items()})
    except NumbaxError:
        raise
    except Exception as exc:  # the user's own error (mismatched structures), at their line
        spec.fail(node, f"{type(exc).__name__} in {fn.__name__} at compile time: {exc}")


class LiftedTransformation:
    """``numbax.grad(lambda p: loss(p, batch))`` inside a compiled function: at each call, the transformation
    of the local function lifted then (``lifting``: what it closes over read at the call, as Python reads a
    closure), called with the run-time values it closes over."""

    def __init__(self, constructor: Callable, fun: Any, args: List[Any], kwargs: Dict[str, Any]):
        self.constructor = constructor
        self.fun = fun
        self.args = args
        self.kwargs = kwargs

    def made(self, spec, node):
        """``(the transformation, Lifted)`` for a call now."""
        first, lifted = lifted_function(spec, node, self.fun, self.constructor.__name__)
        return spec.fold(node, self.constructor, first, *self.args, **self.kwargs), lifted

    def _numbax_specialize(self, spec, node, args, kwargs):
        transformed, lifted = self.made(spec, node)
        return spec.call_value(node, transformed, list(args), {**kwargs, **lifted.captured_values(spec)})


_LOCAL = (LocalFunction, Partial, LiftedTransformation)


def lifted_function(spec, node, fun: Any, label: str):
    """``(function, Lifted or None)``: a function given to ``numbax.{label}`` inside compiled code as one the
    transformation can read; a local function (or a transformation of one) lifted, another as it is."""
    from numbax.ast_passes.specialize import lifting

    if isinstance(fun, LocalFunction):
        lifted = lifting.lift(spec, node, fun, label)
        return lifted.function, lifted
    if isinstance(fun, Partial):
        lifted = lifting.lift_partial(spec, node, fun, label)
        return lifted.function, lifted
    if isinstance(fun, LiftedTransformation):
        return fun.made(spec, node)
    return fun, None


def construct_transform(constructor, spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    """``numbax.grad(loss)`` written inside a compiled function: built now, a compile-time value (of a local
    function, built at each call of it: ``LiftedTransformation``)."""
    label = constructor.__name__
    if any(isinstance(a, _LOCAL) for a in list(args)[1:] + list(kwargs.values())):
        spec.fail(node, f"numbax.{label} of a function defined inside a compiled function, passed other than as "
                  "its first argument", hint=f"pass the function first: numbax.{label}(f, ...).")
    local = bool(args) and isinstance(args[0], _LOCAL)
    if any(contains_dyn(a) for a in list(args)[local:] + list(kwargs.values())):
        spec.fail(node, f"numbax.{label}'s arguments must be known at compile time")
    if local:
        return LiftedTransformation(constructor, args[0], list(args[1:]), kwargs)
    return spec.fold(node, constructor, *args, **kwargs)


def bind_call(spec, node, function: Callable, label: str, args: List[Any], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """Parameter -> argument for a call of ``function`` (its signature, defaults applied), failing at ``node``
    as Python would fail the call."""
    import inspect

    try:
        bound = inspect.signature(function).bind(*args, **kwargs)
    except TypeError as exc:
        spec.fail(node, f"{label}: {exc}")
    bound.apply_defaults()
    return dict(bound.arguments)


def built_at_compile_time(constructor: Callable) -> Callable:
    """Mark a transformation's constructor (``jit``, ``grad``) so calls of it inside compiled code run now."""
    constructor._numbax_specialize = lambda spec, node, args, kwargs: construct_transform(
        constructor, spec, node, args, kwargs)
    return constructor


def specialized_from_source(function: Callable) -> Callable:
    """Mark a function of numbax's own, written in the NumPy numbax compiles, so that a call of it inside
    compiled code specializes its source as a user function's would (numbax otherwise calls its own
    functions as opaque objects). Outside compiled code it runs as the Python it is: one implementation
    for both (``numbax.random``'s gathers by random indices)."""
    function._numbax_specialize = lambda spec, node, args, kwargs: spec.call_python_function(
        node, function, args, kwargs)
    return function


for _fn in tree_util.COMPILE_TIME_FUNCTIONS:
    _fn._numbax_specialize = functools.partial(run_at_compile_time, _fn)
