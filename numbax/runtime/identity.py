"""``stop_gradient`` for generated code: the identity, which reverse mode treats as a constant."""
from __future__ import annotations

from numba.extending import overload

__all__ = ["stop_gradient"]


def stop_gradient(x):
    """``x`` itself; gradients do not flow through it (``jax.lax.stop_gradient`` of one leaf)."""
    return x


@overload(stop_gradient)
def _stop_gradient(x):
    return lambda x: x
