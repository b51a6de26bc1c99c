"""Forward mode: ``jvp`` and ``linearize``."""
from numbax.transforms.jvp.api import jvp, linearize  # noqa: F401
