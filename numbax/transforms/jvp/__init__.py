"""Forward mode: ``jvp``."""
from numbax.transforms.jvp.api import jvp  # noqa: F401
