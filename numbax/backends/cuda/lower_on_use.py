"""The GPU's lowering, imported when a function is first compiled for the GPU: ``lower`` takes 60 ms to import,
which a program on the CPU never needs, and every transformation names it."""
from typing import Any, Dict, List, Tuple

import gast


def legalize(module: gast.Module, avals: Dict[str, Any], constants: Dict[str, Any]) -> Tuple[gast.Module, List[str]]:
    """``lower.legalize(module, avals, constants)``, ``lower`` imported on the first call."""
    from numbax.backends.cuda import lower

    return lower.legalize(module, avals, constants)
