"""The exchange between ``pmap``'s shards on threads: a barrier and each shard's rows, in compiled code.

``pmap`` over several CPU devices runs each shard's program on a thread of its own, compiled without the GIL
(``transforms.pmap.thread_shards``). Its collectives call ``shard_gather``, which stacks every shard's operand
in shard order, so that the collective's own code (``primitives.transports.BATCH``'s, unchanged) runs on the
same rows, in the same order, as when one thread runs every shard: the results are the same bits.

A shard's ``shards`` argument is an int64 array ``[its index, the number of shards, the address of the
state they share]``; the state (``new_state(n)``: ``state_words(n)`` int64 words) is a header (arrivals, the
barrier's generation, the abort flag, the barrier's ``timespec``) and two sets of slots, one slot per shard
in each (an operand's address, the ``MemInfo`` that keeps it alive, its size and dims). Successive collectives
use the two sets in turn (the barrier's generation says which). ``shard_gather``:

1. publishes the address and shape of its operand (a contiguous copy, or the array itself) in its slot of
   this collective's set, and takes a reference to the operand's memory there;
2. waits at the barrier for every shard;
3. drops its reference to its operand of the collective before (every shard has read it: it arrived at this
   barrier after reading);
4. checks that every shard's operand has its shape (``NumbaxShapeError`` at the user's line, raised by
   every shard alike), and copies each one into its row of the result.

So a collective costs one barrier: no shard may reuse a set before every shard left the collective that
used it last, and each one's barrier ensures it; an operand stays alive until its shard's next collective,
or until the host drops what is left after the call (``release``). A slot's ``MemInfo`` is 0 where the
reference was dropped, or where the operand owns no reference-counted memory.

The barrier spins on atomic words for tens of microseconds, then sleeps in Linux's ``futex`` until the last
shard arrives (waking every millisecond to look at the abort flag), so that a shard that waits for a slower
one leaves its core to others (on other systems it spins). A shard that raises never reaches the barrier: the host
sets the abort flag (``abort``), and every shard waiting raises ``ShardsAborted``, which the host replaces
with the first shard's own error.
"""
from __future__ import annotations

import ctypes
import platform
import sys

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.runtime import _nrt_python
from numba.extending import intrinsic, overload, register_jitable

from numbax.errors import NumbaxShapeError

__all__ = ["shard_index", "shard_count", "shard_gather"]

PLACEHOLDER_MARK = -0x6E627368  # "nbsh": the first word of the placeholder that generated code is compiled with
HEADER = 5  # arrivals, generation, aborted, and the futex's timeout (a timespec: seconds, nanoseconds)
MAX_RANK = 16
SLOT = 3 + MAX_RANK  # address, MemInfo, size, dims
_ARRIVALS, _GENERATION, _ABORTED, _TIMEOUT = 0, 1, 2, 3
_ADDRESS, _MEMINFO, _SIZE, _DIMS = 0, 1, 2, 3
_WORD = 8
_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine()) if sys.platform.startswith("linux") else None
_FUTEX_WAIT, _FUTEX_WAKE = 128, 129  # FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE
_SPINS = 20000  # reads of the barrier before sleeping: tens of microseconds
_SLEEP_NS = 1_000_000
_MEMINFO_RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_nrt_python.c_helpers["MemInfo_release"])  # a decref

_DIFFERENT = ("pmap's shards passed operands of different shapes to a collective: shard {} has {}, shard {} "
              "another shape")
_TOO_MANY_DIMS = "a collective of pmap's shards takes operands of at most 16 dims, not {}"


class ShardsAborted(Exception):
    """Raised in a shard that waits for another one, which failed (the host reports that one's error)."""


def state_words(count: int) -> int:
    """The int64 words of the state that ``count`` shards share."""
    return HEADER + 2 * count * SLOT


def new_state(count: int) -> np.ndarray:
    """The state that ``count`` shards share at the start of a call: no arrivals, empty slots, the timeout."""
    state = np.zeros(state_words(count), np.int64)
    state[_TIMEOUT + 1] = _SLEEP_NS
    return state


