"""The loop a ``vmap`` call becomes while specializing: one example per iteration, outputs stacked.

For ``vmap(f, in_axes=(0, None))(x, y)`` the specializer emits, at the call::

    batch = rt.batch_size(x.shape[0])
    <f specialized for x[0], y>                    # the first example gives the output shapes
    out = rt.stack_buffer(first, batch)
    out[0] = first
    for i in range(1, batch):
        <f specialized for x[i], y>
        out[i] = result

and the call's value is ``out`` (``np.moveaxis(out, 0, k)`` for ``out_axes=k``,
the first example's output for ``out_axes=None``). ``f`` is called like any
user function, so ``inline`` places its body in the loop, and ``grad``, a
nested ``vmap`` or ``numbax.random`` inside it need nothing of their own: what
follows sees an ordinary loop of core-subset code. After the transformations,
``optimizations.first_example`` folds the first example into the loop, which then
sizes the outputs on its first iteration: Numba compiles one copy of the body.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import gast
import numpy as np

from numbax import tree_util
from numbax.ast_passes import anno
from numbax.ast_passes import collectives as stages
from numbax.ast_passes import run_time_checks
from numbax.ast_passes.naming import leaf_name
from numbax.ast_passes.specialize.dtypes import WIDEST
from numbax.ast_passes.specialize.materialize import name_node
from numbax.ast_passes.specialize.values import AVal, Dyn, is_static_scalar
from numbax.errors import NumbaxBatchingError
from numbax.lax import named_axes as collective_axes
from numbax.runtime.batching import EMPTY, batch_size
from numbax.runtime.checks import check_devices, check_row
from numbax.runtime.scan import stack_buffer
from numbax.transforms.vmap import axes, dependence

INDEX = AVal(np.dtype(np.int64), 0)


def is_dyn(x: Any) -> bool:
    """Whether ``x`` is a run-time value (a leaf of the pytrees vmap maps and stacks)."""
    return isinstance(x, Dyn)


def fail(spec, node, error: Exception) -> None:
    """Re-raise JAX's ``ValueError`` (or ``TypeError``) about ``vmap`` at the user's line."""
    if isinstance(error, TypeError):
        spec.fail(node, str(error))
    raise NumbaxBatchingError(str(error), spec.origin(node)) from None


def _pinned(spec, value: Any) -> Any:
    """Run-time leaves that are expressions are computed once, before the loop."""
    return tree_util.tree_map(lambda v: spec.snapshot(v) if isinstance(v, Dyn) and v.name is None else v, value,
                              is_leaf=is_dyn)


def _mapped_leaf(spec, node, leaf: Any, axis: int) -> Dyn:
    """A mapped leaf as a run-time value, its axis checked against its rank where that is known."""
    if isinstance(leaf, np.ndarray):
        leaf = Dyn(spec.materialize(leaf), AVal.of(leaf))
    elif not isinstance(leaf, Dyn):
        if not is_static_scalar(leaf):
            spec.fail(node, f"vmap cannot map over a {type(leaf).__name__}",
                      hint="map over arrays; pass other values with in_axes=None.")
        leaf = Dyn(spec.materialize(leaf), AVal.of(leaf))
    if leaf.aval is not None:
        try:
            axes.check_rank(axis, leaf.aval.ndim)
        except ValueError as exc:
            fail(spec, node, exc)
    return leaf


def normal_axis(axis: int, leaf: Dyn) -> int:
    """``axis`` counted from the front when the rank is known (``x.shape[1]`` reads better than ``[-1]``)."""
    return axis % leaf.aval.ndim if leaf.aval is not None and axis < 0 else axis


def _take(spec, leaf: Dyn, axis: int, index: Any) -> Dyn:
    """``leaf`` at ``index`` along ``axis``: ``x[i]``, ``x[:, i]``, ``x[..., i]``."""
    if axis >= 0:
        where = (slice(None),) * axis + (index,)
    else:
        where = (Ellipsis, index) + (slice(None),) * (-axis - 1)
    where = where[0] if len(where) == 1 else where
    aval = AVal(leaf.aval.dtype, leaf.aval.ndim - 1) if leaf.aval is not None else None
    return Dyn(gast.Subscript(value=leaf.expr(), slice=spec.materialize_index(where), ctx=gast.Load()), aval)


def batch_of(spec, node, mapped: List[Tuple[Dyn, int]], axis_size: Optional[int], has_arguments: bool) -> Any:
    """The batch size: ``axis_size`` alone, or ``rt.batch_size`` of the mapped axes' lengths (checked equal)."""
    if not mapped:
        if axis_size is None:
            fail(spec, node, axes.no_mapped_axis(has_arguments))
        if axis_size < 1:
            fail(spec, node, ValueError(EMPTY))
        return axis_size
    sizes = [Dyn(gast.Subscript(value=gast.Attribute(value=leaf.expr(), attr="shape", ctx=gast.Load()),
                                slice=gast.Constant(value=normal_axis(axis, leaf), kind=None), ctx=gast.Load()),
                 INDEX) for leaf, axis in mapped]
    sizes += [axis_size] if axis_size is not None else []
    name = spec.namer.new("batch")
    spec.emit_assign(name, spec.call_value(node, batch_size, sizes, {}))
    return Dyn(name_node(name), INDEX)


