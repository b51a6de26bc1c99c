"""``stax.MaxPool``'s reduce-window maximum: both modes through the window's element JAX chooses.

``numbax.runtime.pooling`` computes the maximum (``max_pool``), reads a tangent at each window's chosen
element (``max_pool_jvp``) and adds a cotangent into it (``max_pool_vjp``), the element XLA's
select-and-scatter chooses: the first of a tie in row-major order. Each helper is linear in its first
operand and the other's transpose, and the choice is constant between ties, so a helper's derivative in
``x`` is zero, as JAX's is: that closes the rules under every order of differentiation. The window and
strides are tuples and ``same`` (``'SAME'`` padding) a bool, known when compiling.
"""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
from numbax import runtime as rt
from numbax.primitives import kinds, symbolic
from numbax.primitives.registry import def_linear, defjvp, defvjp

_KEEP = dict(aval=kinds.same_as(0))  # the first operand's kind and ndim (4: NHWC)


@defvjp(rt.max_pool, **_KEEP)
def max_pool(g, ans, x, window, strides, same):
    d[x] = rt.max_pool_vjp(g, x, window, strides, same)


@defjvp(rt.max_pool)
def max_pool_jvp(g, ans, x, window, strides, same):
    d[x] = rt.max_pool_jvp(g, x, window, strides, same)


@defvjp(rt.max_pool_jvp, **_KEEP)
def max_pool_tangent(g, ans, tangent, x, window, strides, same):
    d[tangent] = rt.max_pool_vjp(g, x, window, strides, same)
    d[x] = None


@defvjp(rt.max_pool_vjp, shape=symbolic.same_as(1), **_KEEP)  # x's shape
def max_pool_cotangent(g, ans, cotangent, x, window, strides, same):
    d[cotangent] = rt.max_pool_jvp(g, x, window, strides, same)
    d[x] = None


def_linear(rt.max_pool_jvp, "tangent, x, window, strides, same", shape_only=("x",))
def_linear(rt.max_pool_vjp, "cotangent, x, window, strides, same", shape_only=("x",))
