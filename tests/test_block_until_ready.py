"""``numbax.block_until_ready`` and ``numbax.Array``, as JAX's: the value itself (a pytree), inside compiled
code too."""
import numpy as np

import numbax


def step(x):
    y = numbax.block_until_ready(np.sin(x))
    return y * 2.0


def test_block_until_ready_returns_its_argument():
    tree = {"a": np.ones(2), "b": (1.0, np.zeros(3))}
    assert numbax.block_until_ready(tree) is tree
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(numbax.jit(step)(x), 2 * np.sin(x))
    np.testing.assert_allclose(numbax.grad(lambda v: np.sum(step(v)))(x), 2 * np.cos(x))


def test_array_is_the_type_of_numbax_values():
    assert isinstance(numbax.jit(step)(np.ones(2)), numbax.Array)
