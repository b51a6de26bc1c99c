"""``batch_size`` for ``vmap``: the size that every mapped axis shares, checked where generated code runs."""
from __future__ import annotations

from numba.extending import register_jitable

__all__ = ["batch_size"]

INCONSISTENT = "vmap got inconsistent sizes for array axes to be mapped"
EMPTY = "numbax.vmap needs at least one example: the first one's outputs give the output shapes"


@register_jitable
def batch_size(*sizes):
    """The common value of ``sizes`` (the lengths of the mapped axes); ``ValueError`` if they differ or are 0."""
    for size in sizes:
        if size != sizes[0]:
            raise ValueError(INCONSISTENT)
    if sizes[0] == 0:
        raise ValueError(EMPTY)
    return sizes[0]
