"""Re-export of ``numbax.origin.Origin`` for branches still importing it from here; import ``numbax.origin``."""
from numbax.origin import Origin  # noqa: F401
