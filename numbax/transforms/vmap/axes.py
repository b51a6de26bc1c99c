"""JAX's rules for ``in_axes`` and ``out_axes``: which axis of which leaf is mapped, and JAX's errors.

The same rules serve a call made from Python (concrete arrays, checked before
any compiled code runs) and a call inside compiled code (``Dyn`` placeholders,
checked while specializing): both describe each leaf by its rank, where known.

    >>> import numpy as np
    >>> arg_axes = positional_axes((0, None), 2)
    >>> [axis for _, axis in leaf_axes(arg_axes, {}, [np.zeros(3), {"w": np.ones(2)}], {})]
    [0, None]
"""
from __future__ import annotations

import collections
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from numbax import tree_util
from numbax._treedef import _Mismatch, _flatten_up_to, _structure_error
from numbax.backends.cuda.placement import is_device_array

_SPEC_MESSAGE = ("vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
                 "arguments passed to the function")


def _is_none(x: Any) -> bool:
    return x is None


def _is_axis(x: Any) -> bool:
    return x is None or type(x) is int


def canonical_in_axes(in_axes: Any) -> Any:
    """``in_axes`` as JAX keeps it (a list becomes a tuple); ``TypeError`` for a spec JAX refuses."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError(f"{_SPEC_MESSAGE}, but got {in_axes}.")
    if not all(_is_axis(leaf) for leaf in tree_util.tree_leaves(in_axes, is_leaf=_is_none)):
        raise TypeError(f"vmap in_axes must be an int, None, or (nested) container with those types as leaves, "
                        f"but got {in_axes}.")
    return in_axes


def check_out_axes(out_axes: Any) -> Any:
    """``out_axes`` unchanged; ``TypeError`` when a leaf is neither an int nor None."""
    if not all(_is_axis(leaf) for leaf in tree_util.tree_leaves(out_axes, is_leaf=_is_none)):
        raise TypeError(f"vmap out_axes must be an int, None, or (nested) container with those types as leaves, "
                        f"but got {out_axes}.")
    return out_axes


def positional_axes(in_axes: Any, count: int) -> tuple:
    """One axis spec per positional argument of a call passing ``count`` of them."""
    if isinstance(in_axes, tuple):
        if len(in_axes) != count:
            raise ValueError(f"{_SPEC_MESSAGE}, but got len(in_axes)={len(in_axes)}, len(args)={count}")
        return in_axes
    return (in_axes,) * count


def broadcast_prefix(name: str, axes: Any, tree: Any, is_leaf=None) -> List[Tuple[Any, Any]]:
    """``(leaf, axis)`` for every leaf of ``tree``, ``axes`` being a prefix of its structure (JAX's error if not)."""
    axis_leaves, axis_treedef = tree_util.tree_flatten(axes, is_leaf=_is_none)
    subtrees: List[Any] = []
    try:
        _flatten_up_to(axis_treedef._spec, tree, subtrees)
    except _Mismatch as exc:
        details = _structure_error(name, tree, exc).args[0]
        raise ValueError(f"{name} specification must be a tree prefix of the corresponding value; \n"
                         f"  Mismatch details (1 found):\n  {details}") from None
    return [(leaf, axis) for axis, subtree in zip(axis_leaves, subtrees)
            for leaf in tree_util.tree_leaves(subtree, is_leaf=is_leaf)]


def leaf_axes(arg_axes: Sequence[Any], kwarg_axes: Dict[str, Any], args: Sequence[Any], kwargs: Dict[str, Any],
              is_leaf=None) -> List[Tuple[Any, Optional[int]]]:
    """``(leaf, axis)`` for every leaf of ``(args, kwargs)`` in flattening order."""
    pairs = broadcast_prefix("vmap in_axes", tuple(arg_axes), tuple(args), is_leaf)
    kwargs_in_order = {k: kwargs[k] for k in sorted(kwargs)}
    axes_in_order = {k: kwarg_axes[k] for k in sorted(kwargs)}
    return pairs + broadcast_prefix("vmap in_axes", axes_in_order, kwargs_in_order, is_leaf)


def check_rank(axis: int, ndim: int, shape: Optional[tuple] = None) -> None:
    """JAX's ``ValueError`` when a leaf of rank ``ndim`` has no axis ``axis``."""
    if -ndim <= axis < ndim:
        return
    min_rank = axis + 1 if axis >= 0 else -axis
    seen = f" (its shape is {shape})" if shape is not None else ""
    raise ValueError(f"vmap was requested to map its argument along axis {axis}, which implies that its rank "
                     f"should be at least {min_rank}, but is only {ndim}{seen}")


def no_mapped_axis(has_arguments: bool) -> ValueError:
    """JAX's error for a call that maps nothing and gives no ``axis_size``."""
    if not has_arguments:
        return ValueError("vmap wrapped function must be passed at least one argument containing an array or "
                          "axis_size must be specified")
    return ValueError("vmap must have at least one non-None value in in_axes or axis_size must be specified")


def _type_of(leaf: Any) -> str:
    value = leaf if is_device_array(leaf) else np.asarray(leaf)
    return f"{np.dtype(value.dtype)}[{','.join(map(str, value.shape))}]"


def inconsistent_sizes(described: List[Tuple[str, Any, int, int]], axis_size: Optional[int]) -> ValueError:
    """JAX's error for mapped axes of different lengths; ``described`` holds (what, leaf, axis, size)."""
    counts = collections.Counter(size for _, _, _, size in described).most_common()
    lines = ["vmap got inconsistent sizes for array axes to be mapped:"]
    if axis_size is not None:
        lines.append(f"  * the `axis_size` argument was {axis_size};")
    for rank, (size, count) in enumerate(counts):
        what, leaf, axis, _ = next(d for d in described if d[3] == size)
        example = f"axis {axis} of {what} of type {_type_of(leaf)}"
        if count == 1:
            lines.append(f"  * one axis had size {size}: {example};")
        else:
            lines.append(f"  * {'most' if rank == 0 else 'some'} axes ({count} of them) had size {size}, "
                         f"e.g. {example};")
    return ValueError("\n".join(lines)[:-1])


def check_call(params: Sequence[str], pairs: List[Tuple[Any, Optional[int]]], args: Sequence[Any],
               kwargs: Dict[str, Any], axis_size: Optional[int]) -> None:
    """JAX's checks of a call from Python on its concrete arguments: ranks, one common size, something mapped.

    ``pairs`` is ``leaf_axes`` of the call; ``params`` names the positional arguments in messages.
    """
    described = []
    paths = [path for path, _ in tree_util.tree_flatten_with_path((tuple(args), kwargs))[0]]
    for path, (leaf, axis) in zip(paths, pairs):
        if axis is None:
            continue
        if not isinstance(leaf, (np.ndarray, np.generic, bool, int, float, complex)) and not is_device_array(leaf):
            raise TypeError(f"Argument {leaf!r} of type {type(leaf)} is not an array or a number: vmap cannot map "
                            "it (pass it with in_axes=None, or mark it static)")
        shape = tuple(leaf.shape) if is_device_array(leaf) else np.shape(leaf)
        check_rank(axis, len(shape), shape)
        position = path[1]
        if path[0].idx == 0:
            what = f"argument {params[position.idx]}" if position.idx < len(params) else f"args[{position.idx}]"
        else:
            what = f"kwargs[{position.key!r}]"
        described.append((what + tree_util.keystr(tuple(path[2:])), leaf, axis, shape[axis]))
    sizes = {size for _, _, _, size in described} | ({axis_size} if axis_size is not None else set())
    if not sizes:
        raise no_mapped_axis(bool(args or kwargs))
    if len(sizes) > 1:
        raise inconsistent_sizes(described, axis_size)
    if 0 in sizes:
        from numbax.runtime.batching import EMPTY

        raise ValueError(EMPTY)
