"""``lax.cummax`` and ``lax.cummin``: both modes through the weights of JAX's associative scan.

``numbax.runtime.running_extrema`` applies those weights to a tangent (``extremum_scan_jvp``) and their
transpose to a cotangent (``extremum_scan_vjp``). Each helper is linear in its first operand, and the
weights are constant between ties, so a helper's derivative in ``x`` is zero, as JAX's is: that closes
the rules under every order of differentiation.
"""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
from numbax import runtime as rt
from numbax.primitives import kinds
from numbax.primitives.registry import def_linear, defjvp, defvjp

_KEEP = dict(aval=kinds.same_as(0))  # the first operand's kind and ndim


@defvjp(rt.cummax, **_KEEP)
def cummax(g, ans, x, axis=0, reverse=False):
    d[x] = rt.extremum_scan_vjp(g, x, axis, reverse, True)


@defjvp(rt.cummax)
def cummax_jvp(g, ans, x, axis=0, reverse=False):
    d[x] = rt.extremum_scan_jvp(g, x, axis, reverse, True)


@defvjp(rt.cummin, **_KEEP)
def cummin(g, ans, x, axis=0, reverse=False):
    d[x] = rt.extremum_scan_vjp(g, x, axis, reverse, False)


@defjvp(rt.cummin)
def cummin_jvp(g, ans, x, axis=0, reverse=False):
    d[x] = rt.extremum_scan_jvp(g, x, axis, reverse, False)


@defvjp(rt.extremum_scan_jvp, **_KEEP)
def extremum_scan_jvp(g, ans, tangent, x, axis, reverse, largest):
    d[tangent] = rt.extremum_scan_vjp(g, x, axis, reverse, largest)
    d[x] = None


@defvjp(rt.extremum_scan_vjp, **_KEEP)
def extremum_scan_vjp(g, ans, cotangent, x, axis, reverse, largest):
    d[cotangent] = rt.extremum_scan_jvp(g, x, axis, reverse, largest)
    d[x] = None


def_linear(rt.extremum_scan_jvp, "tangent, x, axis, reverse, largest", shape_only=("x",))
def_linear(rt.extremum_scan_vjp, "cotangent, x, axis, reverse, largest", shape_only=("x",))
