"""``numbax.tree``: JAX's ``jax.tree`` names, against JAX, outside compiled code and inside it."""
import jax
import numpy as np

import numbax

PARAMS = {"w": np.arange(6.0).reshape(2, 3), "b": (np.ones(3), 2.0), "layers": [np.array([1.0, -1.0])]}


def test_the_names_are_jaxs():
    assert set(numbax.tree.__all__) <= set(dir(jax.tree))
    assert {"map", "leaves", "structure", "flatten", "unflatten", "reduce", "transpose", "all"} <= \
        set(numbax.tree.__all__)


def test_results_are_jaxs():
    for got, want in zip(numbax.tree.leaves(numbax.tree.map(lambda x: x * 2, PARAMS)),
                         jax.tree.leaves(jax.tree.map(lambda x: x * 2, PARAMS))):
        np.testing.assert_array_equal(got, np.asarray(want))
    leaves, treedef = numbax.tree.flatten(PARAMS)
    assert len(leaves) == len(jax.tree.leaves(PARAMS)) == treedef.num_leaves
    assert numbax.tree.structure(numbax.tree.unflatten(treedef, leaves)) == treedef
    assert numbax.tree.reduce(lambda a, b: a + np.sum(b), PARAMS, 0.0) == \
        jax.tree.reduce(lambda a, b: a + np.sum(b), PARAMS, 0.0)
    assert numbax.tree.all([True, (1, 2.0)]) and not numbax.tree.all([True, (0, 2.0)])
    paths = [numbax.tree_util.keystr(p) for p, _ in numbax.tree.flatten_with_path(PARAMS)[0]]
    assert paths == [jax.tree_util.keystr(p) for p, _ in jax.tree.flatten_with_path(PARAMS)[0]]
    pairs = [(1, 2), (3, 4)]
    outer, inner = numbax.tree.structure([0, 0]), numbax.tree.structure((0, 0))
    assert numbax.tree.transpose(outer, inner, pairs) == ([1, 3], [2, 4])


def scaled_norm(params, s):
    scaled = numbax.tree.map(lambda x: x * s, params)
    return sum(np.sum(leaf ** 2) for leaf in numbax.tree.leaves(scaled))


def test_inside_compiled_code():
    params = {"w": PARAMS["w"], "b": PARAMS["b"][0]}
    want = sum(np.sum((leaf * 0.5) ** 2) for leaf in jax.tree.leaves(params))
    np.testing.assert_allclose(numbax.jit(scaled_norm, backend="python")(params, 0.5), want)
