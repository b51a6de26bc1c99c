"""derivatives: reverse-mode rules of the samplers whose samples depend smoothly on their parameters.

Keys are integers and carry no derivative. ``truncated_normal``'s sample depends on ``lower`` and
``upper`` through the uniform draw between ``erf(lower / sqrt(2))`` and ``erf(upper / sqrt(2))``;
``gamma``'s on ``a`` by implicit reparameterization, ``dx/da = -(dP/da) / (dP/dx)`` for ``P(a, x)``
the regularized incomplete gamma function. The first rule redraws the uniform numbers from the key,
the second reads the sample; both follow JAX's derivatives (``jax.grad`` of the same sample) to
rounding, JAX's ``random_gamma_grad`` series and continued fraction repeated here in float64.
"""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
from __future__ import annotations

from numbax.runtime.random.continuous import gamma_kernel, truncated_normal_kernel
from numbax.primitives.registry import defvjp


@defvjp(truncated_normal_kernel)
def truncated_normal(g, ans, key, shape, dtype, lower, upper):
    cotangents = rt.random_truncated_normal_vjp(g, key, shape, dtype, lower, upper)
    d[lower] = rt.unbroadcast(cotangents[0], lower)
    d[upper] = rt.unbroadcast(cotangents[1], upper)


@defvjp(gamma_kernel)
def gamma(g, ans, key, shape, dtype, a):
    d[a] = rt.unbroadcast(rt.random_gamma_vjp(g, ans, shape, dtype, a), a)
