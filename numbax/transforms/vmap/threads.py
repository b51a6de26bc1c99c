"""The loop a ``vmap`` call becomes for the GPU backend: every example in one loop, one example per thread.

For ``vmap(f, in_axes=(0, None))(x, y)`` of a ``f`` returning a number, the specializer emits::

    batch = rt.batch_size(x.shape[0])
    out = np.empty(batch, dtype=np.float64)        # the dtype of f's result, inferred while specializing
    for i in range(batch):                          # anno.Key.PER_THREAD
        <f specialized for x[i], y>
        out[i] = result

and the GPU lowering makes the loop one kernel, each thread running the examples of a grid-stride loop
(``backends.cuda.lower.threads``). Unlike the CPU's loop (``loop``), no example runs first to give the
output shapes: each example's outputs are numbers, whose dtypes the specializer knows. A function returning
arrays per example, or an output that ``out_axes=None`` leaves unbatched, is refused here.

Where an example's arguments hold arrays (a row of a mapped matrix, a vector all examples share), whose sizes
are known only at run time, the examples are array code: the CPU's loop (``loop``) runs them in turn, and the
GPU lowering makes each one's array statements kernels, as it does for any host loop (not where a collective
may name the vmap's axis or one around it: those stay refused).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import gast
import numpy as np

from numbax import tree_util
from numbax.ast_passes import anno
from numbax.ast_passes.naming import leaf_name
from numbax.ast_passes.specialize.materialize import name_node
from numbax.ast_passes.specialize.values import AVal, Dyn, is_static_scalar
from numbax.errors import NumbaxDeviceError
from numbax.lax import named_axes
from numbax.origin import Origin
from numbax.transforms.vmap import axes, loop

_HINT = "run it on the CPU backend: vmap with NumPy arguments (numbax.device_get(x) brings device arrays back)."


def refuse(spec, node, fun, what: str) -> None:
    """Raise the GPU backend's refusal of ``what`` at the user's ``node`` (for a top-level vmap, which the
    user wrote no line of, at the ``def`` line of the function mapped)."""
    raise NumbaxDeviceError(f"{what} is not supported by the GPU backend yet", spec.origin(node) or _def_line(fun),
                            hint=_HINT)


def _def_line(fun) -> Optional[Origin]:
    code = getattr(getattr(fun, "fun", fun), "__code__", None)  # a numbax transformation holds its function
    if code is None:
        return None
    return Origin.of_code(code)


def _dtype(spec, node, fun, path, leaf: Any) -> np.dtype:
    """The dtype of an output leaf, which must be a number of a known dtype."""
    aval = leaf.aval if isinstance(leaf, Dyn) else AVal.of(leaf) if is_static_scalar(leaf) else None
    where = f" (output{tree_util.keystr(path) if path else ''})"
    if aval is None or aval.dtype is None:
        refuse(spec, node, fun, f"vmap of a function whose output{where} has a dtype known only at run time")
    if aval.ndim:
        refuse(spec, node, fun, f"vmap of a function returning an array per example{where}: one thread runs one "
                           "example, and only numbers")
    return np.dtype(aval.dtype)


def emit(spec, node, fun, args: List[Any], kwargs: Dict[str, Any], arg_axes: Sequence[Any],
         kwarg_axes: Dict[str, Any], out_axes: Any, axis_size: Optional[int], axis_name: Any = None) -> Any:
    """Emit the loop over all examples for ``fun(*args, **kwargs)`` at ``node``; the call's value: for each
    batched output leaf, a 1-d array of the examples' numbers. Its axis is bound while ``fun`` is specialized
    (``named_axes.PER_THREAD``), so that a collective in ``fun`` is refused at its line."""
    if _arrays_per_example(args, kwargs, arg_axes, kwarg_axes) and not _collectives_may_name(axis_name):
        return loop.emit(spec, node, fun, args, kwargs, arg_axes, kwarg_axes, out_axes, axis_size, axis_name)
    leaves, structure = loop.arguments(spec, node, args, kwargs, arg_axes, kwarg_axes)
    # axes counted from the front where the rank is known: ``x[i]``, which one thread reads, not ``x[..., i]``
    leaves = [(leaf, axis if axis is None else loop.normal_axis(axis, leaf)) for leaf, axis in leaves]
    mapped = [(leaf, axis) for leaf, axis in leaves if axis is not None]
    batch = loop.batch_of(spec, node, mapped, axis_size, bool(leaves))
    examples = loop.Examples(spec, leaves, structure)
    index = spec.namer.new("i")
    saved, spec.block = spec.block, []
    spec.runtime_depth += 1
    try:
        with named_axes.bound(named_axes.UNNAMED if axis_name is None else axis_name, batch, named_axes.PER_THREAD):
            result = spec.call_value(node, fun, *examples.at(Dyn(name_node(index), loop.INDEX)))
        outputs, out_treedef = spec.leaves_with_paths(result)
        try:
            out_pairs = axes.broadcast_prefix("vmap out_axes", out_axes, result, is_leaf=loop.is_dyn)
        except ValueError as exc:
            loop.fail(spec, node, exc)
        loop.check_outputs(spec, node, out_pairs)
        buffers = [_store(spec, node, fun, index, path, leaf, axis)
                   for (path, leaf), (_, axis) in zip(outputs, out_pairs)]
        body = spec.block
    finally:
        spec.block = saved
        spec.runtime_depth -= 1
    for entry in buffers:
        if entry is not None:
            spec.emit_assign(entry[0], spec.call_value(node, np.empty, [batch], {"dtype": entry[1].type}))
    trips = gast.Call(func=name_node("range"), args=[spec.materialize(batch)], keywords=[])
    per_thread = gast.For(target=name_node(index, gast.Store()), iter=trips, body=body, orelse=[],
                          type_comment=None)
    anno.setanno(per_thread, anno.Key.BATCH_LOOP, True)  # its invariants are hoisted: computed once, on the host
    anno.setanno(per_thread, anno.Key.PER_THREAD, True)
    spec.emit(per_thread)
    results = [leaf if entry is None else Dyn(name_node(entry[0]), AVal(entry[1], 1))
               for (_, leaf), entry in zip(outputs, buffers)]
    return tree_util.tree_unflatten(out_treedef, results)


def _collectives_may_name(axis_name: Any) -> bool:
    """Whether a collective in the mapped function may name this ``vmap``'s axis or an enclosing one (a
    ``pmap`` over GPUs): those stay refused on the GPU backend, where one example is one thread."""
    try:
        named_axes.innermost()
    except IndexError:  # no axis bound around this vmap
        return axis_name is not None
    return True


def _arrays_per_example(args: List[Any], kwargs: Dict[str, Any], arg_axes, kwarg_axes) -> bool:
    """Whether an example's arguments hold an array of numbers, which one thread cannot hold (its size is known
    only at run time): a row of a mapped matrix, a vector shared by all examples; not of unsigned integers, the
    words of ``numbax.random`` keys, which one thread reads (``backends.cuda.lower.keys``). Then the examples
    run in turn, as on the CPU, each one's array code as kernels."""
    try:
        pairs = axes.leaf_axes(arg_axes, kwarg_axes, args, kwargs, is_leaf=loop.is_dyn)
    except ValueError:
        return False  # ``loop.arguments`` raises JAX's error
    for leaf, axis in pairs:
        aval = leaf.aval if isinstance(leaf, Dyn) else AVal.of(leaf) if isinstance(leaf, np.ndarray) else None
        if aval is not None and aval.dtype is not None and aval.dtype.kind in "bifc" and \
                aval.ndim - (axis is not None) > 0:
            return True
    return False


def _store(spec, node, fun, index: str, path: tuple, leaf: Any,
           axis: Optional[int]) -> Optional[Tuple[str, np.dtype]]:
    """``out[i] = leaf`` in the example's body for a batched output leaf; its buffer's name and dtype."""
    if axis is None:
        if isinstance(leaf, Dyn):
            refuse(spec, node, fun, "out_axes=None for an output computed per example")
        return None
    dtype = _dtype(spec, node, fun, path, leaf)
    if axis not in (0, -1):
        loop.fail(spec, node, ValueError(f"vmap out_axes {axis} is out of bounds for an output of one number "
                                         "per example (a 1-d array)"))
    buffer = spec.namer.new(leaf_name("out", path))
    spec.emit(gast.Assign(targets=[gast.Subscript(value=name_node(buffer), slice=name_node(index),
                                                  ctx=gast.Store())],
                          value=spec.materialize(leaf), type_comment=None))
    return buffer, dtype
