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
from numbax.ast_passes.specialize.values import LocalFunction, contains_dyn
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


def construct_transform(constructor, spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    """``numbax.grad(loss)`` written inside a compiled function: built now, a compile-time value."""
    if any(isinstance(a, LocalFunction) for a in list(args) + list(kwargs.values())):
        spec.fail(node, f"numbax.{constructor.__name__} of a function defined inside a compiled function",
                  hint="define the function at module level (numbax reads its source), and call "
                  f"numbax.{constructor.__name__} of it here.")
    if any(contains_dyn(a) for a in list(args) + list(kwargs.values())):
        spec.fail(node, f"numbax.{constructor.__name__}'s arguments must be known at compile time")
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
