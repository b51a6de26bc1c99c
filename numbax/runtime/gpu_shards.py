"""The exchange between ``pmap``'s shards over GPUs: each shard's host driver on a thread, collectives staged
through the host.

``pmap`` over GPUs runs each shard's program (the GPU backend's kernels and host driver) on a thread of its
own, its GPU current (``transforms.pmap.gpu_shards``). A collective there is a call in the driver
(``rt.gpu_psum(x, where)``, ...) that:

1. copies this shard's operand to the host (waiting for the kernels that compute it) and publishes the row in
   its slot of this collective's set, with the collective's kind and the user's line;
2. waits at the barrier for every shard;
3. checks that every shard reached the same collective (kind and line; else ``NumbaxCollectiveError``) with
   an operand of its shape (else ``NumbaxShapeError``, as on the CPU), every shard alike;
4. computes the collective from every shard's row, in shard order, on the host (``combined``: what the CPU's
   ``pmap`` computes from the same rows, ``np.sum(rows, axis=0)``...), and copies this shard's result to its
   GPU; a 0-d result is a number, as the driver keeps numbers on the host.

Successive collectives use two sets of slots in turn: no shard reuses a set before every shard left the
collective that used it last (each arrived at the barrier in between). A shard that returns or fails breaks
the barrier for the others: one still waiting, or arriving later, raises (``ShardsAborted`` after a failure,
which the host replaces with the failing shard's error; ``NumbaxCollectiveError`` after a return: the shards
did not reach the same collectives), so that no shard waits forever.

Where the shards must not run at once (Numba's CUDA simulator runs one kernel at a time), the exchange holds
a lock, ``turns``, that a shard holds while it runs and gives up while it waits at the barrier.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

import numpy as np

from numbax.errors import NumbaxCollectiveError, NumbaxInternalError, NumbaxShapeError
from numbax.runtime.checks import check_scatter
from numbax.runtime.shards import ShardsAborted

__all__ = ["gpu_psum", "gpu_pmean", "gpu_pmax", "gpu_pmin", "gpu_all_gather", "gpu_ppermute", "gpu_psum_scatter",
           "gpu_axis_index"]

_DIFFERENT_SHAPES = ("pmap's shards passed operands of different shapes to a collective: shard {} has {}, shard {} "
                     "another shape")
_DIFFERENT_COLLECTIVES = ("pmap's shards over GPUs reached different collectives: shard {} numbax.lax.{}, shard {} "
                          "numbax.lax.{} at {}; every shard must reach the same collectives in the same order")
_RETURNED = ("pmap's shard {} over GPUs returned before reaching this numbax.lax.{}, which shard {} reached: every "
             "shard must reach the same collectives in the same order")


class Exchange:
    """What the ``count`` shards of one call share: the barrier, two sets of slots, and the ``turns`` lock
    where they must run one at a time."""

    def __init__(self, count: int, turns: Optional[threading.Lock] = None):
        self.count = count
        self.turns = turns
        self.slots: List[List[Any]] = [[None] * count, [None] * count]
        self._condition = threading.Condition()
        self._arrived = 0
        self._generation = 0
        self._gone: Optional[tuple] = None  # (shard, failed) of the first shard that returned or failed

    def wait(self, shard: int, kind: str, where: str) -> None:
        """Wait until every shard has arrived (``kind`` and ``where``: this collective, for an error)."""
        with self._condition:
            self._raise_if_gone(shard, kind, where)
            generation = self._generation
            self._arrived += 1
            if self._arrived == self.count:
                self._arrived = 0
                self._generation += 1
                self._condition.notify_all()
                return
            if self.turns is not None:
                self.turns.release()
            while self._generation == generation and self._gone is None:
                self._condition.wait()
            passed = self._generation != generation
        if self.turns is not None:
            self.turns.acquire()
        if not passed:
            with self._condition:
                self._raise_if_gone(shard, kind, where)

    def _raise_if_gone(self, shard: int, kind: str, where: str) -> None:
        if self._gone is None:
            return
        gone, failed = self._gone
        if failed:
            raise ShardsAborted()
        raise NumbaxCollectiveError(_RETURNED, where, gone, kind, shard)

    def leave(self, shard: int, failed: bool) -> None:
        """Shard ``shard`` returned (or failed): no barrier can pass any more."""
        with self._condition:
            if self._gone is None:
                self._gone = (shard, failed)
            self._condition.notify_all()


_LOCAL = threading.local()  # this thread's shard: (exchange, index, collectives so far)


@contextlib.contextmanager
def joined(exchange: Exchange, index: int) -> Iterator[None]:
    """Run the body (a shard's program) on this thread as shard ``index`` of ``exchange``."""
    if exchange.turns is not None:
        exchange.turns.acquire()
    _LOCAL.shard = [exchange, index, 0]
    failed = True
    try:
        yield
        failed = False
    finally:
        del _LOCAL.shard
        exchange.leave(index, failed)
        if exchange.turns is not None:
            exchange.turns.release()


def _shard() -> list:
    shard = getattr(_LOCAL, "shard", None)
    if shard is None:
        raise NumbaxInternalError("a collective over GPUs ran outside the shards of a pmap over GPUs")
    return shard


def _sum(rows: List[np.ndarray], index: int, where: str) -> np.ndarray:
    return np.sum(np.stack(rows), axis=0)


def _mean(rows: List[np.ndarray], index: int, where: str) -> np.ndarray:
    return np.mean(np.stack(rows), axis=0)


def _max(rows: List[np.ndarray], index: int, where: str) -> np.ndarray:
    return np.max(np.stack(rows), axis=0)  # NaN wins, as rt.max_rows's np.maximum


def _min(rows: List[np.ndarray], index: int, where: str) -> np.ndarray:
    return np.min(np.stack(rows), axis=0)


def _gathered(rows: List[np.ndarray], index: int, where: str, axis: int, tiled: bool, ndim: int) -> np.ndarray:
    return np.concatenate(rows, axis=axis) if tiled else np.stack(rows, axis=axis)


def _permuted(rows: List[np.ndarray], index: int, where: str, sources: Sequence[int],
              destinations: Sequence[int]) -> np.ndarray:
    if any(s >= len(rows) or d >= len(rows) for s, d in zip(sources, destinations)):
        raise ValueError("ppermute: an index of perm is not smaller than the axis size")
    source = next((s for s, d in zip(sources, destinations) if d == index), None)
    return np.zeros_like(rows[0]) if source is None else rows[source]


def _scattered(rows: List[np.ndarray], index: int, where: str, dimension: int, tiled: bool,
               ndim: int) -> np.ndarray:
    count = len(rows)
    check_scatter(rows[0].shape[dimension], count, tiled, where)
    total = np.sum(np.stack(rows), axis=0)
    block = total.shape[dimension] // count if tiled else 1
    part = np.take(total, range(index * block, (index + 1) * block), axis=dimension)
    return part if tiled else np.squeeze(part, axis=dimension)


_COMBINE: Dict[str, Callable[..., np.ndarray]] = {
    "psum": _sum, "pmean": _mean, "pmax": _max, "pmin": _min, "all_gather": _gathered, "ppermute": _permuted,
    "psum_scatter": _scattered,
}


def combined(kind: str, rows: List[np.ndarray], index: int, params: tuple, where: str) -> Any:
    """Shard ``index``'s result of the collective ``kind`` (with its static ``params``) of every shard's
    operand ``rows``, in shard order, on the host: an array, or a NumPy scalar where it has no dimension."""
    out = np.asarray(_COMBINE[kind](rows, index, where, *params))
    return out[()] if out.ndim == 0 else out


def _exchanged(kind: str, x: Any, params: tuple, where: str) -> Any:
    """Shard's part of the collective ``kind`` of ``x`` (a device array or a host number), over every shard."""
    exchange, index, calls = shard = _shard()
    shard[2] += 1
    slots = exchange.slots[calls % 2]
    row = np.asarray(x.copy_to_host() if hasattr(x, "copy_to_host") else x)
    slots[index] = (kind, where, row)
    exchange.wait(index, kind, where)
    for other, (other_kind, other_where, other_row) in enumerate(slots):
        if (other_kind, other_where) != (kind, where):
            raise NumbaxCollectiveError(_DIFFERENT_COLLECTIVES, where, index, kind, other, other_kind, other_where)
        if other_row.shape != row.shape:
            raise NumbaxShapeError(_DIFFERENT_SHAPES, where, index, row.shape, other)
    out = combined(kind, [slot[2] for slot in slots], index, params, where)
    if np.ndim(out) == 0:
        return out
    from numba import cuda  # the GPU backend's numba.cuda (or its simulator), loaded before any driver runs

    return cuda.to_device(np.ascontiguousarray(out))


def gpu_psum(x, where):
    """``numbax.lax.psum`` over the shards of a pmap over GPUs, in a shard's host driver."""
    return _exchanged("psum", x, (), where)


def gpu_pmean(x, where):
    """``numbax.lax.pmean`` over the shards of a pmap over GPUs."""
    return _exchanged("pmean", x, (), where)


def gpu_pmax(x, where):
    """``numbax.lax.pmax`` over the shards of a pmap over GPUs."""
    return _exchanged("pmax", x, (), where)


def gpu_pmin(x, where):
    """``numbax.lax.pmin`` over the shards of a pmap over GPUs."""
    return _exchanged("pmin", x, (), where)


def gpu_all_gather(x, axis, tiled, ndim, where):
    """``numbax.lax.all_gather`` over the shards of a pmap over GPUs (``ndim``: the operand's)."""
    return _exchanged("all_gather", x, (axis, tiled, ndim), where)


def gpu_ppermute(x, sources, destinations, where):
    """``numbax.lax.ppermute`` over the shards of a pmap over GPUs: shard ``destinations[k]`` gets shard
    ``sources[k]``'s ``x``, a shard no pair sends to zeros."""
    return _exchanged("ppermute", x, (sources, destinations), where)


def gpu_psum_scatter(x, dimension, tiled, ndim, where):
    """``numbax.lax.psum_scatter`` over the shards of a pmap over GPUs: this shard's block of the sum."""
    return _exchanged("psum_scatter", x, (dimension, tiled, ndim), where)


def gpu_axis_index():
    """This shard's index along the axis of a pmap over GPUs (a host number)."""
    return np.int64(_shard()[1])
