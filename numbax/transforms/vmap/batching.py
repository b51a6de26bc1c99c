"""``vmap(f, ...)`` as a compile-time value: what a call of it inside compiled code lowers to.

``numbax.vmap`` written inside a compiled function builds a ``Batching`` while
specializing (its function may be a local one or a lambda); a ``numbax.vmap``
object made outside holds one. Calling it inside compiled code applies JAX's
rules to the call's arguments (``in_axes`` for the positional ones, axis 0 for
keyword arguments) and emits the batched loop (``numbax.transforms.vmap.loop``;
``threads`` on the GPU backend).
"""
from __future__ import annotations

import functools

from typing import Any, Callable, Dict, List, Optional

from numbax.ast_passes.specialize.compile_time import bind_call
from numbax.ast_passes.specialize.values import LocalFunction, Partial, contains_dyn
from numbax.transforms.vmap import axes, loop, threads


class Batching:
    """A function and how ``vmap`` maps it: ``in_axes``, ``out_axes``, ``axis_size`` (checked as JAX does)."""

    def __init__(self, fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Optional[str] = None,
                 axis_size: Optional[int] = None):
        if not callable(fun) and not isinstance(fun, (LocalFunction, Partial)) \
                and not hasattr(fun, "_numbax_specialize"):  # vmap(vmap(f)) inside compiled code
            raise TypeError(f"vmap expects a callable, got {fun!r}")
        if axis_size is not None and type(axis_size) is not int:
            raise TypeError(f"vmap axis_size must be an int or None, got {axis_size!r}")
        self.fun = fun
        self.in_axes = axes.canonical_in_axes(in_axes)
        self.out_axes = axes.check_out_axes(out_axes)
        if axis_name is not None:
            try:
                hash(axis_name)
            except TypeError:
                raise TypeError(f"vmap axis_name must be hashable, got {axis_name!r}") from None
        self.axis_name = axis_name  # what collectives in ``fun`` name the mapped axis by
        self.axis_size = axis_size

    def _numbax_specialize(self, spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
        """A call inside compiled code: positional arguments by ``in_axes``, keyword ones along axis 0."""
        try:
            arg_axes = axes.positional_axes(self.in_axes, len(args))
        except ValueError as exc:
            loop.fail(spec, node, exc)
        return self.emit(spec, node, args, kwargs, arg_axes, dict.fromkeys(kwargs, 0))

    def emit(self, spec, node, args: List[Any], kwargs: Dict[str, Any], arg_axes, kwarg_axes) -> Any:
        """The batched loop for a call whose arguments' axes are given (prefixes of each argument): on the GPU
        backend one example per thread (``threads``), else the CPU's loop after the first example (all the
        examples in stages where ``fun`` calls collectives over ``axis_name``)."""
        if spec.builder.examples_per_thread and self.per_thread:
            return threads.emit(spec, node, self.fun, args, kwargs, arg_axes, kwarg_axes, self.out_axes,
                                self.axis_size, self.axis_name)
        return loop.emit(spec, node, self.fun, args, kwargs, arg_axes, kwarg_axes, self.out_axes, self.axis_size,
                         self.axis_name, self.devices, self.transport)

    # on the GPU backend, whether one thread runs each example (``InTurn``: the examples one after another)
    per_thread: bool = True
    devices: Optional[tuple] = None  # ``pmap``'s (count, passed), checked against the batch at run time
    transport: str = "batch"  # ``pmap``'s across processes: "mpi" (``pmap.mpi_shards``); threads: "threads"

    def _numbax_fingerprint(self) -> tuple:
        """What generated code depends on, for the disk cache of a function that calls this one."""
        return ("vmap", self.fun, self.in_axes, self.out_axes, self.axis_size, self.axis_name)


class BoundAxes:
    """The batched call a top-level ``vmap``'s generated wrapper makes, each parameter's axes decided."""

    def __init__(self, batching: Batching, arg_axes: tuple, kwarg_axes: Dict[str, Any]):
        self.batching, self.arg_axes, self.kwarg_axes = batching, arg_axes, kwarg_axes

    def _numbax_specialize(self, spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
        return self.batching.emit(spec, node, args, kwargs, self.arg_axes, self.kwarg_axes)


def construct(constructor: Callable, spec, node, args: List[Any], kwargs: Dict[str, Any],
              kind: type = Batching) -> Batching:
    """``numbax.vmap(f, ...)`` written inside a compiled function: a ``Batching`` (or ``kind``), built now."""
    bound = bind_call(spec, node, constructor, "numbax.vmap", args, kwargs)
    for name, value in bound.items():
        if name != "fun" and contains_dyn(value):
            spec.fail(node, f"numbax.vmap's {name} must be known at compile time")
    try:
        return kind(*(bound[k] for k in ("fun", "in_axes", "out_axes", "axis_name", "axis_size")))
    except TypeError as exc:
        spec.fail(node, str(exc))


class InTurn(Batching):
    """A mapping whose examples run one after another on every backend, as the CPU's loop runs them: the
    columns of a Jacobian, each array code that the GPU backend runs as kernels of its own."""

    per_thread = False


def in_turn(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Optional[str] = None,
            axis_size: Optional[int] = None) -> InTurn:
    """``vmap`` for numbax's own code compiled with the user's, its examples run in turn (``InTurn``)."""
    return InTurn(fun, in_axes, out_axes, axis_name, axis_size)


in_turn._numbax_specialize = functools.partial(construct, in_turn, kind=InTurn)  # inside compiled code