def abort(state: np.ndarray) -> None:
    """Wake every shard waiting on ``state`` with ``ShardsAborted`` (a shard failed)."""
    state[_ABORTED] = 1


def release(state: np.ndarray) -> None:
    """Drop the references to operands that the slots of ``state`` still hold (after every shard returned)."""
    for word in range(HEADER + _MEMINFO, state.size, SLOT):
        if state[word] != 0:
            _MEMINFO_RELEASE(int(state[word]))
            state[word] = 0


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


@intrinsic
def _take(typingctx, array):
    """A new reference to ``array``'s memory; the address of its ``MemInfo`` (0 where it has none)."""
    def codegen(context, builder, signature, args):
        context.nrt.incref(builder, signature.args[0], args[0])
        meminfo = context.make_array(signature.args[0])(context, builder, args[0]).meminfo
        return builder.ptrtoint(meminfo, ir.IntType(64))

    return types.int64(array), codegen


@intrinsic
def _drop(typingctx, meminfo):
    """Drop a reference that ``_take`` took (``meminfo``: the address it returned; 0: nothing)."""
    def codegen(context, builder, signature, args):
        decref = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t]),
                                                "NRT_decref")  # Numba's own: nothing for a null MemInfo
        builder.call(decref, [builder.inttoptr(args[0], cgutils.voidptr_t)])
        return context.get_dummy_value()

    return types.none(types.int64), codegen


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
        while _atomic_load(base + _GENERATION * _WORD) == generation:
            if _atomic_load(base + _ABORTED * _WORD) != 0:
                raise ShardsAborted()
            spins += 1
            if spins > _SPINS:  # sleep until the generation changes (its low 32 bits: little-endian)
                _futex(base + _GENERATION * _WORD, _FUTEX_WAIT, generation & 0xFFFFFFFF, base + _TIMEOUT * _WORD)


@register_jitable
def _slot(shards, shard, parity):
    """``shard``'s slot in set ``parity``: its operand's address, MemInfo, size and dims."""
    return numba.carray(_words(shards[2] + (HEADER + (parity * shards[1] + shard) * SLOT) * _WORD), SLOT)


@register_jitable
def _check_shapes(shards, operand, parity, where):
    """Raise ``NumbaxShapeError`` unless every shard's operand has ``operand``'s shape (each has its rank)."""
    for shard in range(shards[1]):
        slot = _slot(shards, shard, parity)
        for k in range(operand.ndim):
            if slot[_DIMS + k] != operand.shape[k]:
                raise NumbaxShapeError(_DIFFERENT, where, shards[0], operand.shape, shard)


@register_jitable
def shard_gather(shards, x, where):
    """Every shard's ``x`` (an array or a number), stacked in shard order along a new leading axis."""
    operand = _operand(x)
    if operand.ndim > MAX_RANK:
        raise NumbaxShapeError(_TOO_MANY_DIMS, where, operand.ndim)
    parity = _atomic_load(shards[2] + _GENERATION * _WORD) & 1  # every shard reads the same here
    mine = _slot(shards, shards[0], parity)
    mine[_ADDRESS] = operand.ctypes.data
    mine[_MEMINFO] = _take(operand)
    mine[_SIZE] = operand.size
    for k in range(operand.ndim):
        mine[_DIMS + k] = operand.shape[k]
    _barrier(shards)
    before = _slot(shards, shards[0], 1 - parity)
    _drop(before[_MEMINFO])
    before[_MEMINFO] = 0
    _check_shapes(shards, operand, parity, where)
    count = shards[1]
    out = np.empty(_stacked_shape(x, count), operand.dtype)
    rows = out.reshape((count, operand.size))
    for shard in range(count):
        rows[shard] = numba.carray(_elements_at(_slot(shards, shard, parity)[_ADDRESS], operand), operand.size)
    return out
