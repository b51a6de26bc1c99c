"""``vmap``: batching as a loop over examples, emitted while specializing."""
from numbax.transforms.vmap.api import vmap  # noqa: F401
