"""The helpers that collectives over ``vmap``'s examples call (``numbax.primitives.transports``).

The collectives lower to NumPy reductions over the stacked examples, which have their rules already, and to
three helpers here. ``ppermute``'s exchange of rows is linear, its transpose sending each row back (JAX's
``_ppermute_transpose_rule``). The rows' maximum and minimum (``pmax``, ``pmin``) have entries without rules,
as JAX has no derivative for them: a transformation refuses them. The markers a collective leaves
(``rt.collective_psum``) have no entry: a transformation that meets one differentiates a collective inside
the function that ``vmap`` maps, which is refused at the user's line.
"""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
from numbax import runtime as rt
from numbax.primitives import kinds, symbolic
from numbax.primitives.registry import def_linear, define, defvjp


@defvjp(rt.permute_rows, aval=kinds.same_as(0), shape=symbolic.same_as(0))
def permute_rows(g, ans, x, sources, destinations):
    d[x] = rt.permute_rows(g, destinations, sources)


def _rows_reduced(app, args):
    """One row of the operand: its dtype, one axis fewer."""
    return (args[0][0], args[0][1] - 1) if args and args[0] is not None else None


def_linear(rt.permute_rows, "x, sources, destinations")
define(rt.max_rows, rt.min_rows, aval=_rows_reduced)  # no vjp, no jvp: JAX differentiates no pmax, no pmin
