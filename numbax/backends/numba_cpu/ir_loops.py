"""Which blocks of a function's Numba IR run inside a loop: where the backend keeps work in the function
(an array operation lowered in place, a small helper inlined) because a call would be paid every iteration."""
from __future__ import annotations

from typing import Dict, FrozenSet

from numba.core import ir
from numba.core.analysis import compute_cfg_from_blocks


def loop_labels(blocks: Dict[int, ir.Block]) -> FrozenSet[int]:
    """The labels of ``blocks`` (a function's, by label) in the body of a loop."""
    return frozenset(label for loop in compute_cfg_from_blocks(blocks).loops().values() for label in loop.body)
