"""``pmap`` over several CPU devices: one shard per device, each on a thread of its own, in parallel.

Why this shape (the ``mpi`` transport's, on threads): each thread runs the whole per-shard program, one
compiled function that releases the GIL, and a collective is a call of ``rt.shard_gather``
(``runtime.shards``: a barrier in compiled code and each shard's operand read in place), after which the
collective's code is ``BATCH``'s on the gathered rows (``primitives.transports.THREADS``). The alternative,
one compiled function per stage run by a host driver between the collectives, would cross into Python and
back at each collective and split the generated code that ``numbax show`` prints; this way the code is one
function, as for MPI, and a collective costs one barrier and a copy of the rows. The stacked rows are the
ones the sequential transport computes, combined by the same code in the same order: the results are the
same bits.

The host (``run``) slices each mapped argument into its shards (views, ``split``), runs shard 0 on the
calling thread and the others on a pool of threads, and joins the shards' outputs along ``out_axes``
(``joined``). A shard that raises sets the shared abort flag, so that the shards waiting at a barrier stop,
and the caller gets the first failing shard's own error. Calls from several threads run one at a time. The
first call tells glibc's allocator to keep freed memory in the process (``distributed.memory``), as
``distributed.initialize`` does: else every step faults its temporaries' pages in again, in each thread.

Generated code is compiled with a placeholder for the exchange (a hidden parameter of the generated
function, ``shards``), which each thread's call replaces with its own (``with_exchange``)::

    rt.check_devices(batch, 1, True, '')
    first_shard = rt.shard_index(shards)
    shard_count = rt.shard_count(shards)
"""
from __future__ import annotations

import concurrent.futures
import functools
import threading
from typing import Any, Callable, List, Optional, Sequence, Tuple

import gast
import numpy as np

from numbax import tree_util
from numbax.ast_passes.specialize.materialize import name_node
from numbax.ast_passes.specialize.values import AVal, Dyn
from numbax.compiled import Compiled
from numbax.distributed import memory
from numbax.errors import NumbaxShapeError
from numbax.runtime import shards as exchange
from numbax.runtime.checks import check_devices
from numbax.transforms.vmap import axes

_INDEX = AVal(np.dtype(np.int64), 0)
_OUTPUTS_DIFFER = ("pmap's shards returned outputs of different shapes, which do not stack: output {} of shard 0 "
                   "has shape {}, of shard {} shape {}")
PLACEHOLDER = np.array([exchange.PLACEHOLDER_MARK, 1, 0], np.int64)
"""What generated code is compiled with in place of each thread's exchange."""


def emit(spec, node, batch: Dyn, where: str) -> Tuple[Dyn, Dyn, str]:
    """At a ``pmap`` call: the check that the mapped axis is one shard, and this shard's index and the number of
    shards, read from the exchange; returns the number of shards, the index and the exchange's name."""
    spec.emit(gast.Expr(value=spec.call_value(node, check_devices, [batch, 1, True, where], {}).node))
    shards = spec.materializer.constant_array(PLACEHOLDER, "shards")
    names = []
    for read, name in ((exchange.shard_count, "shard_count"), (exchange.shard_index, "first_shard")):
        names.append(spec.namer.new(name))
        call = gast.Call(func=spec.materializer.reference(read), args=[shards], keywords=[])
        spec.emit_assign(names[-1], Dyn(call, _INDEX))
    return Dyn(name_node(names[0]), _INDEX), Dyn(name_node(names[1]), _INDEX), shards.id


def with_exchange(shards: np.ndarray, constants: tuple) -> tuple:
    """A compiled function's constants, its exchange placeholder replaced by a thread's ``shards``."""
    return tuple(shards if isinstance(c, np.ndarray) and c.dtype == np.int64 and c.shape == PLACEHOLDER.shape
                 and c[0] == exchange.PLACEHOLDER_MARK else c for c in constants)


def shard_count(leaves: Sequence[Any], in_axes: Sequence[Optional[int]]) -> int:
    """The size of the mapped axis (0 where no argument is mapped)."""
    sizes = [np.shape(leaf)[axis] for leaf, axis in zip(leaves, in_axes) if axis is not None]
    return sizes[0] if sizes else 0


def check(count: int, devices: Tuple[int, bool]) -> None:
    """JAX's error unless ``count`` shards fit the devices (``rt.check_devices``, here on the host)."""
    check_devices(count, devices[0], devices[1], "")


