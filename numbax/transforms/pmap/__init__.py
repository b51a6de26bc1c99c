"""``pmap``: a function mapped over the devices of an axis (``numbax.transforms.pmap.api``)."""
from numbax.transforms.pmap.api import pmap  # noqa: F401
