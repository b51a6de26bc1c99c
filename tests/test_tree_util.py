"""Tests of numbax.tree_util against jax.tree_util as the oracle."""
import ast
import collections
import dataclasses
import functools
import operator
import pathlib

import numpy as np
import pytest

import jax.tree_util as jax_tu  # the oracle; the test extras install jax

from numbax import tree_util as nt  # noqa: E402

# ------------------------------------------------------------------ fixtures: types, registered in both

P = collections.namedtuple("P", "x y")
Q = collections.namedtuple("Q", "a")


class Point:
    """A custom node with aux data (its field names)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return type(other) is Point and self.x == other.x and self.y == other.y

    def __repr__(self):
        return f"Point({self.x!r}, {self.y!r})"


def _point_flatten(p):
    return (p.x, p.y), ("x", "y")


def _point_unflatten(aux, children):
    assert aux == ("x", "y")
    return Point(*children)


class Box:
    """A custom node registered with keys; the aux data is a label."""

    def __init__(self, items, label):
        self.items, self.label = items, label

    def __eq__(self, other):
        return type(other) is Box and self.items == other.items and self.label == other.label


class Pair:
    """Registered with ``register_pytree_node_class``."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def __eq__(self, other):
        return type(other) is Pair and (self.a, self.b) == (other.a, other.b)


class Named:
    """Registered with ``register_pytree_with_keys_class``."""

    def __init__(self, u, v):
        self.u, self.v = u, v

    def tree_flatten_with_keys(self):
        return ((nt.GetAttrKey("u"), self.u), (nt.GetAttrKey("v"), self.v)), "named"

    @classmethod
    def tree_unflatten(cls, aux, children):
        assert aux == "named"
        return cls(*children)

    def __eq__(self, other):
        return type(other) is Named and (self.u, self.v) == (other.u, other.v)


class ListAux:
    """A custom node whose aux data is unhashable (a list)."""

    def __init__(self, v):
        self.v = v


@dataclasses.dataclass
class Params:
    w: object
    b: object
    act: str = dataclasses.field(default="relu", metadata=dict(static=True))


@dataclasses.dataclass
class Layer:
    kernel: object
    bias: object
    name: str
    cache: object = None


@dataclasses.dataclass
class Plain:
    """An unregistered dataclass: a leaf."""

    v: int


class StaticStr(str):
    pass


class Tup(tuple):
    """A tuple subclass that is no namedtuple: a leaf."""


class Dct(dict):
    """A dict subclass: a leaf."""


class SubPoint(Point):
    """A subclass of a registered type: a leaf."""


def _register_everywhere():
    for tu in (jax_tu, nt):
        tu.register_pytree_node(Point, _point_flatten, _point_unflatten)
        tu.register_pytree_with_keys(
            Box,
            lambda b, tu=tu: (tuple((tu.SequenceKey(i), x) for i, x in enumerate(b.items)), b.label),
            lambda label, items: Box(list(items), label),
        )
        tu.register_pytree_node_class(Pair)
        tu.register_pytree_node(ListAux, lambda c: ((c.v,), [1, 2]), lambda aux, ch: ListAux(*ch))
        tu.register_dataclass(Params)
        tu.register_dataclass(Layer, data_fields=["kernel", "bias"], meta_fields=["name"], drop_fields=["cache"])
        tu.register_static(StaticStr)
        tu.register_pytree_with_keys_class(Named)  # jax accepts numbax's key entries: any object will do


_register_everywhere()


