"""Which names a function stores and loads, and how often: the facts copy propagation and DCE need."""
from __future__ import annotations

import collections
from typing import Counter, Tuple

import gast


def count_names(fdef: gast.FunctionDef) -> Tuple[Counter, Counter]:
    """``(stores, loads)``: per name, how many times it is assigned (parameters once) and read."""
    stores: Counter = collections.Counter(a.id for a in fdef.args.args)
    loads: Counter = collections.Counter()
    for node in gast.walk(fdef):
        if isinstance(node, gast.Name):
            if isinstance(node.ctx, gast.Store):
                stores[node.id] += 1
            elif isinstance(node.ctx, gast.Load):
                loads[node.id] += 1
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            stores[node.target.id] += 1
            loads[node.target.id] += 1
    return stores, loads
