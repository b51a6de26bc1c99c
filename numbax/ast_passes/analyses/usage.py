"""Which names a function stores and loads, and how often: the facts copy propagation and DCE need."""
from __future__ import annotations

import collections
from typing import Counter, Iterable, Tuple

import gast

from numbax.ast_passes.tree_copy import walk


def count_names(fdef: gast.FunctionDef) -> Tuple[Counter, Counter]:
    """``(stores, loads)``: per name, how many times it is assigned (parameters once) and read."""
    stores, loads = count_in([fdef])
    stores.update(a.id for a in fdef.args.args)
    return stores, loads


def count_in(nodes: Iterable) -> Tuple[Counter, Counter]:
    """``(stores, loads)`` within ``nodes`` (statements, say); ``x += v`` both reads and assigns ``x``."""
    stores: Counter = collections.Counter()
    loads: Counter = collections.Counter()
    name, store, load, aug = gast.Name, gast.Store, gast.Load, gast.AugAssign
    for root in nodes:
        for node in walk(root):
            kind = type(node)
            if kind is name:
                ctx = type(node.ctx)
                if ctx is store:
                    stores[node.id] += 1
                elif ctx is load:
                    loads[node.id] += 1
            elif kind is aug and type(node.target) is name:
                stores[node.target.id] += 1
                loads[node.target.id] += 1
    return stores, loads
