"""The helpers that collectives over ``vmap``'s examples call (``numbax.primitives.transports``).

The collectives lower to NumPy reductions over the stacked examples, which have their rules already, and to
three helpers here. ``ppermute``'s exchange of rows is linear, its transpose sending each row back (JAX's
``_ppermute_transpose_rule``). The rows' maximum and minimum (``pmax``, ``pmin``) have entries without rules,
as JAX has no derivative for them: a transformation refuses them. The markers a collective leaves
(``rt.collective_psum``) have no entry: a transformation that meets one differentiates a collective inside
the function that ``vmap`` maps, which is refused at the user's line.

Over the GPUs of a ``pmap``, a collective is a call the shard's host driver makes itself (``rt.gpu_psum``...,
``runtime.gpu_shards``): its entry says so to the GPU backend (``cuda.OnHost``), its result's stand-in that of
one shard's. It has no derivative rule either: a transformation inside the shard's function refuses it.
"""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
import functools

import numpy as np

from numbax import runtime as rt
from numbax.primitives import kinds, symbolic
from numbax.primitives.cuda import OnHost
from numbax.primitives.registry import def_linear, define, defvjp
from numbax.runtime.gpu_shards import combined


@defvjp(rt.permute_rows, aval=kinds.same_as(0), shape=symbolic.same_as(0))
def permute_rows(g, ans, x, sources, destinations):
    d[x] = rt.permute_rows(g, destinations, sources)


def _rows_reduced(app, args):
    """One row of the operand: its dtype, one axis fewer."""
    return (args[0][0], args[0][1] - 1) if args and args[0] is not None else None


def_linear(rt.permute_rows, "x, sources, destinations")
define(rt.max_rows, rt.min_rows, aval=_rows_reduced)  # no vjp, no jvp: JAX differentiates no pmax, no pmin


def _one_shard(kind: str, x, *params_and_where):
    """The stand-in of a collective's result over GPUs: the collective of one shard's stand-in."""
    return combined(kind, [np.asarray(x)], 0, params_and_where[:-1], params_and_where[-1])


for _kind in ("psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter"):
    define(getattr(rt, f"gpu_{_kind}"), cuda=OnHost(functools.partial(_one_shard, _kind)))
define(rt.gpu_ppermute, cuda=OnHost(lambda x, sources, destinations, where: x))  # a row of another shard
define(rt.gpu_axis_index, cuda=OnHost(lambda: np.int64(0)))
