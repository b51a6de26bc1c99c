"""Key-path entries of pytrees (``SequenceKey``, ``DictKey``, ...) and ``keystr``, as in JAX."""
from __future__ import annotations

import dataclasses
from typing import Any, Hashable, Tuple

__all__ = ["SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "KeyEntry", "KeyPath", "keystr"]


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """The position of a child in a list, tuple or other sequence node.

    >>> str(SequenceKey(0))
    '[0]'
    """

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """The key of a child in a dict, ``OrderedDict`` or ``defaultdict`` node.

    >>> str(DictKey('a'))
    "['a']"
    """

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """The attribute name of a child in a namedtuple or dataclass node.

    >>> str(GetAttrKey('x'))
    '.x'
    """

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """The position of a child of a custom node registered without key functions.

    >>> str(FlattenedIndexKey(1))
    '[<flat index 1>]'
    """

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = Any
KeyPath = Tuple[KeyEntry, ...]


def _simple_entrystr(key: KeyEntry) -> str:
    """The bare key of one entry: ``0``, ``a``, ``x`` (any other object: its ``str``)."""
    if isinstance(key, SequenceKey):
        return str(key.idx)
    if isinstance(key, (DictKey, FlattenedIndexKey)):
        return str(key.key)
    if isinstance(key, GetAttrKey):
        return str(key.name)
    return str(key)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Joins the string forms of a key path, as ``jax.tree_util.keystr`` does.

    Args:
        keys: A key path: a tuple of key entries (or any objects with a ``str``).
        simple: Use the bare keys (``0``, ``a``, ``x``) instead of ``[0]``,
            ``['a']``, ``.x``; compact but ambiguous.
        separator: The string placed between the entries.

    Returns:
        The key path as one string.

    >>> keystr((DictKey('a'), SequenceKey(0), GetAttrKey('w')))
    "['a'][0].w"
    >>> keystr((DictKey('a'), SequenceKey(0)), simple=True, separator='/')
    'a/0'
    """
    str_fn = _simple_entrystr if simple else str
    return separator.join(map(str_fn, keys))
