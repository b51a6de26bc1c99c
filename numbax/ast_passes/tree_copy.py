"""Fast whole-tree copies and walks of gast trees, for the passes that do them many times per compilation.

``copy.deepcopy`` and ``gast.walk`` work on any object and pay for it (a memo
dict and the reduce protocol per node; a generator per field). A gast node is
its ``__dict__``: nodes, lists of nodes, and plain values that are never
mutated (names, numbers, positions, and the annotations dict, which is copied
one level). ``copy_tree`` copies that dict; ``walk`` and ``children`` read each
class's ``_fields`` that may hold nodes, leaving out the expression contexts
(``ctx``), which no pass looks at as nodes, and the fields that never hold one
(a name's ``id``, a constant's ``value``).
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import gast

_AST = gast.AST


def copy_tree(node: Any) -> Any:
    """A copy of ``node`` sharing no node with it (a node shared inside the tree is copied twice)."""
    cls = node.__class__
    new = cls.__new__(cls)
    fields = new.__dict__
    for key, value in node.__dict__.items():
        if isinstance(value, _AST):
            value = copy_tree(value)
        elif type(value) is list:
            value = [copy_tree(v) if isinstance(v, _AST) else v for v in value]
        elif type(value) is dict:
            value = dict(value)
        fields[key] = value
    return new


def copy_nodes(nodes: List[Any]) -> List[Any]:
    """``copy_tree`` of each node of a list (a block of statements)."""
    return [copy_tree(n) for n in nodes]


_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}  # node class -> the fields that may hold nodes, ``ctx`` left out
# fields that hold a string, a number or None in every gast node that has them (``Name.id``, ``Constant.kind``)
_LEAF_FIELDS = frozenset({"ctx", "id", "attr", "arg", "asname", "type_comment", "kind", "conversion", "level",
                          "module", "is_async", "simple"})


def _fields(cls: type) -> Tuple[str, ...]:
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = _CHILD_FIELDS[cls] = () if cls is gast.Constant else \
            tuple(f for f in cls._fields if f not in _LEAF_FIELDS)
    return fields


def children(node: Any) -> List[Any]:
    """The nodes directly under ``node`` (expression contexts, ``ctx``, left out)."""
    out: List[Any] = []
    values = node.__dict__
    for field in _fields(node.__class__):
        value = values.get(field)
        if isinstance(value, _AST):
            out.append(value)
        elif type(value) is list:
            out.extend(v for v in value if isinstance(v, _AST))
    return out


def walk(node: Any) -> List[Any]:
    """The nodes of the tree under ``node``, ``node`` first, breadth-first as ``gast.walk``, but without the
    expression contexts (``ctx``: Load, Store, ...)."""
    out = [node]
    append = out.append
    known = _CHILD_FIELDS
    for current in out:  # a list's iterator reaches what is appended while it runs: the queue
        fields = known.get(current.__class__)
        if fields is None:
            fields = _fields(current.__class__)
        values = current.__dict__
        for field in fields:
            value = values.get(field)
            if isinstance(value, _AST):
                append(value)
            elif type(value) is list:
                for v in value:
                    if isinstance(v, _AST):
                        append(v)
    return out


def names(node: Any) -> List[gast.Name]:
    """Every ``gast.Name`` under ``node``."""
    name = gast.Name
    return [n for n in walk(node) if type(n) is name]