class Examples:
    """The arguments of one example: mapped leaves indexed, the others as they are."""

    def __init__(self, spec, leaves: List[Tuple[Any, Optional[int]]], treedef):
        self.spec, self.leaves, self.treedef = spec, leaves, treedef

    def at(self, index: Any) -> Tuple[list, dict]:
        taken = [leaf if axis is None else _take(self.spec, leaf, axis, index) for leaf, axis in self.leaves]
        args, kwargs = tree_util.tree_unflatten(self.treedef, taken)
        return list(args), kwargs


def check_outputs(spec, node, pairs) -> None:
    for leaf, _ in pairs:
        if not (isinstance(leaf, (Dyn, np.ndarray)) or is_static_scalar(leaf)):
            spec.fail(node, f"a vmapped function cannot return a {type(leaf).__name__}",
                      hint="return arrays, numbers, or containers of them.")


def _check_unbatched(spec, node, start: int, mapped: Sequence[Dyn], first: Any, out_pairs) -> None:
    """JAX's error for ``out_axes=None`` on an output that depends on a mapped input."""
    paths = tree_util.tree_flatten_with_path(first, is_leaf=is_dyn)[0]
    unbatched = [(path, leaf) for (path, leaf), (_, axis) in zip(paths, out_pairs)
                 if axis is None and isinstance(leaf, Dyn)]
    if not unbatched:
        return
    helpers = {h.name: h for h in spec.builder.helpers}
    tainted = dependence.tainted_after(spec.block[start:], {leaf.name for leaf in mapped}, helpers)
    for path, leaf in unbatched:
        if {n.id for n in gast.walk(leaf.node) if isinstance(n, gast.Name)} & tainted:
            fail(spec, node, ValueError(f"at vmap out_axes{tree_util.keystr(path)}, got axis spec None "
                                        "but output was batched on axis 0"))


def _store(spec, buffer: str, index: Any, value: Any) -> None:
    spec.emit(gast.Assign(targets=[gast.Subscript(value=name_node(buffer), slice=spec.materialize(index),
                                                  ctx=gast.Store())],
                          value=spec.materialize(value), type_comment=None))


def check_stacked(spec, node, fun: Callable, rows: str, value: Any) -> None:
    """``rt.check_row(rows, value, where)`` before ``value``, an array, is stored into a row of ``rows``: where
    its shape differs from the first example's, NumPy's assignment would broadcast it (``example_checks``
    drops the check where symbolic shapes prove the shapes equal), but in an ``unchecked_source`` (a
    Jacobian's sweep of a basis, whose every example is one shape by construction)."""
    aval = value.aval if isinstance(value, Dyn) else AVal.of(value)
    origin = spec.origin(node)
    if (aval is None or aval.ndim > 0) and (origin is None or run_time_checks.checked(origin)):
        code = getattr(inspect.unwrap(fun), "__code__", None)
        where = origin.position() if origin is not None else \
            f"{code.co_filename}:{code.co_firstlineno}:0" if code is not None else ""  # the call's, or the def's
        spec.emit(gast.Expr(value=spec.call_value(node, check_row, [Dyn(name_node(rows)), value, where], {}).node))


def _stacked_aval(leaf: Any) -> Optional[AVal]:
    aval = leaf.aval if isinstance(leaf, Dyn) else AVal.of(leaf)
    return None if aval is None else AVal(aval.dtype, aval.ndim + 1)


def arguments(spec, node, args: List[Any], kwargs: Dict[str, Any], arg_axes: Sequence[Any],
               kwarg_axes: Dict[str, Any]) -> Tuple[List[Tuple[Any, Optional[int]]], Any]:
    """Each leaf of the call's arguments with its axis (mapped ones as checked run-time values), and the
    structure of ``(args, kwargs)``."""
    args, kwargs = _pinned(spec, list(args)), _pinned(spec, dict(kwargs))
    try:
        pairs = axes.leaf_axes(arg_axes, kwarg_axes, args, kwargs, is_leaf=is_dyn)
    except ValueError as exc:
        fail(spec, node, exc)
    leaves = [(leaf, None) if axis is None else (_mapped_leaf(spec, node, leaf, axis), axis) for leaf, axis in pairs]
    return leaves, tree_util.tree_structure((tuple(args), kwargs), is_leaf=is_dyn)


