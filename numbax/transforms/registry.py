"""The transformations numbax has, each declared once: what it rewrites, how it composes, how one is made.

What ``numbax show --transform NAME``, ``numbax export --transform NAME`` and
``numbax.source`` read. Every transformation is a ``Jitted`` subclass that
runs the one pass list of ``ast_passes.pipeline`` with its own rewrite at the
``transform`` pass, and they compose by one mechanism: a transformation whose
function is another transformation calls it from a wrapper with the user's
parameters, and the inner one's code is generated at that call, for the
caller's placeholders (``transforms.nesting``), so that ``grad(vmap(f))``,
``jvp(grad(f))`` and ``vmap(jacrev(f))`` are each one generated function.
``jit`` of a transformation is the transformation with ``jit``'s static
arguments added (``rejit``).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict


@dataclasses.dataclass(frozen=True)
class Transformation:
    """One transformation, as ``TRANSFORMATIONS`` declares it.

    ``rewrites`` says what its ``transform`` pass writes (and which templates of the
    primitive registry it reads); ``composes`` how it takes another transformation as
    its function; ``static`` whether it takes
    ``static_argnums``; ``make(fun, static_argnums, static_argnames, in_axes,
    out_axes, backend)`` builds one.
    """

    name: str
    rewrites: str
    composes: str
    static: bool
    make: Callable[..., Any]

    def __call__(self, fun: Callable, static_argnums=(), static_argnames=(), in_axes: Any = 0, out_axes: Any = 0,
                 backend: str = "cpu", axis_name: Any = None):
        """``fun`` under this transformation, for ``backend``; ``axis_name`` names a mapped axis (``vmap``,
        ``pmap``) for the collectives in ``fun``."""
        if (static_argnums or static_argnames) and not self.static:
            raise ValueError(f"{self.name} takes no static arguments")
        if axis_name is None:
            return self.make(fun, static_argnums, static_argnames, in_axes, out_axes, backend)
        if self.name not in _MAPS:
            raise ValueError(f"{self.name} takes no axis_name (vmap and pmap do)")
        return self.make(fun, static_argnums, static_argnames, in_axes, out_axes, backend, axis_name=axis_name)


def _jit(fun, static_argnums, static_argnames, in_axes, out_axes, backend):
    from numbax.api import Jitted

    return Jitted(fun, static_argnums, static_argnames, backend=backend)


def _reverse(value: bool) -> Callable[..., Any]:
    def make(fun, static_argnums, static_argnames, in_axes, out_axes, backend):
        from numbax.transforms.grad import api

        build = api.value_and_grad if value else api.grad
        return build(fun, static_argnums=static_argnums, static_argnames=static_argnames, backend=backend)

    return make


def _jvp(fun, static_argnums, static_argnames, in_axes, out_axes, backend):
    from numbax.transforms.jvp.api import Pushforward

    return Pushforward(fun, backend=backend)


def _jacobian(name: str) -> Callable[..., Any]:
    def make(fun, static_argnums, static_argnames, in_axes, out_axes, backend):
        from numbax.transforms import jacobian

        return getattr(jacobian, name)(fun, backend=backend)

    return make


def _vmap(fun, static_argnums, static_argnames, in_axes, out_axes, backend, axis_name=None):
    from numbax.transforms.vmap.api import vmap

    return vmap(fun, in_axes, out_axes, axis_name, static_argnums=static_argnums, static_argnames=static_argnames,
                backend=backend)


def _pmap(fun, static_argnums, static_argnames, in_axes, out_axes, backend, axis_name=None):
    from numbax.transforms.pmap.api import pmap

    if static_argnames:
        raise ValueError("pmap takes static arguments by position (static_broadcasted_argnums)")
    return pmap(fun, axis_name, in_axes=in_axes, out_axes=out_axes, static_broadcasted_argnums=static_argnums,
                backend=backend)


_MAPS = ("vmap", "pmap")  # the transformations that name their axis


_NESTS = "a transformation as its function: generated at the call, for the caller's placeholders (nesting)"

TRANSFORMATIONS: Dict[str, Transformation] = {t.name: t for t in (
    Transformation("jit", "nothing: the pass list alone (specialized, inlined, fused, legalized)",
                   "of a transformation: that transformation with jit's static arguments added", True, _jit),
    Transformation("grad", "the adjoint: a forward sweep that saves what the backward sweep of cotangents reads "
                   "(transforms/grad), from the registry's VJP templates", _NESTS, True, _reverse(False)),
    Transformation("value_and_grad", "grad's adjoint, returning the primal output too", _NESTS, True,
                   _reverse(True)),
    Transformation("jvp", "tangent code interleaved with the primal (transforms/jvp), from the registry's JVP "
                   "templates", _NESTS, False, _jvp),
    Transformation("jacfwd", "a loop over the rows of an identity whose body is jvp's tangent code", _NESTS,
                   False, _jacobian("jacfwd")),
    Transformation("jacrev", "a loop over the rows of an identity whose body is grad's adjoint code", _NESTS,
                   False, _jacobian("jacrev")),
    Transformation("hessian", "jacfwd of jacrev: the tangent code of the adjoint code, in one loop", _NESTS,
                   False, _jacobian("hessian")),
    Transformation("vmap", "a wrapper whose loop over the mapped axis calls the function (transforms/vmap); "
                   "collectives cut the loop into stages (ast_passes/collectives)", _NESTS, True, _vmap),
    Transformation("pmap", "vmap's loop, one shard per device, checked against the devices (transforms/pmap); "
                   "each shard's collectives on the batch transport (primitives/transports)", _NESTS,
                   True, _pmap),
)}
