"""numbax's pytrees: the semantics and API of ``jax.tree_util``, in pure Python."""
from __future__ import annotations

import collections
import dataclasses
import functools
import operator
from typing import Any, Callable, Hashable, Iterable, Sequence, TypeVar

from numbax._tree_keys import (
    DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath, SequenceKey, keystr,
)
from numbax._treedef import (
    _CUSTOM, _DICT, _LEAF, _LIST, _NONE, _TUPLE, IsLeaf, PyTreeDef, _flatten, _flatten_up_to,
    _flatten_with_path, _kind, _kinds, _Mismatch, _Node, _registry, _sorted_keys, _structure_error,
    _unflatten,
)

__all__ = [
    "PyTreeDef", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map",
    "tree_all", "tree_reduce", "tree_transpose", "all_leaves", "treedef_is_leaf",
    "treedef_children", "treedef_tuple", "tree_flatten_with_path", "tree_leaves_with_path",
    "tree_map_with_path", "keystr", "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey",
    "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_dataclass", "register_static",
]

T = TypeVar("T")


def tree_flatten(tree: Any, is_leaf: IsLeaf | None = None) -> tuple[list[Any], PyTreeDef]:
    """Flattens a pytree into its leaves and its structure.

    Args:
        tree: The pytree.
        is_leaf: Called on each subtree before it is flattened; ``True`` makes it a leaf.

    Returns:
        The leaves, in order (dicts in sorted key order), and the ``PyTreeDef``.

    >>> tree_flatten([(1, 2), {'b': 3, 'a': None}])
    ([1, 2, 3], PyTreeDef([(*, *), {'a': None, 'b': *}]))
    """
    leaves: list[Any] = []
    spec = _flatten(tree, leaves, is_leaf)
    return leaves, PyTreeDef(spec, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Builds the pytree of structure ``treedef`` from ``leaves``.

    Raises:
        ValueError: The number of leaves is not ``treedef.num_leaves``.
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: IsLeaf | None = None) -> list[Any]:
    """The leaves of a pytree, in flattening order."""
    leaves: list[Any] = []
    _flatten(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: IsLeaf | None = None) -> PyTreeDef:
    """The ``PyTreeDef`` of a pytree."""
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` has a single node (a leaf, ``None``, or an empty container)."""
    return treedef.num_nodes == 1


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the root's children."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose children have the structures ``treedefs``."""
    treedefs = list(treedefs)
    return PyTreeDef((tuple, None, tuple(t._spec for t in treedefs)), sum(t.num_leaves for t in treedefs))


def all_leaves(iterable: Iterable[Any], is_leaf: IsLeaf | None = None) -> bool:
    """Whether every element of ``iterable`` is a leaf (``None`` is not)."""
    if is_leaf is None:
        return all(_kind(type(x)) == _LEAF for x in iterable)
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: IsLeaf | None = None) -> Any:
    """Maps ``f`` over the leaves of ``tree`` and the matching subtrees of each of ``rest``.

    Args:
        f: Called with one leaf of ``tree`` and the matching subtree of each tree in ``rest``.
        tree: The pytree whose structure the result has.
        *rest: Pytrees that each have ``tree``'s structure as a prefix.
        is_leaf: As in :func:`tree_flatten`, applied to ``tree``.

    Returns:
        A pytree of ``tree``'s structure holding the results of ``f``.

    Raises:
        ValueError: A tree of ``rest`` does not have ``tree``'s structure as a prefix.

    >>> tree_map(lambda x, y: x + y, {'a': 1, 'b': (2, 3)}, {'a': 10, 'b': (20, 30)})
    {'a': 11, 'b': (22, 33)}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return _unflatten(treedef._spec, map(f, leaves))
    columns = [leaves, *_subtrees_at_leaves(treedef, rest, "tree_map tree")]
    return _unflatten(treedef._spec, iter([f(*xs) for xs in zip(*columns)]))


def _subtrees_at_leaves(treedef: PyTreeDef, trees: Sequence[Any], name: str) -> list[list[Any]]:
    """``treedef.flatten_up_to`` of each tree, failing with JAX's message naming ``name``."""
    columns = []
    for tree in trees:
        out: list[Any] = []
        try:
            _flatten_up_to(treedef._spec, tree, out)
        except _Mismatch as e:
            raise _structure_error(name, tree, e) from None
        columns.append(out)
    return columns


def tree_all(tree: Any, *, is_leaf: IsLeaf | None = None) -> bool:
    """Whether every leaf of ``tree`` is truthy."""
    return all(tree_leaves(tree, is_leaf))


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


def tree_reduce(function: Callable[[T, Any], T], tree: Any, initializer: Any = _MISSING,
                is_leaf: IsLeaf | None = None) -> T:
    """Folds ``function`` over the leaves of ``tree``, as ``functools.reduce`` does.

    Args:
        function: ``(accumulated, leaf) -> accumulated``.
        tree: The pytree.
        initializer: The first accumulated value; without it, the first leaf.
        is_leaf: As in :func:`tree_flatten`.

    Returns:
        The last accumulated value.

    Raises:
        TypeError: ``tree`` has no leaves and no ``initializer`` is given.

    >>> tree_reduce(lambda acc, x: acc + x, [1, (2, 3)], 10)
    16
    """
    if initializer is _MISSING:
        return functools.reduce(function, tree_leaves(tree, is_leaf))
    return functools.reduce(function, tree_leaves(tree, is_leaf), initializer)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any) -> Any:
    """Turns a tree of structure ``outer`` of trees of structure ``inner`` into an ``inner`` tree of ``outer`` trees.

    Args:
        outer_treedef: The outer structure.
        inner_treedef: The inner structure; ``None`` takes it from the first inner tree.
        pytree_to_transpose: The tree, of structure ``outer_treedef.compose(inner_treedef)``.

    Raises:
        TypeError: The tree does not have ``outer * inner`` leaves.

    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size, outer_size = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}")
    rows = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in zip(*rows)])


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Flattens a pytree into ``(key_path, leaf)`` pairs and its structure.

    Args:
        tree: The pytree.
        is_leaf: As in :func:`tree_flatten`; called as ``is_leaf(path, x)`` if ``is_leaf_takes_path``.
        is_leaf_takes_path: Whether ``is_leaf`` takes the key path too.

    Returns:
        The ``(key_path, leaf)`` pairs in flattening order and the ``PyTreeDef``.

    >>> pairs, _ = tree_flatten_with_path({'a': [1, 2]})
    >>> [(keystr(p), x) for p, x in pairs]
    [("['a'][0]", 1), ("['a'][1]", 2)]
    """
    test = is_leaf if is_leaf is None or is_leaf_takes_path else (lambda _, x: is_leaf(x))
    out: list[tuple[KeyPath, Any]] = []
    spec = _flatten_with_path(tree, (), out, test)
    return out, PyTreeDef(spec, len(out))


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    """The ``(key_path, leaf)`` pairs of a pytree; see :func:`tree_flatten_with_path`."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """Like :func:`tree_map`, with each leaf's key path as ``f``'s first argument."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    columns = [[p for p, _ in pairs], [x for _, x in pairs]]
    columns += _subtrees_at_leaves(treedef, rest, "tree_map_with_path tree")
    return treedef.unflatten([f(*xs) for xs in zip(*columns)])


# ---------------------------------------------------------------- registration

def register_pytree_node(nodetype: type, flatten_func: Callable[[Any], tuple[Iterable[Any], Hashable]],
                         unflatten_func: Callable[[Hashable, Iterable[Any]], Any],
                         flatten_with_keys_func: Callable[[Any], tuple[Iterable[tuple[KeyEntry, Any]], Hashable]]
                         | None = None) -> None:
    """Makes ``nodetype`` (exactly; not its subclasses) a pytree node.

    Args:
        nodetype: The type.
        flatten_func: ``x -> (children, aux_data)``; ``aux_data`` is kept in the ``PyTreeDef``.
        unflatten_func: ``(aux_data, children) -> x``.
        flatten_with_keys_func: ``x -> ((key_entry, child) pairs, aux_data)``, for key paths;
            without it children get ``FlattenedIndexKey``s.

    Raises:
        ValueError: ``nodetype`` is already a registered or built-in node type.
    """
    if nodetype in _registry or _kinds.get(nodetype) in (_LIST, _TUPLE, _DICT, _NONE):
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = _Node(flatten_func, unflatten_func, flatten_with_keys_func)
    _kinds[nodetype] = _CUSTOM


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable[[Any], tuple[Iterable[Any], Hashable]],
                              unflatten_func: Callable[[Hashable, Iterable[Any]], Any],
                              flatten_func: Callable[[Any], tuple[Iterable[Any], Hashable]] | None = None) -> None:
    """Makes ``nodetype`` a pytree node, with key entries for its children.

    Args:
        nodetype: The type.
        flatten_with_keys: ``x -> ((key_entry, child) pairs, aux_data)``.
        unflatten_func: ``(aux_data, children) -> x``.
        flatten_func: Optional faster ``x -> (children, aux_data)``, in the same order.
    """
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: type[T]) -> type[T]:
    """Class decorator: registers ``cls`` by its ``tree_flatten`` method and ``tree_unflatten`` classmethod.

    Returns:
        ``cls``, unchanged.
    """
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: type[T]) -> type[T]:
    """Class decorator: like :func:`register_pytree_node_class`, with a ``tree_flatten_with_keys`` method.

    Returns:
        ``cls``, unchanged.
    """
    flatten = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"), cls.tree_unflatten, flatten)
    return cls


def register_dataclass(nodetype: type[T], data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None, drop_fields: Sequence[str] = ()) -> type[T]:
    """Makes a dataclass a pytree node whose children are its data fields; usable as a decorator.

    Args:
        nodetype: The class; rebuilt as ``nodetype(**fields)``.
        data_fields: The fields that are children. With ``meta_fields`` also ``None``, every
            dataclass field not marked ``field(metadata={'static': True})``.
        meta_fields: The fields kept, as a tuple, in the ``PyTreeDef``'s aux data (hashable).
        drop_fields: Dataclass fields left out of both.

    Returns:
        ``nodetype``, unchanged.

    Raises:
        TypeError: Only one of the field lists is given, or neither for a non-dataclass.
        ValueError: The fields do not cover the dataclass's ``init`` fields, or overlap.
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be specified"
                            f" when either is specified. Got {data_fields=} {meta_fields=}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required when"
                            f" nodetype is not a dataclass. Got {nodetype=}.")
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data, meta = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        given = {*meta, *data}
        if given != init_fields:
            raise ValueError("data_fields and meta_fields must include all dataclass fields with ``init=True``"
                             f" and only them. Missing fields: {init_fields - given}."
                             f" Unexpected fields: {given - init_fields}.")
    if overlap := set(data) & set(meta):
        raise ValueError(f"data_fields and meta_fields must not overlap. Overlapping fields: {overlap}.")

    def flatten(x):
        return tuple(getattr(x, n) for n in data), tuple(getattr(x, n) for n in meta)

    def flatten_with_keys(x):
        return tuple((GetAttrKey(n), getattr(x, n)) for n in data), tuple(getattr(x, n) for n in meta)

    def unflatten(aux, children):
        return nodetype(**dict(zip(meta, aux)), **dict(zip(data, children)))

    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def register_static(cls: type[T]) -> type[T]:
    """Makes ``cls`` a pytree node with no children: its (hashable) instances are aux data.

    Returns:
        ``cls``, unchanged, so this works as a class decorator.
    """
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x, lambda x: ((), x))
    return cls


def _flatten_defaultdict_with_keys(d: collections.defaultdict) -> tuple[tuple, tuple]:
    keys = _sorted_keys(d)
    return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


register_pytree_with_keys(
    collections.OrderedDict,
    lambda d: (tuple((DictKey(k), v) for k, v in d.items()), tuple(d)),
    lambda keys, values: collections.OrderedDict(zip(keys, values)),
    lambda d: (tuple(d.values()), tuple(d)),
)
register_pytree_with_keys(
    collections.defaultdict,
    _flatten_defaultdict_with_keys,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)),
)


# Inside compiled functions, calls of these run while specializing, over containers of leaves (the
# specializer's ``compile_time`` module gives them their hook: this library imports no compiler).
COMPILE_TIME_FUNCTIONS = (tree_flatten, tree_unflatten, tree_leaves, tree_structure, tree_map, tree_all,
                          tree_reduce, tree_transpose, tree_flatten_with_path, tree_leaves_with_path,
                          tree_map_with_path, all_leaves, treedef_is_leaf, treedef_children, treedef_tuple)
