"""The sweeps of a basis that make a Jacobian, written in the NumPy numbax compiles.

numbax specializes these functions at the call of a Jacobian, as it would a user's: the loops over leaves
run at compile time (each leaf's shape is known in rank, its size at run time), and ``vmap`` over the rows
of an identity matrix (each made where it is used) becomes one loop in the generated code whose body is the
forward mode (``jacfwd``: one column per input element) or the reverse mode (``jacrev``: one row per output
element) of the user's function. The blocks are arranged as JAX arranges them: for each output leaf, the
structure of the inputs differentiated, each block of shape ``output.shape + input.shape``.

Every index and reshape here holds by construction (``e[i]`` of ``e = np.zeros(n)`` with ``i`` in
``range(n)``, a slice of ``x.size`` elements reshaped to ``x``'s dims): they get no run-time checks
(``run_time_checks.unchecked_source``), which could not fail and would only cost compilation; the user's
function that the sweeps call keeps its own.
"""
import numpy as np

from numbax import tree_util
from numbax.ast_passes import run_time_checks
from numbax.ast_passes.specialize.compile_time import specialized_from_source
from numbax.transforms.vmap.batching import in_turn

run_time_checks.unchecked_source(__file__)


@specialized_from_source
def _dims(leaf):
    """``leaf.shape`` as a tuple of its dims (of a length known while specializing)."""
    return tuple([leaf.shape[i] for i in range(leaf.ndim)])


@specialized_from_source
def _split(e, like):
    """The leaves of the pytree ``like`` cut out of the flat vector ``e``, each in its leaf's shape and dtype."""
    parts = []
    start = 0
    for leaf in tree_util.tree_leaves(like):
        if leaf.ndim == 0:  # a number, as the function computes it
            parts.append(leaf.dtype.type(e[start]))
        else:
            parts.append(e[start:start + leaf.size].reshape(_dims(leaf)).astype(leaf.dtype))
        start = start + leaf.size
    return tree_util.tree_unflatten(tree_util.tree_structure(like), parts)


@specialized_from_source
def _size(tree):
    """The number of elements of all the leaves of ``tree``."""
    return sum([leaf.size for leaf in tree_util.tree_leaves(tree)])


@specialized_from_source
def _one_hot(i, n):
    """Row ``i`` of the identity of size ``n`` (made per row: the whole identity is n * n numbers)."""
    e = np.zeros(n)
    e[i] = 1.0
    return e


@specialized_from_source
def _columns_last(cols, ndim):
    """The columns ``cols`` (one per input element, along the first axis, each of ``ndim`` axes) moved to the
    last axis."""
    if ndim == 1:  # a vector's columns: the transpose, a view
        return cols.T
    return np.moveaxis(cols, 0, -1)


@specialized_from_source
def _column_dims(cols, ndim):
    """The dims of one column of ``cols``: the output leaf's shape, read off the columns (and its rank off the
    leaf, known while specializing), so that the output itself is not read at run time (vmap's first example
    is left to what else needs it)."""
    return tuple([cols.shape[i + 1] for i in range(ndim)])


@specialized_from_source
def _is_number(tree):
    """Whether ``tree`` is one 0-d leaf."""
    leaves = tree_util.tree_leaves(tree)
    return len(leaves) == 1 and leaves[0].ndim == 0


def jacfwd(pushforward, args, dyn, single, has_aux):
    """Forward mode along each input element: ``pushforward(args, tangents)`` gives ``(output, output
    tangent, aux)`` for tangents of ``dyn``, the arguments differentiated."""
    n = _size(dyn)

    def column(i):
        return pushforward(args, _split(_one_hot(i, n), dyn))

    out, columns, aux = in_turn(column, out_axes=(None, 0, None))(np.arange(n))
    example = dyn[0] if single else dyn
    blocks = []
    for leaf, cols in zip(tree_util.tree_leaves(out), tree_util.tree_leaves(columns)):
        parts = []
        start = 0
        for x in tree_util.tree_leaves(example):
            part = _columns_last(cols[start:start + x.size], leaf.ndim)
            parts.append(np.ascontiguousarray(part).reshape(_column_dims(cols, leaf.ndim) + _dims(x)))
            start = start + x.size
        blocks.append(tree_util.tree_unflatten(tree_util.tree_structure(example), parts))
    jac = tree_util.tree_unflatten(tree_util.tree_structure(out), blocks)
    return (jac, aux) if has_aux else jac


def jacrev(linearization, args, dyn, single, has_aux):
    """Reverse mode from each output element: ``linearization(*args)`` gives ``(output, pullback, aux)``,
    the pullback returning one cotangent per argument differentiated (``dyn``)."""
    out, pullback, aux = linearization(*args)
    if _is_number(out):  # one row, the gradient: no loop over a basis
        cotangents = pullback(_split(np.ones(1), out))
        jac = tree_util.tree_unflatten(tree_util.tree_structure(out), [cotangents[0] if single else cotangents])
        return (jac, aux) if has_aux else jac

    n = _size(out)

    def row(i):
        return pullback(_split(_one_hot(i, n), out))

    rows = in_turn(row)(np.arange(n))
    blocks = []
    start = 0
    for leaf in tree_util.tree_leaves(out):
        per_arg = []
        for cotangents, x in zip(rows, dyn):
            per_arg.append(tree_util.tree_map(
                lambda r, xi: r[start:start + leaf.size].reshape(_dims(leaf) + _dims(xi)), cotangents, x))
        blocks.append(per_arg[0] if single else tuple(per_arg))
        start = start + leaf.size
    jac = tree_util.tree_unflatten(tree_util.tree_structure(out), blocks)
    return (jac, aux) if has_aux else jac
