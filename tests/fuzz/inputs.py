"""Arguments for generated programs: shapes, dtypes and values chosen so that ties happen.

Values are multiples of 1/4 in [-2, 2]: exactly representable in float32, so a float32 program and its
float64 counterpart (which central differences run) compare and branch alike; a small set, so that
repeated values make ``max``, ``abs`` and ``maximum`` meet their ties and kinks.
"""
from __future__ import annotations

from typing import Tuple

import numpy as np
from hypothesis import strategies as st

VALUES = tuple(k / 4 for k in range(-8, 9))
INTS = tuple(range(-2, 4))
DTYPES = ("float64", "float64", "float64", "float32", "int64", "bool", "complex128")
X_SHAPES = ((4,), (4,), (3, 4))
Y_SHAPES = ((4,), (3, 4), (1, 4), (3, 1), ())


@st.composite
def arrays(draw, dtype: str, shape: Tuple[int, ...]) -> np.ndarray:
    """An array of ``dtype`` and ``shape`` with values from the small, tie-prone sets above."""
    size = int(np.prod(shape))
    if dtype == "bool":
        flat = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    elif dtype == "int64":
        flat = draw(st.lists(st.sampled_from(INTS), min_size=size, max_size=size))
    elif dtype == "complex128":
        parts = draw(st.lists(st.tuples(st.sampled_from(VALUES), st.sampled_from(VALUES)),
                              min_size=size, max_size=size))
        flat = [complex(re, im) for re, im in parts]
    else:
        flat = draw(st.lists(st.sampled_from(VALUES), min_size=size, max_size=size))
    return np.array(flat, dtype=dtype).reshape(shape)


@st.composite
def scalars(draw, kind: str):
    """A Python float or int argument (``s``)."""
    return draw(st.sampled_from(VALUES)) if kind == "float" else draw(st.sampled_from(INTS))
