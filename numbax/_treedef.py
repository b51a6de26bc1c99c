"""The core of numbax's pytrees: the node registry, structure specs, flattening and ``PyTreeDef``.

The public API is :mod:`numbax.tree_util`; this module holds its machinery.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from numbax._tree_keys import DictKey, FlattenedIndexKey, GetAttrKey, KeyPath, SequenceKey, keystr

IsLeaf = Callable[[Any], bool]

# A tree's structure ("spec") is held as nested tuples, so that ``==`` and ``hash``
# run in C: a leaf is ``None``; a node is ``(type, aux_data, tuple_of_child_specs)``.
# Node kinds, found by *exact* type (subclasses of registered types are leaves, as in JAX):
_LEAF, _LIST, _TUPLE, _NAMEDTUPLE, _DICT, _NONE, _CUSTOM = range(7)
_kinds: dict[type, int] = {list: _LIST, tuple: _TUPLE, dict: _DICT, type(None): _NONE}
_NONE_SPEC = (type(None), None, ())


class _Node:
    """The functions of one registered custom node type."""

    __slots__ = ("flatten", "unflatten", "flatten_with_keys")

    def __init__(self, flatten, unflatten, flatten_with_keys):
        self.flatten, self.unflatten, self.flatten_with_keys = flatten, unflatten, flatten_with_keys


_registry: dict[type, _Node] = {}


def _classify(t: type) -> int:
    """Kind of a type not seen before: a namedtuple or a leaf (cached in ``_kinds``)."""
    kind = _NAMEDTUPLE if issubclass(t, tuple) and hasattr(t, "_fields") else _LEAF
    _kinds[t] = kind
    return kind


def _kind(t: type) -> int:
    kind = _kinds.get(t)
    return _classify(t) if kind is None else kind


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError:
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from None


def _flatten(x: Any, leaves: list, is_leaf: IsLeaf | None) -> Any:
    """Appends the leaves of ``x`` to ``leaves`` and returns its spec."""
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return None
    t = type(x)
    kind = _kinds.get(t)
    if kind is None:
        kind = _classify(t)
    if kind == _LEAF:
        leaves.append(x)
        return None
    if kind <= _NAMEDTUPLE:
        children, aux = x, None
    elif kind == _DICT:
        aux = _sorted_keys(x)
        children = [x[k] for k in aux]
    elif kind == _NONE:
        return _NONE_SPEC
    else:
        children, aux = _registry[t].flatten(x)
    if is_leaf is not None:
        return (t, aux, tuple([_flatten(c, leaves, is_leaf) for c in children]))
    specs = []
    for c in children:  # leaves of already seen types are handled inline: no call per leaf
        if _kinds.get(type(c)) == _LEAF:
            leaves.append(c)
            specs.append(None)
        else:
            specs.append(_flatten(c, leaves, None))
    return (t, aux, tuple(specs))


def _keyed_children(x: Any, t: type, kind: int) -> tuple[list, Sequence, Any]:
    """The key entries, children and aux data of the node ``x`` of type ``t``."""
    if kind == _LIST or kind == _TUPLE:
        return [SequenceKey(i) for i in range(len(x))], x, None
    if kind == _NAMEDTUPLE:
        return [GetAttrKey(f) for f in t._fields], x, None
    if kind == _DICT:
        keys = _sorted_keys(x)
        return [DictKey(k) for k in keys], [x[k] for k in keys], keys
    if kind == _NONE:
        return [], (), None
    node = _registry[t]
    if node.flatten_with_keys is not None:
        pairs, aux = node.flatten_with_keys(x)
        pairs = list(pairs)
        return [k for k, _ in pairs], [c for _, c in pairs], aux
    children, aux = node.flatten(x)
    children = list(children)
    return [FlattenedIndexKey(i) for i in range(len(children))], children, aux


def _flatten_with_path(x: Any, path: KeyPath, out: list, is_leaf) -> Any:
    """Like ``_flatten`` with ``(key_path, leaf)`` pairs; ``is_leaf`` takes ``(path, x)``."""
    if is_leaf is not None and is_leaf(path, x):
        out.append((path, x))
        return None
    t = type(x)
    kind = _kinds.get(t)
    if kind is None:
        kind = _classify(t)
    if kind == _LEAF:
        out.append((path, x))
        return None
    keys, children, aux = _keyed_children(x, t, kind)
    specs = tuple([_flatten_with_path(c, (*path, k), out, is_leaf) for k, c in zip(keys, children)])
    return (t, aux, specs)


def _build(t: type, aux: Any, children: list) -> Any:
    """Rebuilds one node of type ``t`` from its aux data and unflattened children."""
    kind = _kinds.get(t)
    if kind == _LIST:
        return children
    if kind == _TUPLE:
        return tuple(children)
    if kind == _DICT:
        return dict(zip(aux, children))
    if kind == _NONE:
        return None
    if kind == _CUSTOM:
        return _registry[t].unflatten(aux, tuple(children))
    return t(*children)  # a namedtuple


def _unflatten(spec: Any, it) -> Any:
    if spec is None:
        return next(it)
    t, aux, children = spec
    return _build(t, aux, [next(it) if c is None else _unflatten(c, it) for c in children])


def _count_leaves(spec: Any) -> int:
    return 1 if spec is None else sum(_count_leaves(c) for c in spec[2])


def _count_nodes(spec: Any) -> int:
    return 1 if spec is None else 1 + sum(_count_nodes(c) for c in spec[2])


def _skeleton(spec: Any) -> Any:
    """The spec without aux data (hashed when some aux data is unhashable)."""
    return None if spec is None else (spec[0], tuple(_skeleton(c) for c in spec[2]))


def _spec_repr(spec: Any) -> str:
    if spec is None:
        return "*"
    t, aux, children = spec
    kind, parts = _kinds.get(t), [_spec_repr(c) for c in children]
    if kind == _LIST:
        return f"[{', '.join(parts)}]"
    if kind == _TUPLE:
        return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"
    if kind == _DICT:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(aux, parts)) + "}"
    if kind == _NONE:
        return "None"
    label = f"namedtuple[{t.__name__}]" if kind == _NAMEDTUPLE else f"{t.__name__}[{aux}]"
    return f"CustomNode({label}, [{', '.join(parts)}])"


class _Mismatch(Exception):
    """A prefix-structure mismatch found by ``_flatten_up_to``; ``positions`` is child indices, innermost first."""

    def __init__(self, what: str, spec: Any, full: Any, full_meta: Any = None, n_full: int = 0):
        super().__init__(what)
        self.what, self.spec, self.full, self.full_meta, self.n_full = what, spec, full, full_meta, n_full
        self.positions: list[int] = []


def _flatten_up_to(spec: Any, x: Any, out: list) -> None:
    """Appends to ``out`` the subtrees of ``x`` found at the leaves of ``spec``."""
    if spec is None:
        out.append(x)
        return
    t, aux, specs = spec
    if type(x) is not t:
        raise _Mismatch("types", spec, x)
    kind = _kinds[t]
    if kind <= _NAMEDTUPLE:
        children = x
        if len(x) != len(specs):
            raise _Mismatch("lengths", spec, x)
    elif kind == _DICT:
        keys = _sorted_keys(x)
        if keys != aux:
            raise _Mismatch("children" if len(keys) != len(aux) else "metadata", spec, x, keys, len(keys))
        children = [x[k] for k in keys]
    elif kind == _NONE:
        return
    else:
        children, full_aux = _registry[t].flatten(x)
        children = list(children)
        if len(children) != len(specs):
            raise _Mismatch("children", spec, x, full_aux, len(children))
        if full_aux != aux:
            raise _Mismatch("metadata", spec, x, full_aux, len(children))
    for i, (s, c) in enumerate(zip(specs, children)):
        try:
            _flatten_up_to(s, c, out)
        except _Mismatch as e:
            e.positions.append(i)
            raise


def _structure_error(name: str, tree: Any, err: _Mismatch) -> ValueError:
    """JAX's message for a tree that does not have the structure ``err.spec`` as a prefix."""
    path = []
    for i in reversed(err.positions):
        keys, children, _ = _keyed_children(tree, type(tree), _kinds[type(tree)])
        path.append(keys[i])
        tree = children[i]
    where = f"    {name}{keystr(tuple(path))}\nAt that key path, the prefix pytree {name} has a subtree of type"
    t, aux, specs = err.spec
    if err.what == "types":
        return ValueError(
            f"pytree structure error: different types at key path\n{where}\n    {t}\n"
            f"but at the same key path the full pytree has a subtree of different type\n    {type(err.full)}.")
    if err.what == "lengths":
        return ValueError(
            f"pytree structure error: different lengths of {t.__name__} at key path\n{where} "
            f"{t.__name__} of length {len(specs)}, but the full pytree has a subtree of the same type "
            f"but of length {len(err.full)}.")
    if err.what == "children":
        n, m = len(specs), err.n_full
        keys = (f" (keys {list(aux)})", f" (keys {list(err.full_meta)})") if t is dict else ("", "")
        return ValueError(
            f"pytree structure error: different numbers of pytree children at key path\n{where}\n"
            f"    {t}\nwith {n} child{'ren' * (n != 1)}{keys[0]}, but at the same key path the full pytree "
            f"has a subtree of the same type but with {m} child{'ren' * (m != 1)}{keys[1]}.")
    return ValueError(
        f"pytree structure error: different pytree metadata at key path\n{where}\n    {t}\n"
        f"with metadata\n    {aux}\nbut at the same key path the full pytree has a subtree of the "
        f"same type but with metadata\n    {err.full_meta}.")


