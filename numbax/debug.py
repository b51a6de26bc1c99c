"""``numbax.debug``: ``print`` and ``callback`` that work inside ``jit`` and ``grad`` as JAX's do.

Called directly they act at once. Inside a compiled function each call stays a
statement of the generated code (``rt.debug_print(...)``) that leaves Numba's
compiled code through object mode, formats with Python's ``str.format`` and
returns; under ``grad`` it runs during the forward sweep and carries no
derivative.

    >>> import numpy as np
    >>> from numbax import debug
    >>> debug.print("x = {}, total = {total:.1f}", np.arange(2), total=1.0)
    x = [0 1], total = 1.0
"""
from __future__ import annotations

from typing import Any, Callable

from numbax.ast_passes.specialize.values import Dyn, LocalFunction
from numbax.runtime.debug import debug_callback, debug_print

__all__ = ["print", "callback"]


def _lower_print(spec, node, args, kwargs):
    if not args or not isinstance(args[0], str):
        spec.fail(node, "numbax.debug.print needs a format string known at compile time as its first argument",
                  hint='write the string in the call: debug.print("x = {}", x).')
    fmt, rest = args[0], tuple(args[1:])
    return spec.call_value(node, debug_print, [fmt, rest, tuple(kwargs), tuple(kwargs.values())], {})


def _lower_callback(spec, node, args, kwargs):
    if args and isinstance(args[0], LocalFunction):
        spec.fail(node, f"numbax.debug.callback of the local function {args[0].name!r}: compiled code calls it by "
                  "its import path, and a local function or lambda has none",
                  hint="define the callback at module level.")
    if not args or isinstance(args[0], Dyn) or not callable(args[0]):
        spec.fail(node, "numbax.debug.callback needs a function as its first argument")
    function = args[0]
    module, qualname = getattr(function, "__module__", None), getattr(function, "__qualname__", "")
    if not module or "<" in qualname:
        spec.fail(node, f"numbax.debug.callback of {qualname or function!r}: compiled code calls it by its import "
                  "path, and a local function or lambda has none", hint="define the callback at module level.")
    return spec.call_value(node, debug_callback, [module, qualname, tuple(args[1:]), tuple(kwargs), tuple(kwargs.values())],
                    {})


def print(fmt: str, *args: Any, **kwargs: Any) -> None:  # noqa: A001 - JAX's name
    """Print ``fmt.format(*args, **kwargs)``, also from compiled code (``jax.debug.print``)."""
    debug_print(fmt, args, tuple(kwargs), tuple(kwargs.values()))


def callback(function: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Call ``function(*args, **kwargs)`` for its effect, also from compiled code (``jax.debug.callback``).

    Inside compiled code ``function`` must be defined at module level: it is called by its import path.
    """
    function(*args, **kwargs)


print._numbax_specialize = _lower_print
callback._numbax_specialize = _lower_callback
