"""What each collective is on each transport: the one table that says "this collective, here, is this code".

A transport is what carries the examples (or shards) of an axis. ``BATCH`` is ``vmap``'s loop: the examples
run one after the other in one thread, so a collective's operands are the rows of a buffer ``xs`` that the
loop filled (row ``i`` from example ``i``), and the collective is array code over those rows, run between the
loop's stages (``ast_passes.collectives``). Ordinary NumPy code, so ``grad``, ``jvp`` and ``vmap``
differentiate and batch it with the registry's rules for ``np.sum``, ``np.moveaxis``... (JAX's batching rules
for its collectives are the same reductions; ``pmax`` and ``pmin`` call helpers without rules, as JAX has none). A transport that runs shards on threads or processes (a barrier and an
exchange buffer; MPI's ``Allreduce``) is another table of this shape: per collective, the code that replaces
the marker in each shard.

Each entry gives, from the collective's static parameters, the statements that compute ``{out}`` from ``xs``
(``{xs}``: the operand's rows, ``{n}``: the axis size, ``{where}``: the user's "file:line:column" as a
string literal, for a check's error) and, where examples get different parts of it, the
expression of example ``{i}``'s value (``None``: every example gets ``{out}``; ``{g}``: the example's index
along the whole axis, which is ``{i}`` where one process runs every example).

``MPI`` is ``pmap``'s transport across the processes of ``mpiexec`` (``transforms.pmap.mpi_shards``): each
process runs its one shard, so ``xs`` has one row, and the collective is a call of the compiled MPI
collectives (``numbax.distributed.collectives``, imported as ``mpi``) on it; ``{n}`` is the number of shards of
every process. Those calls have no derivative rules: a transformation that meets one refuses it.

``THREADS`` is ``pmap``'s transport over several CPU devices (``transforms.pmap.thread_shards``): each thread
runs one shard, so ``xs`` has one row; ``rt.shard_gather`` stacks every shard's row (``{shards}``: the name of
the exchange), and ``BATCH``'s code runs on them: the same rows, the same code, the same bits.

``pmap`` over GPUs has no table here: its shard's program holds no loop over the shards, so its collectives
are calls of the exchange between the shards' host drivers, emitted where the user called them
(``lax.collective_lowering``, ``runtime.gpu_shards``).
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Optional

# flake8: noqa: E731


@dataclasses.dataclass(frozen=True)
class OverRows:
    """A collective over the rows of ``xs`` (one per example): its shared code and each example's part."""

    shared: Callable[..., str]
    per_example: Optional[Callable[..., str]] = None
    lifted: Callable[..., tuple] = lambda *params: params  # the parameters over a stack of inner examples


def _indexed(dimension: int, where: str) -> str:
    """``{out}[:, :, where]``: the ``where`` of axis ``dimension``."""
    return "{out}[" + ", ".join([":"] * dimension + [where]) + "]"


def _gathered(axis: int, tiled: bool, ndim: int) -> str:
    if not tiled:
        return "{out} = {xs}" if axis == 0 else f"{{out}} = np.moveaxis({{xs}}, 0, {axis})"
    moved = "{xs}" if axis == 0 else f"np.moveaxis({{xs}}, 0, {axis})"
    shape = [f"{{out}}_moved.shape[{k}]" for k in range(axis)] + ["-1"] + \
        [f"{{out}}_moved.shape[{k + 1}]" for k in range(axis + 1, ndim)]
    return f"{{out}}_moved = {moved}\n{{out}} = np.reshape({{out}}_moved, ({', '.join(shape)},))"


def _scattered(dimension: int, tiled: bool, ndim: int) -> str:
    return (f"rt.check_scatter({{xs}}.shape[{dimension + 1}], {{n}}, {tiled}, {{where}})\n"
            "{out} = np.sum({xs}, axis=0)")


