"""What the cotangents of array constructors need: the weights ``np.linspace`` gives its endpoints."""
from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

__all__ = ["linspace_weights"]


@register_jitable
def linspace_weights(num, endpoint=True):
    """``w`` with ``np.linspace(start, stop, num, endpoint) == start * (1 - w) + stop * w``: ``i / (num - 1)``
    with the endpoint, ``i / num`` without (zeros for a single point)."""
    steps = num - 1 if endpoint else num
    out = np.zeros(num)
    if steps > 0:
        for i in range(num):
            out[i] = i / steps
    return out
