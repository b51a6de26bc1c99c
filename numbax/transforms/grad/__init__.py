"""Reverse mode: ``grad``, ``value_and_grad``, ``vjp`` and the rule table they read."""
from numbax.transforms.grad.api import grad, value_and_grad, vjp  # noqa: F401
