"""``stop_gradient`` for generated code: the identity, which reverse mode treats as a constant; and the
identities that mark a ``custom_vjp`` or ``custom_jvp`` function's call for the transformations
(``numbax.transforms.custom``): ``custom_rule`` its output, ``custom_input`` the inputs of the code whose
derivative its rule replaces (a constant to the transformation that reads the rule), ``custom_input_seen``
those inputs once that transformation has run (no rule: a transformation of the result refuses them),
``custom_primal`` the inputs of a ``custom_jvp`` function's primal code (a constant to the transformation that
reads the rule, the identity after it)."""
from __future__ import annotations

from numbax.runtime.cached import overload

__all__ = ["stop_gradient", "custom_rule", "custom_input", "custom_input_seen", "custom_primal"]


def stop_gradient(x):
    """``x`` itself; gradients do not flow through it (``jax.lax.stop_gradient`` of one leaf)."""
    return x


@overload(stop_gradient)
def _stop_gradient(x):
    return lambda x: x


def custom_rule(key, out, *operands):
    """``out``: the output of the custom rule numbered ``key``, whose derivative the registry's entry of
    ``("custom", key)`` gives in terms of ``operands`` (``numbax.transforms.custom``)."""
    return out


def custom_input(x):
    """``x``: an input of a custom rule's own code, which the transformation reading the rule does not
    differentiate."""
    return x


def custom_input_seen(x):
    """``x``: a ``custom_input`` after its transformation; dropped from the final code."""
    return x


def custom_primal(x):
    """``x``: an input of the code that computes a ``custom_jvp`` function's output from its rule, which the
    transformation reading the rule does not differentiate and a transformation of its result does."""
    return x