def split(leaves: Sequence[Any], in_axes: Sequence[Optional[int]], count: int) -> List[List[Any]]:
    """Each shard's leaves: the mapped ones as views of one entry of their mapped axis, the others whole."""
    def entry(leaf: Any, axis: Optional[int], k: int) -> Any:
        if axis is None:
            return leaf
        return leaf[(slice(None),) * (axis % np.ndim(leaf)) + (slice(k, k + 1),)]

    return [[entry(leaf, axis, k) for leaf, axis in zip(leaves, in_axes)] for k in range(count)]


def check_shapes(per_shard: List[List[Any]], where: str) -> None:
    """Raise ``NumbaxShapeError`` at ``where`` (the mapped function's line) unless every shard's output leaves
    have the first shard's shapes: no stack of them has one shape."""
    for shard, leaves in enumerate(per_shard[1:], 1):
        for k, (first, leaf) in enumerate(zip(per_shard[0], leaves)):
            if np.shape(first) != np.shape(leaf):
                raise NumbaxShapeError(_OUTPUTS_DIFFER, where, k, np.shape(first), shard, np.shape(leaf))


def joined(outputs: List[Any], out_axes: Any, where: str) -> Any:
    """The shards' outputs, each mapped leaf joined along its axis of ``out_axes`` (the first shard's leaf
    where it is not mapped); ``NumbaxShapeError`` at ``where`` where their shapes differ."""
    first = outputs[0]
    pairs = axes.broadcast_prefix("pmap out_axes", out_axes, first)
    leaves, treedef = tree_util.tree_flatten(first)
    per_shard = [tree_util.tree_leaves(out) for out in outputs]
    check_shapes(per_shard, where)
    joined_leaves = [leaf if axis is None else np.concatenate([shard[k] for shard in per_shard],
                                                               axis=axis % np.ndim(leaf))
                     for k, (leaf, (_, axis)) in enumerate(zip(leaves, pairs))]
    return tree_util.tree_unflatten(treedef, joined_leaves)


_ONE_AT_A_TIME = threading.Lock()  # a call's shards wait for each other: two calls must not share the pool
_pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
_workers = 0


def _threads(count: int) -> concurrent.futures.ThreadPoolExecutor:
    """The pool, with a thread for each of ``count`` shards but the first (which runs on the caller's)."""
    global _pool, _workers
    if _pool is None or _workers < count - 1:
        if _pool is not None:
            _pool.shutdown(wait=False)
        _pool = concurrent.futures.ThreadPoolExecutor(count - 1, thread_name_prefix="numbax-shard")
        _workers = count - 1
    return _pool


def run(compiled: Compiled, shards: List[List[Any]]) -> List[Any]:
    """``compiled`` for each shard's leaves at once, each on a thread with its exchange; their outputs.

    Raises:
        the first failing shard's error (``runtime.shards.ShardsAborted`` of the shards that waited for it is
        not reported).
    """
    memory.keep_freed_memory()
    count = len(shards)
    state = exchange.new_state(count)
    binds = [functools.partial(with_exchange, np.array([k, count, state.ctypes.data], np.int64))
             for k in range(count)]
    compiled.prepare(shards[0], binds[0])  # Numba compiles now: not in each thread at once, at a barrier

    def one(k: int) -> Any:
        try:
            return compiled(shards[k], binds[k])
        except BaseException:
            exchange.abort(state)
            raise

    with _ONE_AT_A_TIME:
        try:
            return gathered(one, [_threads(count).submit(one, k) for k in range(1, count)])
        finally:
            exchange.release(state)  # the operands of the last collective: every shard has returned


def gathered(one: Callable[[int], Any], others: List[concurrent.futures.Future]) -> List[Any]:
    """Every shard's result: shard 0's computed here by ``one(0)`` while ``others`` run the rest; else the first
    failing shard's error, once every shard has stopped (not ``ShardsAborted`` of the shards that waited for it,
    unless there is no other)."""
    results: List[Any] = [None] * (len(others) + 1)
    errors: List[Optional[BaseException]] = [None] * (len(others) + 1)
    try:
        results[0] = one(0)
    except BaseException as error:  # reported below, after the other shards stopped
        errors[0] = error
    for k, future in enumerate(others, 1):
        try:
            results[k] = future.result()
        except BaseException as error:
            errors[k] = error
    failed = [e for e in errors if e is not None]
    if failed:
        raise next((e for e in failed if not isinstance(e, exchange.ShardsAborted)), failed[0])
    return results