def _buffers(spec, node, outputs, out_pairs, batch: Any) -> List[Optional[str]]:
    """For each batched output leaf, a buffer holding the first example's value; None for unbatched ones."""
    buffers: List[Optional[str]] = []
    for (path, leaf), (_, axis) in zip(outputs, out_pairs):
        if axis is None:
            buffers.append(None)
            continue
        if isinstance(leaf, Dyn):  # the first example's output, named for what it is
            name = spec.namer.new(leaf_name("first", path))
            spec.emit_assign(name, leaf)
            leaf = Dyn(name_node(name), leaf.aval)
        buffer = spec.namer.new(leaf_name("out", path))
        spec.emit_assign(buffer, spec.call_value(node, stack_buffer, [leaf, batch], {}))
        _store(spec, buffer, 0, leaf)
        buffers.append(buffer)
    return buffers


def _result(spec, node, leaf: Any, axis: Optional[int], buffer: Optional[str]) -> Any:
    """One output leaf of the call: the stacked buffer, its batch axis moved to ``axis``."""
    if buffer is None:
        return leaf
    if axis == 0:
        return Dyn(name_node(buffer), _stacked_aval(leaf))
    moved = spec.call_value(node, np.moveaxis, [Dyn(name_node(buffer)), 0, axis], {})
    return Dyn(moved.node, _stacked_aval(leaf))


def emit(spec, node, fun: Callable, args: List[Any], kwargs: Dict[str, Any], arg_axes: Sequence[Any],
         kwarg_axes: Dict[str, Any], out_axes: Any, axis_size: Optional[int], axis_name: Any = None,
         devices: Optional[Tuple[int, bool]] = None, transport: str = "batch") -> Any:
    """Emit the batched loop for ``fun(*args, **kwargs)`` at ``node``; the call's value (a pytree).

    With an ``axis_name``, the axis is bound while ``fun`` is specialized; where a collective runs over it,
    the first example's code is dropped and one loop over every example is written instead, for the
    ``collectives`` pass to cut into stages (``_staged``). ``devices`` (``pmap``'s: how many, and whether
    they were passed) are checked against the batch at run time (``rt.check_devices``); across processes
    (``transport`` ``"mpi"``), the batch is this process's shards of the axis (``pmap.mpi_shards``); on threads
    (``"threads"``), one shard (``pmap.thread_shards``)."""
    leaves, structure = arguments(spec, node, args, kwargs, arg_axes, kwarg_axes)
    mapped = [(leaf, axis) for leaf, axis in leaves if axis is not None]
    batch = batch_of(spec, node, mapped, axis_size, bool(leaves))
    size, first_shard, exchange = batch, None, None
    if devices is not None:
        where = spec.origin(node).position() if spec.origin(node) is not None else ""
        if transport == "mpi":
            from numbax.transforms.pmap import mpi_shards  # pmap's module, which imports this one

            size, first_shard = mpi_shards.emit(spec, node, batch, where)
        elif transport == "threads":
            from numbax.transforms.pmap import thread_shards

            size, first_shard, exchange = thread_shards.emit(spec, node, batch, where)
        else:
            spec.emit(gast.Expr(value=spec.call_value(node, check_devices, [batch, *devices, where], {}).node))
    examples = Examples(spec, leaves, structure)
    if axis_name is None:
        return _peeled(spec, node, fun, examples, batch, mapped, out_axes, None)
    with collective_axes.bound(axis_name, size, transport, first_shard, exchange) as frame:
        start, helpers = len(spec.block), len(spec.builder.helpers)
        value = _peeled(spec, node, fun, examples, batch, mapped, out_axes, frame)
        if not frame.staged:
            return value
        del spec.block[start:], spec.builder.helpers[helpers:]
        return _staged(spec, node, fun, examples, batch, out_axes, frame)


def _peeled(spec, node, fun: Callable, examples: "Examples", batch: Any, mapped, out_axes: Any, frame) -> Any:
    """The first example, then a loop over the others; None as soon as a collective stages ``frame``."""
    start = len(spec.block)
    first = spec.call_value(node, fun, *examples.at(0))
    if frame is not None and frame.staged:
        return None
    outputs, out_treedef = spec.leaves_with_paths(first)
    try:
        out_pairs = axes.broadcast_prefix("vmap out_axes", out_axes, first, is_leaf=is_dyn)
    except ValueError as exc:
        fail(spec, node, exc)
    check_outputs(spec, node, out_pairs)
    _check_unbatched(spec, node, start, [leaf for leaf, _ in mapped], first, out_pairs)

    buffers = _buffers(spec, node, outputs, out_pairs, batch)
    _loop(spec, node, fun, examples, batch, buffers, frame)  # also with nothing to stack: the function's effects
    results = [_result(spec, node, leaf, axis, buffer)
               for (_, leaf), (_, axis), buffer in zip(outputs, out_pairs, buffers)]
    return tree_util.tree_unflatten(out_treedef, results)