def assert_same(a, b):
    """Recursive equality that also checks container types, dict key order and defaultdict factories."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b), (a, b)
        for k in a:
            assert_same(a[k], b[k])
        if isinstance(a, collections.defaultdict):
            assert a.default_factory is b.default_factory
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b, (a, b)


W1, B1, W2, B2 = (np.full((2, 2), 1.0), np.zeros(2), np.full((2, 2), 2.0), np.ones(2))

TREES = [
    1,
    None,
    (),
    [],
    {},
    (1,),
    [1, 2],
    [(W1, B1), (W2, B2)],
    (W1,),
    {"b": 1, "a": 2},
    {2: "x", 1: "y", 3: None},
    {"a": [1, (2, None)], "c": {"z": 3, "y": ()}, "b": None},
    [None, [None], (None, 4)],
    P(1, [2, 3]),
    {"p": P(Q(1), None), "q": [Q(2)]},
    collections.OrderedDict([("b", 1), ("a", [2, 3])]),
    collections.defaultdict(list, {"b": 1, "a": (2,)}),
    Point(1, [2, (3, 4)]),
    [Point(None, 5), Box([1, {"k": 2}], "lbl")],
    Pair(1, Pair(2, 3)),
    Params(w=W1, b=[B1, 2], act="tanh"),
    Layer(kernel=1, bias=(2, 3), name="dense"),
    [StaticStr("add"), 1],
    ["str", b"bytes", 1.5, 2j, True, np.float32(3)],
    [Tup((1, 2)), Dct(a=1), Plain(3), SubPoint(1, 2)],
]


def tree_id(t):
    return type(t).__name__


# ------------------------------------------------------------------ flatten / unflatten against jax

@pytest.mark.parametrize("tree", TREES, ids=tree_id)
def test_flatten_matches_jax(tree):
    leaves, treedef = nt.tree_flatten(tree)
    jleaves, jtreedef = jax_tu.tree_flatten(tree)
    assert len(leaves) == len(jleaves)
    assert all(a is b for a, b in zip(leaves, jleaves))
    assert repr(treedef) == repr(jtreedef)
    assert treedef.num_leaves == jtreedef.num_leaves
    assert treedef.num_nodes == jtreedef.num_nodes
    assert [repr(c) for c in treedef.children()] == [repr(c) for c in jtreedef.children()]
    assert nt.treedef_is_leaf(treedef) == jax_tu.treedef_is_leaf(jtreedef)
    assert all(a is b for a, b in zip(nt.tree_leaves(tree), leaves))
    assert nt.tree_structure(tree) == treedef


@pytest.mark.parametrize("tree", TREES, ids=tree_id)
def test_unflatten_round_trip_matches_jax(tree):
    leaves, treedef = nt.tree_flatten(tree)
    _, jtreedef = jax_tu.tree_flatten(tree)
    rebuilt = nt.tree_unflatten(treedef, leaves)
    assert nt.tree_structure(rebuilt) == treedef
    assert all(a is b for a, b in zip(nt.tree_leaves(rebuilt), leaves))
    numbered = list(range(100, 100 + len(leaves)))
    ours = nt.tree_unflatten(treedef, numbered)
    assert_same(ours, jax_tu.tree_unflatten(jtreedef, numbered))
    assert_same(treedef.unflatten(iter(numbered)), ours)
    assert nt.tree_leaves(ours) == numbered


@pytest.mark.parametrize("tree", [t for t in TREES if type(t) in (list, tuple, dict, type(None), P, int)],
                         ids=tree_id)
def test_node_data_matches_jax(tree):
    nd, jnd = nt.tree_structure(tree).node_data(), jax_tu.tree_structure(tree).node_data()
    assert nd == jnd
    if nd is not None:
        assert nd[0] is jnd[0]
        assert type(nd[1]) is type(jnd[1])


def test_node_data_custom_and_dataclass():
    assert nt.tree_structure(collections.OrderedDict(b=1, a=2)).node_data() == (collections.OrderedDict, ("b", "a"))
    assert nt.tree_structure(Point(1, 2)).node_data() == (Point, ("x", "y"))
    p = Params(1, 2, "gelu")
    assert nt.tree_structure(p).node_data() == jax_tu.tree_structure(p).node_data() == (Params, ("gelu",))


def test_leaf_order_and_sorted_dicts():
    tree = {"z": 1, "a": [2, {"y": 3, "b": 4}], "m": (5, None, P(6, 7))}
    assert nt.tree_leaves(tree) == [2, 4, 3, 5, 6, 7, 1] == jax_tu.tree_leaves(tree)
    treedef = nt.tree_structure({"b": 0, "a": 0, "c": 0})
    rebuilt = nt.tree_unflatten(treedef, [1, 2, 3])
    assert list(rebuilt.items()) == [("a", 1), ("b", 2), ("c", 3)]
    assert rebuilt == jax_tu.tree_unflatten(jax_tu.tree_structure({"b": 0, "a": 0, "c": 0}), [1, 2, 3])
    od = nt.tree_unflatten(nt.tree_structure(collections.OrderedDict(b=0, a=0)), [1, 2])
    assert list(od.items()) == [("b", 1), ("a", 2)]


def test_none_contributes_no_leaves():
    assert nt.tree_leaves([None, (None,), {"a": None}]) == []
    leaves, treedef = nt.tree_flatten(None)
    assert leaves == [] and repr(treedef) == "PyTreeDef(None)" and treedef.num_leaves == 0
    assert nt.tree_unflatten(treedef, []) is None


def test_uncomparable_dict_keys_raise_value_error():
    with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
        nt.tree_flatten({1: 1, "a": 2})
    with pytest.raises(ValueError):
        jax_tu.tree_flatten({1: 1, "a": 2})


@pytest.mark.parametrize("is_leaf", [
    lambda x: x is None,
    lambda x: isinstance(x, tuple),
    lambda x: True,
    lambda x: isinstance(x, dict) and "k" in x,
    lambda x: isinstance(x, Point),
    lambda x: False,
], ids=["none", "tuple", "root", "dict-k", "point", "never"])
def test_is_leaf_matches_jax(is_leaf):
    tree = [None, (1, 2), {"k": [3], "j": (4, None)}, Point((5,), None), P(6, (7,))]
    leaves, treedef = nt.tree_flatten(tree, is_leaf=is_leaf)
    jleaves, jtreedef = jax_tu.tree_flatten(tree, is_leaf=is_leaf)
    assert all(a is b for a, b in zip(leaves, jleaves)) and len(leaves) == len(jleaves)
    assert repr(treedef) == repr(jtreedef)
    assert nt.tree_leaves(tree, is_leaf) == jleaves
    assert repr(nt.tree_structure(tree, is_leaf)) == repr(jax_tu.tree_structure(tree, is_leaf))
    assert_same(nt.tree_unflatten(treedef, leaves), jax_tu.tree_unflatten(jtreedef, jleaves))


# ------------------------------------------------------------------ PyTreeDef equality, hashing, methods

PAIRS = [
    ([1, 2], [3, 4]),
    ([1, 2], (1, 2)),
    ([1, 2], [1, 2, 3]),
    ({"a": 1}, {"b": 1}),
    ({"a": 1, "b": 2}, {"b": 5, "a": 6}),
    (None, 1),
    ([None], [1]),
    (P(1, 2), (1, 2)),
    (P(1, 2), P("u", [])),
    (Q(1), P(1, 2)),
    (Point(1, 2), Point(3, 4)),
    (Params(1, 2, "relu"), Params(1, 2, "tanh")),
    (Params(1, 2, "relu"), Params(5, 6, "relu")),
    (collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=1, a=2)),
    (collections.OrderedDict(a=1), {"a": 1}),
    (StaticStr("a"), StaticStr("b")),
    ([W1, B1], [1.0, "x"]),
]


@pytest.mark.parametrize("a,b", PAIRS, ids=[str(i) for i in range(len(PAIRS))])
def test_structure_equality_matches_jax(a, b):
    ta, tb = nt.tree_structure(a), nt.tree_structure(b)
    expected = jax_tu.tree_structure(a) == jax_tu.tree_structure(b)
    assert (ta == tb) is expected
    assert (ta != tb) is (not expected)
    if expected:
        assert hash(ta) == hash(tb)
    assert ta == nt.tree_structure(a) and hash(ta) == hash(nt.tree_structure(a))


def test_structures_as_dict_keys():
    cache = {nt.tree_structure([(W1, B1), (W2, B2)]): "two layers", nt.tree_structure((W1,)): "one"}
    assert cache[nt.tree_structure([(1, 2), (3, 4)])] == "two layers"
    assert cache[nt.tree_structure((0.5,))] == "one"
    assert nt.tree_structure([(1, 2)]) not in cache
    assert nt.tree_structure([1]) != [1] and nt.tree_structure([1]) != "PyTreeDef([*])"


def test_unhashable_aux_data_still_hashes():
    t1, t2 = nt.tree_structure(ListAux(1)), nt.tree_structure(ListAux(2))
    assert t1 == t2 and hash(t1) == hash(t2)
    assert (jax_tu.tree_structure(ListAux(1)) == jax_tu.tree_structure(ListAux(2))) is True


def test_unflatten_wrong_number_of_leaves():
    treedef = nt.tree_structure([1, (2, 3)])
    with pytest.raises(ValueError, match="Too few leaves for PyTreeDef; expected 3, got 2"):
        nt.tree_unflatten(treedef, [1, 2])
    with pytest.raises(ValueError, match="Too many leaves for PyTreeDef; expected 3"):
        nt.tree_unflatten(treedef, [1, 2, 3, 4])
    with pytest.raises(ValueError):
        jax_tu.tree_unflatten(jax_tu.tree_structure([1, (2, 3)]), [1, 2])


def test_unflatten_accepts_any_iterable():
    treedef = nt.tree_structure({"a": (0, 0), "b": 0})
    assert nt.tree_unflatten(treedef, (x * 2 for x in range(3))) == {"a": (0, 2), "b": 4}


def test_flatten_up_to_and_compose_match_jax():
    tree = [1, [2]]
    full = [(1, 2), [{"a": 3}]]
    assert nt.tree_structure(tree).flatten_up_to(full) == jax_tu.tree_structure(tree).flatten_up_to(full)
    assert nt.tree_structure(tree).flatten_up_to(full) == [(1, 2), {"a": 3}]
    outer, inner = ((1, 2), [1, 2, 3])
    composed = nt.tree_structure(outer).compose(nt.tree_structure(inner))
    assert repr(composed) == repr(jax_tu.tree_structure(outer).compose(jax_tu.tree_structure(inner)))
    assert composed.num_leaves == 6
    assert composed == nt.tree_structure(([0, 0, 0], [0, 0, 0]))
    with pytest.raises(ValueError, match="different types"):
        nt.tree_structure([1, 2]).flatten_up_to((1, 2))


def test_treedef_tuple_and_children():
    t = nt.treedef_tuple([nt.tree_structure([1, 2]), nt.tree_structure({"a": 1})])
    assert t == nt.tree_structure(([0, 0], {"a": 0})) and t.num_leaves == 3
    assert repr(t) == repr(jax_tu.treedef_tuple([jax_tu.tree_structure([1, 2]), jax_tu.tree_structure({"a": 1})]))
    assert nt.treedef_children(t) == [nt.tree_structure([1, 2]), nt.tree_structure({"a": 1})]


@pytest.mark.parametrize("tree,expected", [
    ([(1, 2), (3, 4)], "PyTreeDef([(*, *), (*, *)])"),
    ({"a": 1, "b": None}, "PyTreeDef({'a': *, 'b': None})"),
    ((1,), "PyTreeDef((*,))"),
    (Point(1, 2), "PyTreeDef(CustomNode(Point[('x', 'y')], [*, *]))"),
    (P(1, 2), "PyTreeDef(CustomNode(namedtuple[P], [*, *]))"),
    (StaticStr("add"), "PyTreeDef(CustomNode(StaticStr[add], []))"),
])
def test_repr_literals(tree, expected):
    assert repr(nt.tree_structure(tree)) == expected == repr(jax_tu.tree_structure(tree))


# ------------------------------------------------------------------ tree_map

def test_tree_map_single_and_multiple_trees():
    tree = {"a": [1, 2], "b": (3, None), "c": P(4, 5)}
    assert nt.tree_map(lambda x: x * 10, tree) == jax_tu.tree_map(lambda x: x * 10, tree)
    assert nt.tree_map(lambda x: x * 10, tree) == {"a": [10, 20], "b": (30, None), "c": P(40, 50)}
    other = {"a": [10, 20], "b": (30, None), "c": P(40, 50)}
    third = {"a": [100, 200], "b": (300, None), "c": P(400, 500)}
    f = lambda x, y, z: x + y + z  # noqa: E731
    assert nt.tree_map(f, tree, other, third) == jax_tu.tree_map(f, tree, other, third)
    assert nt.tree_map(f, tree, other, third)["c"] == P(444, 555)


def test_tree_map_rest_may_be_deeper_than_the_first_tree():
    f = lambda x, y: (x, y)  # noqa: E731
    assert nt.tree_map(f, [1, 2], [(1, 2), {"k": 3}]) == jax_tu.tree_map(f, [1, 2], [(1, 2), {"k": 3}])
    assert nt.tree_map(f, [1, 2], [(1, 2), {"k": 3}]) == [(1, (1, 2)), (2, {"k": 3})]


def test_tree_map_numpy_and_is_leaf():
    params = [(W1, B1), (W2, B2)]
    out = nt.tree_map(lambda a, b: a - 0.5 * b, params, params)
    for (w, b), (w0, b0) in zip(out, params):
        np.testing.assert_array_equal(w, 0.5 * w0)
        np.testing.assert_array_equal(b, 0.5 * b0)
    is_pair = lambda x: isinstance(x, tuple)  # noqa: E731
    assert nt.tree_map(len, [(1, 2), (3,)], is_leaf=is_pair) == [2, 1]
    assert nt.tree_map(lambda x: x, [None, 1], is_leaf=lambda x: x is None) == [None, 1]
    counts = nt.tree_map(lambda x: 0 if x is None else x, [None, 1], is_leaf=lambda x: x is None)
    assert counts == jax_tu.tree_map(lambda x: 0 if x is None else x, [None, 1], is_leaf=lambda x: x is None) == [0, 1]


MISMATCHES = [
    ([1, 2], (1, 2)),
    ([1, 2], [1, 2, 3]),
    ({"a": 1}, {"b": 1}),
    ({"a": 1}, {"a": 1, "b": 2}),
    ([1, None], [2, 3]),
    ({"a": [1, (2, 3)]}, {"a": [1, [2, 3]]}),
    ({"x": [1, (2, 3)]}, {"x": [1, (2, 3, 4)]}),
    ([P(1, 2)], [Q(1)]),
    ([Params(1, 2, "relu")], [Params(1, 2, "tanh")]),
    (collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=1, a=2)),
    (Point(1, [2]), Point(1, [2, 3])),
]


@pytest.mark.parametrize("a,b", MISMATCHES, ids=[str(i) for i in range(len(MISMATCHES))])
def test_tree_map_mismatch_error_matches_jax(a, b):
    with pytest.raises(ValueError) as ours:
        nt.tree_map(lambda x, y: x, a, b)
    with pytest.raises(ValueError) as theirs:
        jax_tu.tree_map(lambda x, y: x, a, b)
    ours_msg, theirs_msg = str(ours.value), str(theirs.value)
    assert ours_msg.startswith("pytree structure error")
    assert ours_msg.splitlines()[:2] == theirs_msg.splitlines()[:2]  # the kind and the key path
    if "different types" in theirs_msg or "different lengths" in theirs_msg:
        assert ours_msg == theirs_msg


def test_tree_map_with_path_matches_jax():
    tree = {"a": [1, (2, 3)], "b": P(4, None), "c": Point(5, 6)}
    f = lambda path, x, y: (nt.keystr(path), x + y)  # noqa: E731
    jf = lambda path, x, y: (jax_tu.keystr(path), x + y)  # noqa: E731
    ours = nt.tree_map_with_path(f, tree, tree)
    assert ours == jax_tu.tree_map_with_path(jf, tree, tree)
    assert ours["a"] == [("['a'][0]", 2), (("['a'][1][0]", 4), ("['a'][1][1]", 6))]
    assert nt.tree_map_with_path(lambda p, x: x, None) is None
    with pytest.raises(ValueError, match="tree_map_with_path tree"):
        nt.tree_map_with_path(lambda p, x, y: x, [1], [1, 2])


# ------------------------------------------------------------------ key paths

PATH_TREES = [
    {"a": [1, (2, 3)], "b": P(4, 5), "c": Point(6, 7)},
    [collections.OrderedDict(b=1, a=2), collections.defaultdict(int, b=3, a=4)],
    (Params(w=1, b=[2, 3]), Layer(kernel=4, bias=(5,), name="n")),
    {1: Box([1, 2], "x"), 0: Pair(3, 4)},
    5,
    None,
    [None, {}, ()],
]


@pytest.mark.parametrize("tree", PATH_TREES, ids=[str(i) for i in range(len(PATH_TREES))])
def test_flatten_with_path_matches_jax(tree):
    pairs, treedef = nt.tree_flatten_with_path(tree)
    jpairs, jtreedef = jax_tu.tree_flatten_with_path(tree)
    assert repr(treedef) == repr(jtreedef)
    assert treedef == nt.tree_structure(tree)
    assert [repr(p) for p, _ in pairs] == [repr(p) for p, _ in jpairs]
    assert [nt.keystr(p) for p, _ in pairs] == [jax_tu.keystr(p) for p, _ in jpairs]
    assert [nt.keystr(p, simple=True, separator="/") for p, _ in pairs] == \
        [jax_tu.keystr(p, simple=True, separator="/") for p, _ in jpairs]
    assert [x for _, x in pairs] == nt.tree_leaves(tree)
    assert nt.tree_leaves_with_path(tree) == pairs


def test_flatten_with_path_values():
    pairs, _ = nt.tree_flatten_with_path({"a": [1, (2, 3)], "b": P(4, 5), "c": Point(6, 7)})
    assert [(nt.keystr(p), x) for p, x in pairs] == [
        ("['a'][0]", 1), ("['a'][1][0]", 2), ("['a'][1][1]", 3), ("['b'].x", 4), ("['b'].y", 5),
        ("['c'][<flat index 0>]", 6), ("['c'][<flat index 1>]", 7)]
    assert pairs[0][0] == (nt.DictKey("a"), nt.SequenceKey(0))
    assert pairs[3][0] == (nt.DictKey("b"), nt.GetAttrKey("x"))
    assert pairs[5][0] == (nt.DictKey("c"), nt.FlattenedIndexKey(0))
    p, _ = nt.tree_flatten_with_path(Params(w=1, b=2))
    assert [nt.keystr(k) for k, _ in p] == [".w", ".b"]


def test_flatten_with_path_is_leaf():
    tree = [Named(1, (2, 3)), {"k": (4, 5)}]
    is_tuple = lambda x: isinstance(x, tuple)  # noqa: E731
    pairs, treedef = nt.tree_flatten_with_path(tree, is_leaf=is_tuple)
    jpairs, jtreedef = jax_tu.tree_flatten_with_path(tree, is_leaf=is_tuple)
    assert [(nt.keystr(p), x) for p, x in pairs] == [(jax_tu.keystr(p), x) for p, x in jpairs]
    assert [(nt.keystr(p), x) for p, x in pairs] == [("[0].u", 1), ("[0].v", (2, 3)), ("[1]['k']", (4, 5))]
    assert repr(treedef) == repr(jtreedef)
    by_path = lambda path, x: len(path) == 2  # noqa: E731
    pairs, _ = nt.tree_flatten_with_path(tree, is_leaf=by_path, is_leaf_takes_path=True)
    jpairs, _ = jax_tu.tree_flatten_with_path(tree, is_leaf=by_path, is_leaf_takes_path=True)
    assert [(nt.keystr(p), x) for p, x in pairs] == [(jax_tu.keystr(p), x) for p, x in jpairs]


def test_key_classes():
    assert str(nt.SequenceKey(0)) == str(jax_tu.SequenceKey(0)) == "[0]"
    assert str(nt.DictKey("a")) == str(jax_tu.DictKey("a")) == "['a']"
    assert str(nt.GetAttrKey("name")) == str(jax_tu.GetAttrKey("name")) == ".name"
    assert str(nt.FlattenedIndexKey(0)) == str(jax_tu.FlattenedIndexKey(0)) == "[<flat index 0>]"
    for cls, arg in [("SequenceKey", 1), ("DictKey", "k"), ("GetAttrKey", "n"), ("FlattenedIndexKey", 2)]:
        assert repr(getattr(nt, cls)(arg)) == repr(getattr(jax_tu, cls)(arg))
    assert nt.SequenceKey(1) == nt.SequenceKey(1) and hash(nt.DictKey("a")) == hash(nt.DictKey("a"))
    assert nt.SequenceKey(0) != nt.FlattenedIndexKey(0)
    with pytest.raises(AttributeError):
        nt.SequenceKey(0).idx = 1
    assert nt.keystr(()) == ""
    path = (nt.SequenceKey(0), nt.DictKey("a"), nt.GetAttrKey("x"), nt.FlattenedIndexKey(3))
    jpath = (jax_tu.SequenceKey(0), jax_tu.DictKey("a"), jax_tu.GetAttrKey("x"), jax_tu.FlattenedIndexKey(3))
    assert nt.keystr(path) == jax_tu.keystr(jpath) == "[0]['a'].x[<flat index 3>]"
    assert nt.keystr(path, simple=True, separator="/") == jax_tu.keystr(jpath, simple=True, separator="/")


# ------------------------------------------------------------------ registration

def test_register_pytree_node_custom_class():
    tree = [Point(1, {"b": 2, "a": 3}), Point(None, (4,))]
    leaves, treedef = nt.tree_flatten(tree)
    assert leaves == [1, 3, 2, 4] == jax_tu.tree_leaves(tree)
    assert repr(treedef) == "PyTreeDef([CustomNode(Point[('x', 'y')], [*, {'a': *, 'b': *}]), " \
                            "CustomNode(Point[('x', 'y')], [None, (*,)])])"
    assert nt.tree_unflatten(treedef, [10, 30, 20, 40]) == [Point(10, {"a": 30, "b": 20}), Point(None, (40,))]
    assert nt.tree_map(lambda x: -x, Point(1, 2)) == Point(-1, -2)
    assert nt.tree_leaves(SubPoint(1, 2))[0].__class__ is SubPoint  # subclasses are leaves


def test_register_pytree_node_class_and_keys_classes():
    assert nt.tree_leaves(Pair(1, Pair(2, 3))) == [1, 2, 3]
    assert nt.tree_map(str, Pair(1, 2)) == Pair("1", "2")
    tree = {"n": Named(1, [2])}
    pairs, treedef = nt.tree_flatten_with_path(tree)
    jpairs, jtreedef = jax_tu.tree_flatten_with_path(tree)
    assert [repr(p) for p, _ in pairs] == [repr(p) for p, _ in jpairs]
    assert repr(treedef) == repr(jtreedef) == "PyTreeDef({'n': CustomNode(Named[named], [*, [*]])})"
    assert nt.tree_unflatten(treedef, [5, 6]) == {"n": Named(5, [6])}


def test_register_dataclass_data_and_meta_fields():
    p = Params(w=W1, b=(B1, 2), act="tanh")
    leaves, treedef = nt.tree_flatten(p)
    assert leaves[0] is W1 and leaves[1] is B1 and leaves[2] == 2
    assert repr(treedef) == repr(jax_tu.tree_structure(p)) == "PyTreeDef(CustomNode(Params[('tanh',)], [*, (*, *)]))"
    assert nt.tree_unflatten(treedef, [1, 2, 3]) == Params(1, (2, 3), "tanh")
    assert nt.tree_structure(Params(1, 2, "relu")) != nt.tree_structure(Params(1, 2, "tanh"))
    layer = Layer(kernel=1, bias=2, name="dense", cache="dropped")
    leaves, treedef = nt.tree_flatten(layer)
    assert leaves == [1, 2] and repr(treedef) == repr(jax_tu.tree_structure(layer))
    assert nt.tree_unflatten(treedef, [3, 4]) == Layer(3, 4, "dense", None)
    assert nt.tree_map(lambda x: x * 2, Params(1, 2)) == Params(2, 4, "relu")


def test_register_dataclass_as_decorator():
    @nt.register_dataclass
    @dataclasses.dataclass
    class Opt:
        lr: float
        steps: int = dataclasses.field(default=3, metadata={"static": True})

    @functools.partial(nt.register_dataclass, data_fields=["a"], meta_fields=["b"])
    @dataclasses.dataclass
    class Explicit:
        a: int
        b: int

    assert nt.tree_leaves(Opt(0.1)) == [0.1] and nt.tree_structure(Opt(0.1)).node_data() == (Opt, (3,))
    assert nt.tree_leaves(Explicit(1, 2)) == [1]
    assert nt.tree_unflatten(nt.tree_structure(Explicit(1, 2)), [7]) == Explicit(7, 2)


def test_register_dataclass_errors():
    @dataclasses.dataclass
    class D:
        a: int
        b: int

    with pytest.raises(ValueError, match="Missing fields"):
        nt.register_dataclass(D, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match="overlap"):
        nt.register_dataclass(D, data_fields=["a", "b"], meta_fields=["a"])
    with pytest.raises(TypeError):
        nt.register_dataclass(D, data_fields=["a", "b"])
    with pytest.raises(TypeError):
        nt.register_dataclass(Point)


def test_registering_a_type_already_seen_as_a_leaf():
    class Late:
        def __init__(self, v):
            self.v = v

    assert repr(nt.tree_structure([Late(1)])) == "PyTreeDef([*])"
    nt.register_pytree_node(Late, lambda o: ((o.v,), None), lambda aux, ch: Late(*ch))
    assert repr(nt.tree_structure([Late(1)])) == "PyTreeDef([CustomNode(Late[None], [*])])"
    assert nt.tree_leaves([Late((1, 2))]) == [1, 2]


def test_plain_dataclass_is_a_leaf():
    assert nt.tree_leaves([Plain(1)]) == [Plain(1)]
    assert repr(nt.tree_structure(Plain(1))) == "PyTreeDef(*)"


def test_register_static():
    tree = [StaticStr("add"), 1]
    leaves, treedef = nt.tree_flatten(tree)
    assert leaves == [1]
    assert nt.tree_unflatten(treedef, [2]) == ["add", 2]
    assert nt.tree_structure([StaticStr("add")]) != nt.tree_structure([StaticStr("sub")])


@pytest.mark.parametrize("typ", [Point, Params, StaticStr, list, tuple, dict, type(None), collections.OrderedDict])
def test_duplicate_registration_raises(typ):
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        nt.register_pytree_node(typ, lambda x: ((), None), lambda a, c: None)
    with pytest.raises(ValueError):
        jax_tu.register_pytree_node(typ, lambda x: ((), None), lambda a, c: None)


def test_registering_a_namedtuple_overrides_the_builtin_handling():
    R = collections.namedtuple("R", "p q")
    assert repr(nt.tree_structure(R(1, 2))) == "PyTreeDef(CustomNode(namedtuple[R], [*, *]))"
    for tu in (nt, jax_tu):
        tu.register_pytree_node(R, lambda r: ((r.p,), r.q), lambda q, c: R(c[0], q))
    assert repr(nt.tree_structure(R(1, 2))) == repr(jax_tu.tree_structure(R(1, 2))) == \
        "PyTreeDef(CustomNode(R[2], [*]))"
    assert nt.tree_unflatten(nt.tree_structure(R(1, 2)), [5]) == R(5, 2)


# ------------------------------------------------------------------ transpose, reduce, all

def test_tree_transpose_matches_jax():
    outer, inner = nt.tree_structure([0, 0]), nt.tree_structure((0, 0, 0))
    tree = [(1, 2, 3), (4, 5, 6)]
    expected = jax_tu.tree_transpose(jax_tu.tree_structure([0, 0]), jax_tu.tree_structure((0, 0, 0)), tree)
    assert nt.tree_transpose(outer, inner, tree) == expected == ([1, 4], [2, 5], [3, 6])
    assert nt.tree_transpose(outer, None, tree) == expected
    d = {"a": {"x": 1, "y": 2}, "b": {"x": 3, "y": 4}}
    res = nt.tree_transpose(nt.tree_structure({"a": 0, "b": 0}), nt.tree_structure({"x": 0, "y": 0}), d)
    assert res == {"x": {"a": 1, "b": 3}, "y": {"a": 2, "b": 4}}
    with pytest.raises(TypeError, match="Mismatch"):
        nt.tree_transpose(outer, nt.tree_structure((0, 0)), tree)


def test_tree_reduce_and_tree_all():
    tree = [1, (2, {"a": 3, "b": None}), P(4, 5)]
    assert nt.tree_reduce(operator.add, tree) == jax_tu.tree_reduce(operator.add, tree) == 15
    assert nt.tree_reduce(operator.add, tree, 100) == 115
    assert nt.tree_reduce(lambda acc, x: acc + [x], tree, []) == [1, 2, 3, 4, 5]
    assert nt.tree_reduce(operator.add, [], 7) == 7
    with pytest.raises(TypeError):
        nt.tree_reduce(operator.add, [])
    assert nt.tree_reduce(lambda a, b: a + len(b), [(1, 2), (3,)], 0, is_leaf=lambda x: isinstance(x, tuple)) == 3
    assert nt.tree_all([True, (1, {"a": "x"})]) is True
    assert nt.tree_all([True, (0, {"a": "x"})]) is False
    assert nt.tree_all([None, ()]) is True == jax_tu.tree_all([None, ()])


@pytest.mark.parametrize("items", [[1, 2], [[1]], [None], [], ["s", W1, Plain(1)], [(), {}]],
                         ids=["ints", "nested", "none", "empty", "objects", "empty-containers"])
def test_all_leaves_matches_jax(items):
    assert nt.all_leaves(items) == jax_tu.all_leaves(items)
    is_none = lambda x: x is None  # noqa: E731
    assert nt.all_leaves(items, is_leaf=is_none) == jax_tu.all_leaves(items, is_leaf=is_none)


# ------------------------------------------------------------------ the module itself

def test_tree_util_does_not_import_jax():
    root = pathlib.Path(nt.__file__).parent
    for name in ("tree_util.py", "_treedef.py", "_tree_keys.py"):
        for node in ast.walk(ast.parse((root / name).read_text())):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] == "jax" for a in node.names), name
            elif isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] != "jax", name


def test_public_api_is_documented():
    for name in nt.__all__:
        obj = getattr(nt, name)
        assert obj.__doc__ and obj.__doc__.strip(), name
