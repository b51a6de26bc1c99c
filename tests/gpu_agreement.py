"""The check the GPU backend's tests share: a result left on the device that agrees with the CPU backend's."""
import numpy as np

import numbax
from numbax import tree_util


def agree_on_device(got, expected):
    """``got`` (a GPU result) holds device arrays (numbers on the host), and agrees with ``expected`` in
    structure, shapes, dtypes and values (rtol 1e-12, 1e-5 for float32)."""
    for leaf in tree_util.tree_leaves(got):
        assert not isinstance(leaf, np.ndarray) or leaf.ndim == 0, f"a result on the host: {leaf!r}"
    got = numbax.device_get(got)
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected)
    for e, g in zip(tree_util.tree_leaves(expected), tree_util.tree_leaves(got)):
        e, g = np.asarray(e), np.asarray(g)
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(g, e, rtol=1e-5 if e.dtype == np.float32 else 1e-12, atol=1e-300)