def _staged(spec, node, fun: Callable, examples: "Examples", batch: Any, out_axes: Any, frame) -> Any:
    """``for i in range(0, batch):`` every example, its outputs named; tagged for the ``collectives`` pass,
    which stacks them into the outputs' buffers."""
    index = spec.namer.new("i")
    frame.index = Dyn(name_node(index), INDEX)
    saved, spec.block = spec.block, []
    spec.runtime_depth += 1
    try:
        result = spec.call_value(node, fun, *examples.at(frame.index))
        outputs, out_treedef = spec.leaves_with_paths(result)
        try:
            out_pairs = axes.broadcast_prefix("vmap out_axes", out_axes, result, is_leaf=is_dyn)
        except ValueError as exc:
            fail(spec, node, exc)
        check_outputs(spec, node, out_pairs)
        if any(axis is None for _, axis in out_pairs):
            raise NumbaxBatchingError("out_axes=None for an output of a vmap whose function calls a collective "
                                      "is not supported", spec.origin(node),
                                      hint="map the output (out_axes=0) and take its first row.")
        names = []
        for path, leaf in outputs:
            res = spec.namer.new(leaf_name("res", path))
            spec.emit_assign(res, leaf)
            names.append((res, spec.namer.new(leaf_name("out", path))))
        body = spec.block
    finally:
        spec.block = saved
        spec.runtime_depth -= 1
    loop = _examples_loop(spec, index, 0, batch, body)
    across = frame.first_shard is not None  # a pmap of processes or threads: its whole axis, its first shard
    size = frame.size.name if isinstance(frame.size, Dyn) else frame.size
    anno.setanno(loop, anno.Key.STAGED, stages.Staged(frame.tag, tuple(names), frame.transport,
                                                      size if across else None,
                                                      frame.first_shard.name if across else None, frame.exchange))
    spec.emit(loop)
    results = [_result(spec, node, leaf, axis, _narrow(spec, node, leaf, out))
               for (_, leaf), (_, axis), (_, out) in zip(outputs, out_pairs, names)]
    return tree_util.tree_unflatten(out_treedef, results)


def _examples_loop(spec, index: str, first: int, batch: Any, body: List[gast.stmt]) -> gast.For:
    """``for index in range(first, batch):`` over ``body``."""
    trips = gast.Call(func=name_node("range"), args=[gast.Constant(value=first, kind=None), spec.materialize(batch)],
                      keywords=[])
    return gast.For(target=name_node(index, gast.Store()), iter=trips, body=body, orelse=[], type_comment=None)


def _narrow(spec, node, leaf: Any, out: str) -> str:
    """The stacked output ``out`` in the dtype of its examples where that is a narrow one that compiled code
    widens in a number (int32 and smaller: Numba computes them in int64): ``np.asarray(out, np.int32)``."""
    aval = leaf.aval if isinstance(leaf, Dyn) else AVal.of(leaf)
    if aval is None or aval.ndim != 0 or aval.weak or aval.dtype in WIDEST:
        return out
    name = spec.namer.new(out + "_" + aval.dtype.name)
    spec.emit_assign(name, spec.call_value(node, np.asarray, [Dyn(name_node(out), _stacked_aval(leaf)),
                                                              aval.dtype.type], {}))
    return name


def _loop(spec, node, fun, examples: Examples, batch: Any, buffers: List[Optional[str]], frame) -> None:
    """``for i in range(1, batch):`` the example at ``i``, each batched output stored at ``i``."""
    index = spec.namer.new("i")
    saved, spec.block = spec.block, []
    spec.runtime_depth += 1
    if frame is not None:
        frame.index = Dyn(name_node(index), INDEX)
    try:
        result = spec.call_value(node, fun, *examples.at(Dyn(name_node(index), INDEX)))
        for (_, leaf), buffer in zip(spec.leaves_with_paths(result)[0], buffers):
            if buffer is not None:
                check_stacked(spec, node, fun, buffer, leaf)
                _store(spec, buffer, Dyn(name_node(index), INDEX), leaf)
        body = spec.block
    finally:
        spec.block = saved
        spec.runtime_depth -= 1
    loop = _examples_loop(spec, index, 1, batch, body)
    anno.setanno(loop, anno.Key.BATCH_LOOP, True)  # its invariants are hoisted (``hoist_invariants``)
    spec.emit(loop)
