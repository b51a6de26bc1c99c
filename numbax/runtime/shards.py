"""The exchange between ``pmap``'s shards on threads: a barrier and each shard's rows, in compiled code.

``pmap`` over several CPU devices runs each shard's program on a thread of its own, compiled without the GIL
(``transforms.pmap.thread_shards``). Its collectives call ``shard_gather``, which stacks every shard's operand
in shard order, so that the collective's own code (``primitives.transports.BATCH``'s, unchanged) runs on the
same rows, in the same order, as when one thread runs every shard: the results are the same bits.

A shard's ``shards`` argument is an int64 array ``[its index, the number of shards, the address of the
state they share]``; the state (``state_words(n)`` int64 words, zeros at the start of a call) is a header
(arrivals, the barrier's generation, the abort flag) and one slot per shard (an operand's address, size
and dims). ``shard_gather``:

1. publishes the address and shape of its operand (a contiguous copy, kept alive until step 4) in its slot;
2. waits at the barrier for every shard;
3. checks that every shard's operand has its shape (``NumbaxShapeError`` at the user's line, raised by
   every shard alike), and copies each one into its row of the result;
4. waits at the barrier again, so that no operand is freed while another shard reads it.

The barrier spins on atomic words for tens of microseconds, then sleeps in Linux's ``futex`` until the last
shard arrives (waking every millisecond to look at the abort flag), so that a shard that waits for a slower
one leaves its core to others (on other systems it spins). A shard that raises never reaches the barrier: the host
sets the abort flag (``abort``), and every shard waiting raises ``ShardsAborted``, which the host replaces
with the first shard's own error.
"""
from __future__ import annotations

import platform
import sys

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload, register_jitable

from numbax.errors import NumbaxShapeError

__all__ = ["shard_index", "shard_count", "shard_gather"]

PLACEHOLDER_MARK = -0x6E627368  # "nbsh": the first word of the placeholder that generated code is compiled with
HEADER = 4  # arrivals, generation, aborted, unused
MAX_RANK = 16
SLOT = 2 + MAX_RANK  # address, size, dims
_ARRIVALS, _GENERATION, _ABORTED = 0, 1, 2
_WORD = 8
_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine()) if sys.platform.startswith("linux") else None
_FUTEX_WAIT, _FUTEX_WAKE = 128, 129  # FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE
_SPINS = 20000  # reads of the barrier before sleeping: tens of microseconds
_SLEEP_NS = 1_000_000

_DIFFERENT = ("pmap's shards passed operands of different shapes to a collective: shard {} has {}, shard {} "
              "another shape")
_TOO_MANY_DIMS = "a collective of pmap's shards takes operands of at most 16 dims, not {}"


class ShardsAborted(Exception):
    """Raised in a shard that waits for another one, which failed (the host reports that one's error)."""


def state_words(count: int) -> int:
    """The int64 words of the state that ``count`` shards share."""
    return HEADER + count * SLOT


def abort(state: np.ndarray) -> None:
    """Wake every shard waiting on ``state`` with ``ShardsAborted`` (a shard failed)."""
    state[_ABORTED] = 1


@intrinsic
def _atomic_add(typingctx, address, value):
    """The int64 at ``address`` incremented by ``value`` (sequentially consistent); its value before."""
    def codegen(context, builder, signature, args):
        pointer = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        return builder.atomic_rmw("add", pointer, args[1], "seq_cst")

    return types.int64(types.int64, types.int64), codegen


@intrinsic
def _atomic_load(typingctx, address):
    """The int64 at ``address`` (sequentially consistent)."""
    def codegen(context, builder, signature, args):
        pointer = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        return builder.load_atomic(pointer, "seq_cst", _WORD)

    return types.int64(types.int64), codegen


@intrinsic
def _futex(typingctx, address, operation, value, timeout):
    """Linux's ``futex(address, operation, value, timeout)`` system call, on the 32-bit word at ``address``;
    nothing elsewhere (the barrier spins)."""
    def codegen(context, builder, signature, args):
        word = ir.IntType(64)
        if _SYS_FUTEX is None:
            return ir.Constant(word, 0)
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(word, [word], var_arg=True),
                                                  "syscall")
        return builder.call(function, [ir.Constant(word, _SYS_FUTEX), *args, ir.Constant(word, 0),
                                       ir.Constant(word, 0)])

    return types.int64(types.int64, types.int64, types.int64, types.int64), codegen