def _block(dimension: int, tiled: bool, ndim: int) -> str:
    if not tiled:
        return _indexed(dimension, "{i}")
    block = f"({{out}}.shape[{dimension}] // {{n}})"
    return _indexed(dimension, f"{{i}} * {block}:({{i}} + 1) * {block}")


BATCH: Dict[str, OverRows] = {
    "psum": OverRows(lambda: "{out} = np.sum({xs}, axis=0)"),
    "pmean": OverRows(lambda: "{out} = np.mean({xs}, axis=0)"),
    "pmax": OverRows(lambda: "{out} = rt.max_rows({xs})"),  # no derivative: JAX has no rule for pmax
    "pmin": OverRows(lambda: "{out} = rt.min_rows({xs})"),
    "all_gather": OverRows(_gathered, lifted=lambda axis, tiled, ndim: (axis + 1, tiled, ndim + 1)),
    "ppermute": OverRows(lambda sources, destinations: f"{{out}} = rt.permute_rows({{xs}}, {sources!r}, "
                                                       f"{destinations!r})",
                         per_example=lambda sources, destinations: "{out}[{i}]"),
    "psum_scatter": OverRows(_scattered, per_example=_block,
                             lifted=lambda dimension, tiled, ndim: (dimension + 1, tiled, ndim + 1)),
}
"""``vmap``'s transport: each collective over the rows of the buffer its loop filled."""


def _gathered_across(axis: int, tiled: bool, ndim: int) -> str:
    """Every process's row, stacked by ``MPI_Allgather`` in process order, then ``_gathered``'s code."""
    return "{out}_gathered = mpi.allgather({xs}[0])\n" + _gathered(axis, tiled, ndim).replace("{xs}", "{out}_gathered")


def _reduced_across(reduction: str) -> Callable[[], str]:
    """The elementwise ``reduction`` of every process's row (``MPI_Allreduce``)."""
    return lambda: f"{{out}} = mpi.allreduce_{reduction}({{xs}}[0])"


MPI: Dict[str, OverRows] = {
    "psum": OverRows(_reduced_across("sum")),
    "pmean": OverRows(lambda: "{out} = np.mean(mpi.allgather({xs}[0]), axis=0)"),  # the rows of BATCH's mean
    "pmax": OverRows(_reduced_across("max")),
    "pmin": OverRows(_reduced_across("min")),
    "all_gather": OverRows(_gathered_across, lifted=BATCH["all_gather"].lifted),
    "ppermute": OverRows(lambda sources, destinations: f"{{out}} = mpi.permute({{xs}}[0], "
                                                       f"{tuple(zip(sources, destinations))!r})"),
    "psum_scatter": OverRows(lambda dimension, tiled, ndim: _scattered(dimension, tiled, ndim).replace(
                                 "np.sum({xs}, axis=0)", "mpi.allreduce_sum({xs}[0])"),
                             per_example=lambda *params: _block(*params).replace("{i}", "{g}"),
                             lifted=BATCH["psum_scatter"].lifted),
}
"""``pmap``'s transport across processes (one shard, one row of ``xs``, per process): MPI's collectives."""



def _over_gathered(rule: OverRows) -> OverRows:
    """``rule`` on the rows of every shard, gathered from the threads (``rt.shard_gather``), each shard's
    part read at its index along the whole axis."""
    gather = "{out}_gathered = rt.shard_gather({shards}, {xs}[0], {where})\n"
    part = rule.per_example
    return OverRows(lambda *params: gather + rule.shared(*params).replace("{xs}", "{out}_gathered"),
                    None if part is None else lambda *params: part(*params).replace("{i}", "{g}"), rule.lifted)


THREADS: Dict[str, OverRows] = {kind: _over_gathered(rule) for kind, rule in BATCH.items()}
"""``pmap``'s transport over CPU devices, one shard per thread (``transforms.pmap.thread_shards``): ``BATCH``'s
code on every shard's row."""

TRANSPORTS: Dict[str, Dict[str, OverRows]] = {"batch": BATCH, "mpi": MPI, "threads": THREADS}
