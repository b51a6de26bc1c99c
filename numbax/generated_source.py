"""generated_source: the code numbax generates for a function, under a transformation named by a string.

What ``numbax.source`` and ``numbax show`` print. It sits above ``numbax.api``
and the transformations that ``transforms.registry`` declares, which
themselves build on ``numbax.api.Jitted``.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from numbax.api import Jitted
from numbax.transforms.registry import TRANSFORMATIONS

TRANSFORMS = tuple(TRANSFORMATIONS)


def transformed(fun: Callable, transform: str = "jit", static_argnums=(), static_argnames=(), in_axes: Any = 0,
                out_axes: Any = 0, backend: str = "python", axis_name: Any = None) -> Jitted:
    """``fun`` under the transformation named ``transform`` (a ``Jitted`` for ``backend``, as
    ``transforms.registry`` makes it); ``in_axes``, ``out_axes`` and ``axis_name`` are ``vmap``'s and
    ``pmap``'s. A ``Jitted`` ``fun`` under ``jit`` is itself."""
    if transform not in TRANSFORMATIONS:
        raise ValueError(f"unknown transform {transform!r}; transforms: {', '.join(TRANSFORMS)}")
    if isinstance(fun, Jitted) and transform == "jit":
        return fun
    return TRANSFORMATIONS[transform](getattr(fun, "_numbax_fun", fun), static_argnums, static_argnames, in_axes,
                                      out_axes, backend, axis_name)


def source_for(fun: Callable, args, kwargs=None, *, transform: str = "jit", static_argnums=(),
               static_argnames=(), after_pass: Optional[str] = None, in_axes: Any = 0, out_axes: Any = 0,
               backend: str = "cpu", axis_name: Any = None) -> str:
    """The generated source of ``fun`` specialized to example ``args`` (after ``after_pass`` if given);
    ``in_axes``, ``out_axes`` and ``axis_name`` are ``vmap``'s and ``pmap``'s; ``backend`` ``"gpu"``: the GPU
    backend's kernels and driver. Nothing is compiled: the python backend's code, but for ``pmap`` the CPU's,
    whose shards run on threads where there are several devices (``transforms.pmap.thread_shards``)."""
    jitted = transformed(fun, transform, static_argnums, static_argnames, in_axes, out_axes,
                         "gpu" if backend == "gpu" else "cpu" if transform == "pmap" else "python", axis_name)
    return jitted.generate(tuple(args), dict(kwargs or {}), after_pass).source


def source(fun: Callable, *args, **kwargs) -> str:
    """The generated source of ``fun`` for a call with these arguments (nothing is compiled or run).

    ``fun`` may be a plain function (shown as ``jit`` would compile it) or a transformed one.
    """
    if isinstance(fun, Jitted):
        return fun.lower_source(*args, **kwargs)
    return source_for(fun, args, kwargs)
