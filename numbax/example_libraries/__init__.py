"""``numbax.example_libraries``: ``jax.example_libraries``' ``optimizers`` and ``stax``, written in the NumPy
numbax compiles, so that a JAX program using them runs with its imports swapped.

Their functions are plain NumPy and pytree code: called outside compiled code they run as NumPy; inside, numbax
specializes their source like the user's, so ``numbax.jit`` compiles an optimizer step or a network and
``numbax.grad`` differentiates through a network from the registry's rules.
"""
from numbax.example_libraries import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