class PyTreeDef:
    """The structure of a pytree: node types, their aux data and children, and where leaves sit.

    Hashable and compared by structure; ``repr`` follows JAX (``PyTreeDef([*, (*, *)])``).

    >>> from numbax.tree_util import tree_structure
    >>> tree_structure({'a': 1, 'b': None})
    PyTreeDef({'a': *, 'b': None})
    """

    __slots__ = ("_spec", "_num_leaves", "_num_nodes", "_hash")

    def __init__(self, spec: Any, num_leaves: int | None = None):
        self._spec = spec
        self._num_leaves = _count_leaves(spec) if num_leaves is None else num_leaves
        self._num_nodes = None
        self._hash = None

    @property
    def num_leaves(self) -> int:
        """The number of leaves."""
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """The number of nodes, leaves included."""
        if self._num_nodes is None:
            self._num_nodes = _count_nodes(self._spec)
        return self._num_nodes

    def children(self) -> list[PyTreeDef]:
        """The structures of the root's children (``[]`` for a leaf)."""
        return [] if self._spec is None else [PyTreeDef(c) for c in self._spec[2]]

    def node_data(self) -> tuple[type, Any] | None:
        """``(type, aux_data)`` of the root node, or ``None`` for a leaf (a dict's aux is its key list)."""
        if self._spec is None:
            return None
        t, aux, _ = self._spec
        return (t, list(aux)) if t is dict else (t, aux)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Builds the tree of this structure with ``leaves``; see :func:`tree_unflatten`."""
        leaves = leaves if type(leaves) is list else list(leaves)
        if len(leaves) != self._num_leaves:
            few = "few" if len(leaves) < self._num_leaves else "many"
            raise ValueError(f"Too {few} leaves for PyTreeDef; expected {self._num_leaves}, got {len(leaves)}.")
        return _unflatten(self._spec, iter(leaves))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of ``tree`` at this structure's leaves (``tree`` must have it as a prefix).

        Raises:
            ValueError: ``tree`` does not have this structure as a prefix.
        """
        out: list[Any] = []
        try:
            _flatten_up_to(self._spec, tree, out)
        except _Mismatch as e:
            raise _structure_error("tree", tree, e) from None
        return out

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """The structure with ``inner`` put in place of each leaf of this one."""
        def sub(spec):
            return inner._spec if spec is None else (spec[0], spec[1], tuple(map(sub, spec[2])))
        return PyTreeDef(sub(self._spec), self._num_leaves * inner._num_leaves)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self._spec is other._spec or (self._num_leaves == other._num_leaves and self._spec == other._spec)

    def __hash__(self) -> int:
        if self._hash is None:
            try:
                self._hash = hash(self._spec)
            except TypeError:  # unhashable aux data: hash the node types and shape only
                self._hash = hash(_skeleton(self._spec))
        return self._hash

    def __repr__(self) -> str:
        return f"PyTreeDef({_spec_repr(self._spec)})"