@intrinsic
def _words(typingctx, address):
    """The int64 words at ``address``, as a pointer."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], ir.IntType(64).as_pointer())

    return types.CPointer(types.int64)(types.int64), codegen


@intrinsic
def _elements_at(typingctx, address, like):
    """``address`` as a pointer to elements of the array ``like``'s dtype."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return types.CPointer(like.dtype)(types.int64, like), codegen


def _operand(x):
    """``x`` as a C-contiguous array: an array (a copy where it is not contiguous), a number as one element."""


@overload(_operand)
def _operand_nopython(x):
    if isinstance(x, types.Array):
        return lambda x: np.ascontiguousarray(x)
    return lambda x: np.array([x])


def _stacked_shape(x, count):
    """``(count,) + np.shape(x)``."""


@overload(_stacked_shape)
def _stacked_shape_nopython(x, count):
    if isinstance(x, types.Array):
        return lambda x, count: (count,) + x.shape
    return lambda x, count: (count,)


def _hold(operand):
    """Nothing: a use of ``operand`` that keeps it alive (Numba frees an array after its last use) until here."""


@overload(_hold)
def _hold_nopython(operand):
    return lambda operand: None


@register_jitable
def shard_index(shards):
    """This shard's index along the whole axis (a number, not a view of ``shards``)."""
    return int(shards[0])


@register_jitable
def shard_count(shards):
    """The number of shards (the mapped axis's size; a number, not a view of ``shards``)."""
    return int(shards[1])


@register_jitable
def _barrier(shards):
    """Wait until every shard has arrived; ``ShardsAborted`` if one failed meanwhile."""
    base = shards[2]
    generation = _atomic_load(base + _GENERATION * _WORD)
    if _atomic_add(base + _ARRIVALS * _WORD, 1) == shards[1] - 1:
        _atomic_add(base + _ARRIVALS * _WORD, -shards[1])
        _atomic_add(base + _GENERATION * _WORD, 1)
        _futex(base + _GENERATION * _WORD, _FUTEX_WAKE, 0x7FFFFFFF, 0)
    else:
        spins = 0
        timeout = np.array([0, _SLEEP_NS], np.int64)  # a timespec: wake to look at the abort flag
        while _atomic_load(base + _GENERATION * _WORD) == generation:
            if _atomic_load(base + _ABORTED * _WORD) != 0:
                raise ShardsAborted()
            spins += 1
            if spins > _SPINS:  # sleep until the generation changes (its low 32 bits: little-endian)
                _futex(base + _GENERATION * _WORD, _FUTEX_WAIT, generation & 0xFFFFFFFF, timeout.ctypes.data)
        _hold(timeout)


@register_jitable
def _slot(shards, shard):
    """``shard``'s slot: its operand's address, size and dims."""
    return numba.carray(_words(shards[2] + (HEADER + shard * SLOT) * _WORD), SLOT)


@register_jitable
def _check_shapes(shards, operand, where):
    """Raise ``NumbaxShapeError`` unless every shard's operand has ``operand``'s shape (each has its rank)."""
    for shard in range(shards[1]):
        slot = _slot(shards, shard)
        for k in range(operand.ndim):
            if slot[2 + k] != operand.shape[k]:
                raise NumbaxShapeError(_DIFFERENT, where, shards[0], operand.shape, shard)


@register_jitable
def shard_gather(shards, x, where):
    """Every shard's ``x`` (an array or a number), stacked in shard order along a new leading axis."""
    operand = _operand(x)
    if operand.ndim > MAX_RANK:
        raise NumbaxShapeError(_TOO_MANY_DIMS, where, operand.ndim)
    mine = _slot(shards, shards[0])
    mine[0] = operand.ctypes.data
    mine[1] = operand.size
    for k in range(operand.ndim):
        mine[2 + k] = operand.shape[k]
    _barrier(shards)
    _check_shapes(shards, operand, where)
    count = shards[1]
    out = np.empty(_stacked_shape(x, count), operand.dtype)
    rows = out.reshape((count, operand.size))
    for shard in range(count):
        rows[shard] = numba.carray(_elements_at(_slot(shards, shard)[0], operand), operand.size)
    _barrier(shards)
    _hold(operand)
    return out
