"""``rt.stack_buffer(leaf, length)`` (``vmap``'s and ``lax.scan``'s stacked outputs) in NumPy's dtype.

Numba computes int8, uint8, int16 and int32 scalars in int64 (and uint64), so a buffer made from a
scalar leaf's Numba type would stack them in that wider dtype; where the leaf's abstract value is a narrow
dtype, the buffer is ``np.empty(length, dtype)`` of it instead.
"""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from numbax.ast_passes.specialize import dtypes
from numbax.ast_passes.specialize.values import AVal, Dyn
from numbax.runtime.scan import stack_buffer


def _stack_buffer(spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    leaf = args[0] if args else None
    aval = leaf.aval if isinstance(leaf, Dyn) else None
    if len(args) == 2 and not kwargs and aval is not None and aval.ndim == 0 and not aval.weak and \
            aval.dtype not in dtypes.WIDEST:
        return spec.call_value(node, np.empty, [args[1], aval.dtype.type], {})
    out = spec.call_static(node, stack_buffer, args, kwargs)
    if out.aval is None and aval is not None:  # one axis more, in the leaf's dtype (a weak number's default)
        out.aval = AVal(aval.dtype, aval.ndim + 1)
    return out


stack_buffer._numbax_specialize = _stack_buffer
