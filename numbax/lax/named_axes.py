"""The named axes that enclosing ``vmap``s bind while a function is specialized, innermost last.

A ``vmap(f, axis_name='i')`` call inside compiled code binds ``'i'`` while ``f`` is specialized for its
examples; a collective in ``f`` (or in a function ``f`` calls, or in a transformation generated inside ``f``)
finds the frame here, by name, innermost first, as JAX resolves axis names. A frame's ``tag`` (``name@depth``)
tells apart two ``vmap``s of one name. Specializing is single-threaded per compilation; the stack is
per-thread so that two threads compiling at once do not see each other's axes.
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading
from typing import Any, Iterator, List, Tuple

from numbax.errors import NumbaxAxisNameError


@dataclasses.dataclass
class Frame:
    """One bound axis: its name, the batch size (an int or a run-time value), the index of the example being
    specialized (0 for the first one, the loop variable for the others), and whether a collective ran over
    it (or over an axis outside it) in the code specialized so far: then ``vmap`` writes its loop in stages.
    A ``pmap`` across processes (``transport`` ``"mpi"``) runs this process's shards only: ``size`` is the
    whole axis's, and ``first_shard`` the run-time index of this process's first shard along it; on threads
    (``"threads"``), one shard's, ``size`` the run-time number of shards and ``exchange`` the name of the
    exchange between them. A ``pmap`` over GPUs binds its axis with ``transport`` ``ON_GPUS`` while its shard's
    program is specialized: one shard's, ``size`` the number of shards, ``first_shard`` the run-time index of
    the shard (``rt.gpu_axis_index()``), each collective a call of the exchange between the shards' host
    drivers (``runtime.gpu_shards``)."""

    name: Any
    depth: int
    size: Any
    index: Any = 0
    staged: bool = False
    transport: str = "batch"
    first_shard: Any = None
    exchange: Any = None

    @property
    def tag(self) -> str:
        """How markers in generated code name this axis."""
        return f"{self.name}@{self.depth}"


ON_GPUS = "gpus"
"""The transport of a ``pmap`` axis over GPUs (``transforms.pmap.gpu_shards``): collectives between the shards'
host drivers."""

PER_THREAD = "per thread"
"""The transport of a ``vmap``'s axis on the GPU backend, one example per thread (``transforms.vmap.threads``):
no collective is built on it; bound so that a collective inside it is refused, a ``vmap`` of no ``axis_name``
as ``UNNAMED``."""

class _Unnamed:
    """The name of a ``vmap``'s axis that the user did not name: no collective names it."""

    def __repr__(self) -> str:
        return "<the axis of a vmap without axis_name>"


UNNAMED = _Unnamed()

_LOCAL = threading.local()


def _stack() -> List[Frame]:
    if not hasattr(_LOCAL, "frames"):
        _LOCAL.frames = []
    return _LOCAL.frames


@contextlib.contextmanager
def bound(name: Any, size: Any, transport: str = "batch", first_shard: Any = None,
          exchange: Any = None) -> Iterator[Frame]:
    """Bind ``name`` (a ``vmap``'s ``axis_name``) to an axis of ``size`` while the body is specialized."""
    frames = _stack()
    frame = Frame(name, len(frames), size, transport=transport, first_shard=first_shard, exchange=exchange)
    frames.append(frame)
    try:
        yield frame
    finally:
        frames.pop()


def innermost() -> Frame:
    """The axis bound last (a collective's lookup found one, so there is one)."""
    return _stack()[-1]


def per_thread() -> bool:
    """Whether code specialized now runs in one GPU thread: an axis bound one example per thread (``PER_THREAD``)
    encloses it."""
    return any(frame.transport == PER_THREAD for frame in _stack())


def axis_names(axis_name: Any) -> Tuple[Any, ...]:
    """JAX's ``axis_name`` argument as a tuple of names."""
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def lookup(axis_name: Any, origin=None, staged: bool = True) -> List[Frame]:
    """The frames ``axis_name`` (one name or a tuple) names, each its innermost binding; JAX's ``NameError``
    for a name no enclosing ``vmap`` binds. With ``staged`` (a collective, not ``axis_index``), the frames from
    the outermost one named to the innermost one are marked: their loops must stop at the collective."""
    frames = _stack()
    found = []
    for name in axis_names(axis_name):
        match = next((f for f in reversed(frames) if f.name == name), None)
        if match is None:
            raise NumbaxAxisNameError(f"unbound axis name: {name}", origin,
                                      hint="call the collective inside a function mapped by numbax.vmap(..., "
                                      f"axis_name={name!r}) or numbax.pmap(..., axis_name={name!r}).")
        found.append(match)
    if len({f.depth for f in found}) != len(found):
        raise NumbaxAxisNameError(f"axis name {axis_name!r} names one axis twice", origin)
    if staged:
        for frame in frames[min(f.depth for f in found):]:
            frame.staged = True
    return found
