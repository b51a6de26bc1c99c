"""generated_source: the code numbax generates for a function, under a transformation named by a string.

What ``numbax.source`` and ``numbax show`` print. It sits above ``numbax.api``
and the transforms it names (``grad``, ``vmap``), which themselves build on
``numbax.api.Jitted``.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from numbax.api import Jitted

TRANSFORMS = ("jit", "grad", "value_and_grad", "jvp", "jacfwd", "jacrev", "hessian", "vmap")


def transformed(fun: Callable, transform: str = "jit", static_argnums=(), static_argnames=(), in_axes: Any = 0,
                out_axes: Any = 0, backend: str = "python") -> Jitted:
    """``fun`` under the transformation named ``transform`` (a ``Jitted`` for ``backend``); ``in_axes`` and
    ``out_axes`` are ``vmap``'s. A ``Jitted`` ``fun`` under ``jit`` is itself."""
    if transform not in TRANSFORMS:
        raise ValueError(f"unknown transform {transform!r}; transforms: {', '.join(TRANSFORMS)}")
    inner = getattr(fun, "_numbax_fun", fun)
    if isinstance(fun, Jitted) and transform == "jit":
        return fun
    if transform == "jit":
        return Jitted(inner, static_argnums, static_argnames, backend=backend)
    if transform == "jvp":
        from numbax.transforms.jvp.api import Pushforward

        if static_argnums or static_argnames:
            raise ValueError("jvp takes no static arguments")
        return Pushforward(inner, backend=backend)
    if transform in ("jacfwd", "jacrev", "hessian"):
        from numbax.transforms import jacobian

        if static_argnums or static_argnames:
            raise ValueError(f"{transform} takes no static arguments")
        return getattr(jacobian, transform)(inner, backend=backend)
    if transform == "vmap":
        from numbax.transforms.vmap.api import vmap

        return vmap(inner, in_axes, out_axes, static_argnums=static_argnums, static_argnames=static_argnames,
                    backend=backend)
    from numbax.transforms.grad import api as grad_api

    make = grad_api.grad if transform == "grad" else grad_api.value_and_grad
    return make(inner, static_argnums=static_argnums, static_argnames=static_argnames, backend=backend)


def source_for(fun: Callable, args, kwargs=None, *, transform: str = "jit", static_argnums=(),
               static_argnames=(), after_pass: Optional[str] = None, in_axes: Any = 0, out_axes: Any = 0) -> str:
    """The generated source of ``fun`` specialized to example ``args`` (after ``after_pass`` if given);
    ``in_axes`` and ``out_axes`` are ``vmap``'s."""
    jitted = transformed(fun, transform, static_argnums, static_argnames, in_axes, out_axes)
    return jitted.generate(tuple(args), dict(kwargs or {}), after_pass).source


def source(fun: Callable, *args, **kwargs) -> str:
    """The generated source of ``fun`` for a call with these arguments (nothing is compiled or run).

    ``fun`` may be a plain function (shown as ``jit`` would compile it) or a transformed one.
    """
    if isinstance(fun, Jitted):
        return fun.lower_source(*args, **kwargs)
    return source_for(fun, args, kwargs)
