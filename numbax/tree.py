"""``numbax.tree``: JAX's ``jax.tree`` namespace, the pytree functions of ``numbax.tree_util`` by short names.

``numbax.tree.map(f, params)`` is ``tree_util.tree_map(f, params)`` (the same function, so it also runs at
compile time inside compiled code, as ``tree_util``'s functions do).
"""
from numbax.tree_util import (tree_all as all, tree_flatten as flatten,  # noqa: F401  (the names JAX exports)
                              tree_flatten_with_path as flatten_with_path, tree_leaves as leaves,
                              tree_leaves_with_path as leaves_with_path, tree_map as map,
                              tree_map_with_path as map_with_path, tree_reduce as reduce,
                              tree_structure as structure, tree_transpose as transpose, tree_unflatten as unflatten)

__all__ = ["all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map", "map_with_path", "reduce",
           "structure", "transpose", "unflatten"]
