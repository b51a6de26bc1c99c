"""Custom derivative rules: ``custom_jvp`` and ``custom_vjp``."""
from numbax.transforms.custom.api import custom_jvp, custom_vjp  # noqa: F401
