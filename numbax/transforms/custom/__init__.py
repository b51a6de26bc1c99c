"""Custom derivative rules: ``custom_jvp``, ``custom_vjp``, and ``checkpoint`` (``remat``) built on the latter."""
from numbax.transforms.custom.api import custom_jvp, custom_vjp  # noqa: F401
from numbax.transforms.custom.checkpoint import checkpoint, remat  # noqa: F401
