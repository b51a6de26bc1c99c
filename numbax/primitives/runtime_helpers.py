"""The runtime helpers that generated code calls: their abstract values, and the reverse-mode rules a second
derivative reads.

A gradient generated at a ``numbax.grad`` call inside a differentiated function
becomes part of that function (``nested``), so the outer reverse mode meets the
helpers of the inner one's adjoint code. Each is linear in its cotangent
argument (the adjoints of products and of ``var`` and ``norm`` depend on a primal
too; ``rt.dsinc``, sinc's derivative, is a function of the primal alone), and
each cotangent it receives has the shape of the result it undoes, which
broadcasting made at least as large as the operand (``rt.unbroadcast(g, x)``
only ever sums ``g`` down to ``x``). The parameter that NumPy's rules call ``g``
is ``cotangent`` here: ``g`` is the template's own cotangent. A helper without a
rule here is refused by ``higher_order.check`` at the user's call.
"""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
from numbax import runtime as rt
from numbax.primitives import kinds, symbolic
from numbax.primitives.batching import call
from numbax.primitives.reductions import norm_call
from numbax.primitives.registry import ELEMENTWISE, def_linear, def_nondifferentiable, define, defjvp, defvjp
from numbax.runtime import batching, checks, debug, one_hot, scan
from numbax.runtime import identity as identities


@defvjp(rt.unbroadcast)
def unbroadcast(g, ans, cotangent, x):
    d[cotangent] = rt.unreduce(g, cotangent, None, False)


@defvjp(rt.unreduce)
def unreduce(g, ans, cotangent, a, axis=None, keepdims=False):
    d[cotangent] = rt.unbroadcast(g, cotangent) if axis is None else np.sum(g, axis=axis, keepdims=keepdims)


@defvjp(rt.reshape_like)
def reshape_like(g, ans, cotangent, a):
    d[cotangent] = rt.reshape_like(g, cotangent)


@defvjp(rt.matmul_grad_a)
def matmul_grad_a(g, ans, cotangent, a, b):
    d[cotangent] = g @ b
    d[b] = rt.matmul_grad_b(cotangent, g, b)


@defvjp(rt.matmul_grad_b)
def matmul_grad_b(g, ans, cotangent, a, b):
    d[cotangent] = a @ g
    d[a] = rt.matmul_grad_a(cotangent, a, g)


@defvjp(rt.scalar_output, rt.real_output, rt.copy_of, rt.widen, rt.power_exponent)
def identity(g, ans, x):
    """(``rt.power_exponent`` is ``x - 1`` where ``x`` is a float, the only exponent with a derivative.)"""
    d[x] = g


@defvjp(rt.stored_cotangent)
def stored_cotangent(g, ans, cotangent, array):
    """Linear in the cotangent; ``array``'s dtype only decides whether it passes."""
    d[cotangent] = rt.stored_cotangent(g, array)


@defvjp(rt.match_kind)
def match_kind(g, ans, cotangent, x):
    """Real-linear in the cotangent (the real part, the embedding of a real in the complex numbers, or the
    identity): its transpose, JAX's, maps back into the cotangent's own kind; ``x`` gives only the kind."""
    d[cotangent] = rt.match_kind(g, cotangent)
    d[x] = None


@defvjp(rt.primal_dtype)
def primal_dtype(g, ans, cotangent, x):
    d[cotangent] = g


@defvjp(rt.last_writes)
def last_writes(g, ans, cotangent, a, index):
    """Linear in the cotangent, and its own transpose: it keeps or zeroes each element."""
    d[cotangent] = rt.last_writes(g, a, index)
    d[a] = None


@defvjp(rt.sort_grad)
def sort_grad(g, ans, cotangent, a, axis=-1):
    """Linear in the cotangent; the permutation is piecewise constant in ``a``."""
    d[cotangent] = rt.sort_gather(g, a, axis)


@defvjp(rt.sort_gather)
def sort_gather(g, ans, cotangent, a, axis=-1):
    d[cotangent] = rt.sort_grad(g, a, axis)


@defvjp(rt.dsinc)
def dsinc(g, ans, x):
    d[x] = g * rt.d2sinc(x)


def_nondifferentiable(rt.ones_like, rt.zeros_like, rt.size_of, rt.chooser_weights, rt.tie_share, rt.tie_shares,
                      rt.abs_slope, rt.median_weights, rt.inverse_axes, rt.cotangent_dtype,
                      rt.check_contraction, rt.real_output)
# constant whatever their operand, complex ones too (``rt.abs_slope`` is not: ``z / |z|`` varies with ``z``)
define(rt.ones_like, rt.zeros_like, rt.size_of, complex_verified=True)
define(rt.ones_like, rt.zeros_like, batch=ELEMENTWISE)


def _unbroadcast_rows(node, operands, keywords, rows):
    """``rt.unbroadcast(g, x)`` of rows of ``g`` to one ``x`` shared by the rows: each row summed to ``x``."""
    if len(operands) != 2 or keywords or not operands[0].batched or operands[1].batched:
        return None
    return call("rt.unbroadcast_rows", operands[0].expr, operands[1].expr)


define(rt.unbroadcast, batch=_unbroadcast_rows)


@defvjp(rt.reserve_rows)
def reserve_rows(g, ans, table, rows):
    d[table] = g[:table.shape[0]]


@defvjp(rt.grow_rows)
def grow_rows(g, ans, table):
    d[table] = g[:table.shape[0]]


# Adjoints of shape operations and reductions: linear in the cotangent, whose adjoint is the operation itself

@defvjp(rt.cumsum_grad)
def cumsum_grad(g, ans, cotangent, a, axis=None):
    d[cotangent] = np.cumsum(g) if axis is None else np.cumsum(g, axis)


@defvjp(rt.cumprod_grad)
def cumprod_grad(g, ans, cotangent, a, axis=None):
    """Linear in ``cotangent``, whose adjoint is cumprod's JVP at ``a``. A third derivative would need
    ``rt.cumprod_grad_vjp``'s own rule: ``higher_order.check`` refuses it."""
    d[cotangent] = rt.cumprod_jvp(g, a, axis)
    d[a] = rt.cumprod_grad_vjp(g, cotangent, a, axis)


@defvjp(rt.cumprod_jvp)
def cumprod_jvp(g, ans, tangent, a, axis=None):
    """Linear in ``tangent``, whose adjoint is ``rt.cumprod_grad``; both are ``<g, cumprod''(a)[tangent]>``'s
    derivative in ``a``, which is symmetric in ``g`` and ``tangent``."""
    d[tangent] = rt.cumprod_grad(g, a, axis)
    d[a] = rt.cumprod_grad_vjp(tangent, g, a, axis)


@defvjp(rt.prod_others)
def prod_others(g, ans, a, axis=None):
    """A third derivative would need ``rt.prod_others_vjp``'s own rule: ``higher_order.check`` refuses it."""
    d[a] = rt.prod_others_vjp(g, a, axis)


@defvjp(rt.trace_grad)
def trace_grad(g, ans, cotangent, a, offset=0, axis1=0, axis2=1):
    d[cotangent] = np.trace(g, offset, axis1, axis2)


@defvjp(rt.diag_grad)
def diag_grad(g, ans, cotangent, v, k=0):
    d[cotangent] = np.diag(g, k)


@defvjp(rt.diagonal_grad)
def diagonal_grad(g, ans, cotangent, a, offset=0, axis1=0, axis2=1):
    d[cotangent] = np.diagonal(g, offset, axis1, axis2)


@defvjp(rt.tile_grad)
def tile_grad(g, ans, cotangent, A, reps):
    d[cotangent] = np.tile(g, reps)


@defvjp(rt.repeat_grad)
def repeat_grad(g, ans, cotangent, a, repeats, axis=None):
    d[cotangent] = np.repeat(g, repeats) if axis is None else np.repeat(g, repeats, axis)


# Adjoints of sequences of arrays: the cotangent split into a tuple, and a list of cotangents joined; the
# template's ``g`` is then a list, one cotangent per element, and a split's adjoint is the join, and back

@defvjp(rt.concatenate_grad, rt.stack_grad, sequence=True)
def concatenate_grad(g, ans, cotangent, arrays, axis=0):
    d[cotangent] = rt.sequence_join(g, cotangent, axis)


@defvjp(rt.hstack_grad, sequence=True)
def hstack_grad(g, ans, cotangent, tup):
    d[cotangent] = rt.sequence_join(g, cotangent, 0 if cotangent.ndim == 1 else 1)


@defvjp(rt.vstack_grad, sequence=True)
def vstack_grad(g, ans, cotangent, tup):
    d[cotangent] = rt.sequence_join(g, cotangent, 0)


@defvjp(rt.split_grad)
def split_grad(g, ans, cotangent, ary, indices_or_sections, axis=0):
    d[cotangent] = np.split(g, indices_or_sections, axis)


@defvjp(rt.cholesky_grad)
def cholesky_grad(g, ans, cotangent, L):
    """``rt.cholesky_grad`` is ``sym(inv(L).T @ low(L.T @ cotangent) @ inv(L))``, ``low`` the lower triangle
    with its diagonal halved: ``low`` and ``sym`` are their own adjoints, and ``inv`` and the products chain."""
    phi = L.T @ cotangent
    low = np.tril(phi) - 0.5 * np.diag(np.diag(phi))
    inv = np.linalg.inv(L)
    sym = 0.5 * (g + g.T)
    back = inv @ sym @ inv.T
    dphi = np.tril(back) - 0.5 * np.diag(np.diag(back))
    d[cotangent] = L @ dphi
    d[L] = cotangent @ dphi.T - inv.T @ (low + low.T) @ inv @ sym @ inv.T


@defjvp(rt.cholesky_grad)
def cholesky_grad_jvp(g, ans, cotangent, L):
    """Linear in ``cotangent``; in ``L`` (tangent ``g``), with ``s0 = inv(L).T @ low @ inv(L)`` and ``d inv(L) =
    -inv(L) @ g @ inv(L)``: ``sym(inv(L).T @ (dlow - g.T @ inv(L).T @ low - low @ inv(L) @ g) @ inv(L))``."""
    d[cotangent] = rt.cholesky_grad(g, L)
    inv = np.linalg.inv(L)
    phi = L.T @ cotangent
    low = np.tril(phi) - 0.5 * np.diag(np.diag(phi))
    dphi = g.T @ cotangent
    dlow = np.tril(dphi) - 0.5 * np.diag(np.diag(dphi))
    inner = inv.T @ (dlow - g.T @ inv.T @ low - low @ inv @ g) @ inv
    d[L] = 0.5 * (inner + inner.T)


@defvjp(rt.solve_grad_a)
def solve_grad_a(g, ans, gb, x):
    d[gb] = -(g @ x)
    d[x] = -(g.T @ gb)


@defvjp(rt.pad_grad)
def pad_grad(g, ans, cotangent, array, pad_width, mode="constant"):
    d[cotangent] = np.pad(g, pad_width)  # rt.pad_grad takes constant mode only


@defvjp(rt.var_grad)
def var_grad(g, ans, cotangent, a, axis=None, ddof=0, keepdims=False):
    """``cotangent`` spread over ``a`` times ``2 (a - mean) / (n - ddof)``: bilinear; the mean is a projection."""
    spread = g * rt.unreduce(cotangent, a, axis, keepdims) * np.divide(
        2.0 * rt.size_of(cotangent), rt.size_of(a) - ddof * rt.size_of(cotangent))
    weighted = g * rt.var_grad(rt.ones_like(cotangent), a, axis, ddof, keepdims)
    d[cotangent] = rt.unbroadcast(weighted, cotangent) if axis is None else np.sum(weighted, axis=axis,
                                                                                    keepdims=keepdims)
    d[a] = spread - rt.unreduce(np.mean(spread) if axis is None else np.mean(spread, axis=axis), a, axis, False)


@defvjp(rt.index_added)
def index_added(g, ans, a, index, values):
    d[a] = g
    d[values] = rt.unbroadcast(g[index], values)


def _norm_grad_refusal(app, args):
    """The rules below hold for the 2-norm and Frobenius', and the 1-norm of vectors."""
    x, order, axis, matrix = norm_call(app, args, 2)
    if order is None or order == "fro" or matrix is False and order in (1, 2):
        return None
    what = "a run-time ord" if order is kinds.UNKNOWN else f"ord={order!r}"
    over = {True: "a matrix", False: "a vector", None: "an array of unknown rank or axes"}[matrix]
    return (f"(a second derivative of np.linalg.norm) with {what} over {over}: second derivatives have rules for "
            f"ord None and 'fro', and 1 and 2 over vectors")


@defvjp(rt.norm_grad, refuse=_norm_grad_refusal)
def norm_grad(g, ans, cotangent, norm, x, ord=None, axis=None, keepdims=False):
    """The 2-norm's (and Frobenius') ``x * cotangent / norm``, and the 1-norm's ``abs_slope(x) * cotangent``;
    ``refuse`` refuses the others (the inf-norms' ties, the matrix norms)."""
    along = g * x if ord in (None, 2, "fro") else g * rt.abs_slope(x)
    summed = rt.unbroadcast(along, cotangent) if axis is None else np.sum(along, axis=axis, keepdims=keepdims)
    d[cotangent] = summed / norm if ord in (None, 2, "fro") else summed
    d[norm] = -summed * cotangent / (norm * norm) if ord in (None, 2, "fro") else rt.zeros_like(norm)
    d[x] = g * rt.unreduce(cotangent / norm, x, axis, keepdims) if ord in (None, 2, "fro") else rt.zeros_like(x)


# Adjoints of contractions with respect to operand ``k``: multilinear in the cotangent and the other operands,
# whose own adjoints are the contraction with ``g`` in place of operand ``k``, and the adjoint of another operand

@defvjp(rt.inner_vjp)
def inner_vjp(g, ans, cotangent, k, a, b):
    d[cotangent] = np.inner(g, b) if k == 0 else np.inner(a, g)
    d[a] = rt.zeros_like(a) if k == 0 else rt.inner_vjp(cotangent, 0, a, g)
    d[b] = rt.inner_vjp(cotangent, 1, g, b) if k == 0 else rt.zeros_like(b)


@defvjp(rt.tensordot_vjp)
def tensordot_vjp(g, ans, cotangent, k, a, b, axes=2):
    d[cotangent] = np.tensordot(g, b, axes) if k == 0 else np.tensordot(a, g, axes)
    d[a] = rt.zeros_like(a) if k == 0 else rt.tensordot_vjp(cotangent, 0, a, g, axes)
    d[b] = rt.tensordot_vjp(cotangent, 1, g, b, axes) if k == 0 else rt.zeros_like(b)


@defvjp(rt.einsum_vjp)
def einsum_vjp(g, ans, cotangent, k, subscripts, x, y=None, z=None):
    d[cotangent] = (np.einsum(subscripts, g) if y is None else np.einsum(subscripts, g, y) if z is None else
                    np.einsum(subscripts, g, y, z)) if k == 0 else (
                    np.einsum(subscripts, x, g) if z is None else np.einsum(subscripts, x, g, z)) if k == 1 else \
        np.einsum(subscripts, x, y, g)
    d[x] = rt.zeros_like(x) if k == 0 else rt.einsum_vjp(cotangent, 0, subscripts, x, g, z) if k == 1 else \
        rt.einsum_vjp(cotangent, 0, subscripts, x, y, g)
    d[y] = rt.einsum_vjp(cotangent, 1, subscripts, g, y, z) if k == 0 else rt.zeros_like(y) if k == 1 else \
        rt.einsum_vjp(cotangent, 1, subscripts, x, y, g)
    d[z] = rt.einsum_vjp(cotangent, 2, subscripts, g, y, z) if k == 0 else \
        rt.einsum_vjp(cotangent, 2, subscripts, x, g, z) if k == 1 else rt.zeros_like(z)


# Forward-mode rules of the helpers adjoint code calls: what forward mode over reverse mode (``jvp`` of
# ``grad``, a Hessian-vector product) reads. Each is linear in its cotangent, so its tangent there is the
# helper applied to the tangent (``def_linear``); the products' and ``var``'s are bilinear, linear in the primal
# too. An argument passed for its shape or dtype only (``rt.unbroadcast(g, x)``'s ``x``) has ``d[x] = None``.

def_linear(rt.unbroadcast, "cotangent, x", shape_only=("x",))
def_linear(rt.unreduce, "cotangent, a, axis=None, keepdims=False", shape_only=("a",))
def_linear(rt.reshape_like, "cotangent, a", shape_only=("a",))


@defjvp(rt.matmul_grad_a)
def matmul_grad_a_jvp(g, ans, cotangent, a, b):
    d[cotangent] = rt.matmul_grad_a(g, a, b)
    d[b] = rt.matmul_grad_a(cotangent, a, g)
    d[a] = None


@defjvp(rt.matmul_grad_b)
def matmul_grad_b_jvp(g, ans, cotangent, a, b):
    d[cotangent] = rt.matmul_grad_b(g, a, b)
    d[a] = rt.matmul_grad_b(cotangent, g, b)
    d[b] = None


@defjvp(rt.scalar_output)
def identity_jvp(g, ans, x):
    d[x] = g


@defjvp(rt.copy_of, rt.power_exponent)
def new_array_jvp(g, ans, x):
    """The value is a new array, so its tangent is one too: a later write into the operand's tangent (the
    generated gradient restores an array it overwrote, ``dy[:] = dy_old``) must not change it."""
    d[x] = rt.copy_of(g)


@defjvp(rt.widen)
def widen_jvp(g, ans, x):
    """Linear: the tangent widened alike, so it is a copy exactly where the value is one."""
    d[x] = rt.widen(g)


@defjvp(rt.reserve_rows)
def reserve_rows_jvp(g, ans, table, rows):
    """Linear in the table: the tangents' table is reserved alike (the same object where the value's is)."""
    d[table] = rt.reserve_rows(g, rows)


@defjvp(rt.grow_rows)
def grow_rows_jvp(g, ans, table):
    """Linear in the table: the tangents' table grows alike (its new rows unset, as the value's)."""
    d[table] = rt.grow_rows(g)


@defjvp(rt.real_output)
def real_output_jvp(g, ans, out, where):
    d[out] = g


def_linear(rt.stored_cotangent, "cotangent, array", shape_only=("array",))
def_linear(rt.primal_dtype, "cotangent, x", shape_only=("x",))
def_linear(rt.match_kind, "cotangent, x", shape_only=("x",))
def_linear(rt.sort_grad, "cotangent, a, axis=-1", shape_only=("a",))
def_linear(rt.last_writes, "g, a, index", shape_only=("a",))
def_linear(rt.sort_gather, "cotangent, a, axis=-1", shape_only=("a",))


@defjvp(rt.dsinc)
def dsinc_jvp(g, ans, x):
    d[x] = g * rt.d2sinc(x)


@defjvp(rt.index_added)
def index_added_jvp(g, ans, a, index, values):
    d[a] = g
    d[values] = rt.index_added(rt.zeros_like(a), index, g)


def_linear(rt.cumsum_grad, "cotangent, a, axis=None", shape_only=("a",))
def_linear(rt.trace_grad, "cotangent, a, offset=0, axis1=0, axis2=1", shape_only=("a",))
def_linear(rt.diag_grad, "cotangent, v, k=0", shape_only=("v",))
def_linear(rt.diagonal_grad, "cotangent, a, offset=0, axis1=0, axis2=1", shape_only=("a",))
def_linear(rt.tile_grad, "cotangent, A, reps", shape_only=("A",))
def_linear(rt.repeat_grad, "cotangent, a, repeats, axis=None", shape_only=("a",))


@defjvp(rt.prod_others)
def prod_others_jvp(g, ans, a, axis=None):
    """``prod_others``' Jacobian is symmetric (``d others_i / d a_j`` is the product of all but ``a_i`` and
    ``a_j``): its tangent is its own vjp of the tangent."""
    d[a] = rt.prod_others_vjp(g, a, axis)


@defjvp(rt.cumprod_grad)
def cumprod_grad_jvp(g, ans, cotangent, a, axis=None):
    """Linear in ``cotangent``; in ``a`` the second derivative of cumprod, symmetric in its two directions,
    contracted with the cotangent: what ``rt.cumprod_grad_vjp`` computes, the direction in either slot."""
    d[cotangent] = rt.cumprod_grad(g, a, axis)
    d[a] = rt.cumprod_grad_vjp(g, cotangent, a, axis)


@defjvp(rt.var_grad)
def var_grad_jvp(g, ans, cotangent, a, axis=None, ddof=0, keepdims=False):
    """Linear in the cotangent and in ``a - mean(a)``, which is linear in ``a``."""
    d[cotangent] = rt.var_grad(g, a, axis, ddof, keepdims)
    d[a] = rt.var_grad(cotangent, g, axis, ddof, keepdims)


def_linear(rt.concatenate_grad, "cotangent, arrays, axis=0", shape_only=("arrays",))
def_linear(rt.stack_grad, "cotangent, arrays, axis=0", shape_only=("arrays",))
def_linear(rt.hstack_grad, "cotangent, tup", shape_only=("tup",))
def_linear(rt.vstack_grad, "cotangent, tup", shape_only=("tup",))
def_linear(rt.split_grad, "cotangent, ary, indices_or_sections, axis=0", shape_only=("ary",))
def_linear(rt.pad_grad, 'cotangent, array, pad_width, mode="constant"', shape_only=("array",))


@defjvp(rt.solve_grad_a)
def solve_grad_a_jvp(g, ans, gb, x):
    """Bilinear in ``gb`` and ``x``."""
    d[gb] = rt.solve_grad_a(g, x)
    d[x] = rt.solve_grad_a(gb, g)


@defjvp(rt.norm_grad)
def norm_grad_jvp(g, ans, cotangent, norm, x, ord=None, axis=None, keepdims=False):
    """The 2-norm's (and Frobenius') ``unreduce(cotangent / norm) * x``: linear in the cotangent and in ``x``,
    ``-cotangent / norm**2`` in the norm; the 1-norm's ``unreduce(cotangent) * abs_slope(x)`` is constant in
    both (``refuse`` refuses the other orders)."""
    d[cotangent] = rt.norm_grad(g, norm, x, ord, axis, keepdims)
    d[norm] = rt.norm_grad(-cotangent * g / norm, norm, x, ord, axis, keepdims) if ord in (None, 2, "fro") \
        else rt.zeros_like(ans)
    d[x] = rt.norm_grad(cotangent, norm, g, ord, axis, keepdims) if ord in (None, 2, "fro") else rt.zeros_like(ans)


# Adjoints of contractions: multilinear in the cotangent and the operands other than ``k`` (operand ``k``
# gives its shape only), so each one's tangent is the adjoint with the tangent in its place

@defjvp(rt.inner_vjp)
def inner_vjp_jvp(g, ans, cotangent, k, a, b):
    d[cotangent] = rt.inner_vjp(g, k, a, b)
    d[a] = rt.zeros_like(ans) if k == 0 else rt.inner_vjp(cotangent, k, g, b)
    d[b] = rt.inner_vjp(cotangent, k, a, g) if k == 0 else rt.zeros_like(ans)


@defjvp(rt.tensordot_vjp)
def tensordot_vjp_jvp(g, ans, cotangent, k, a, b, axes=2):
    d[cotangent] = rt.tensordot_vjp(g, k, a, b, axes)
    d[a] = rt.zeros_like(ans) if k == 0 else rt.tensordot_vjp(cotangent, k, g, b, axes)
    d[b] = rt.tensordot_vjp(cotangent, k, a, g, axes) if k == 0 else rt.zeros_like(ans)


@defjvp(rt.einsum_vjp)
def einsum_vjp_jvp(g, ans, cotangent, k, subscripts, x, y=None, z=None):
    d[cotangent] = rt.einsum_vjp(g, k, subscripts, x) if y is None else \
        rt.einsum_vjp(g, k, subscripts, x, y) if z is None else rt.einsum_vjp(g, k, subscripts, x, y, z)
    d[x] = rt.zeros_like(ans) if k == 0 else rt.einsum_vjp(cotangent, k, subscripts, g, y) if z is None else \
        rt.einsum_vjp(cotangent, k, subscripts, g, y, z)
    d[y] = rt.zeros_like(ans) if k == 1 else rt.einsum_vjp(cotangent, k, subscripts, x, g) if z is None else \
        rt.einsum_vjp(cotangent, k, subscripts, x, g, z)
    d[z] = rt.zeros_like(ans) if k == 2 else rt.einsum_vjp(cotangent, k, subscripts, x, y, g)


# The inputs of a custom rule's own code: a constant to the transformation that reads the rule; once it has
# run they are ``custom_input_seen``, which has no rule: a transformation of that code (a second derivative
# through a custom rule) refuses them; those of a custom_jvp function's primal code are the identity then
def_nondifferentiable(identities.custom_input, identities.custom_primal, aval=kinds.same_as(0),
                      shape=symbolic.same_as(0))
define(identities.custom_input_seen, aval=kinds.same_as(0), shape=symbolic.same_as(0))


# Helpers of no derivative of their own: what reverse mode and the random numbers' lowering call for
# effects, checks and bookkeeping
def_nondifferentiable(identities.stop_gradient, scan.stack_buffer, scan.stack_rows, batching.batch_size,
                      debug.debug_print, debug.debug_callback, *(getattr(checks, name) for name in checks.__all__))


def _stacked(app, args):
    """``rt.stack_buffer(first, n)``: room for ``n`` values like ``first``, one axis more."""
    return (args[0][0], args[0][1] + 1) if args and args[0] is not None else None


define(scan.stack_buffer, aval=_stacked)
define(scan.stack_rows, aval=kinds.same_as(0))  # ``rt.stack_rows(block, n)``: n rows like the block's
# no derivative for complex values either: JAX's stop_gradient; room for values, not values
define(identities.stop_gradient, scan.stack_buffer, scan.stack_rows, complex_verified=True)


def _one_hot_aval(app, args):
    """``rt.one_hot_product(basis, b, index, n, start)`` is ``basis @ b``."""
    return kinds.matmul(app, args[:2])


def _one_hot_shape(app, args):
    """The shape of ``basis @ b``."""
    return symbolic.contraction(app, args[:2])


# the product by rows of an identity that ``one_hot_products`` writes, after every transformation: no
# derivative rule, so that a transformation meeting it refuses it
define(one_hot.one_hot_product, aval=_one_hot_aval, shape=_one_hot_shape)


# Abstract values and shapes of the helpers reverse mode writes (their first arguments are cotangents)


def _float_like(cotangent: int, like: int, axis_at: int = None):
    """A float of the promoted kind of arguments ``0 .. cotangent``, with argument ``like``'s ndim (flat,
    where ``axis_at`` names no axis)."""
    def rule(app, args):
        if len(args) <= max(cotangent, like) or not kinds.known(*args[:max(cotangent, like) + 1]):
            return None
        kind = kinds.promote(*(a[0] for a in args[:cotangent + 1]), "f")
        if axis_at is not None and not kinds.given_axis(app, axis_at):
            return (kind, 1)
        return (kind, args[like][1])

    return rule


def _unbroadcast(app, args):
    """The cotangent (a float at least) summed down to the operand's ndim."""
    if len(args) > 1 and kinds.known(args[0], args[1]):
        return (kinds.promote(args[0][0], "f"), args[1][1])
    return None


def _cotangent_shaped(position: int, operand_kind: bool = False):
    """The rule of a helper computing an operand's cotangent from ``g`` (argument 0): the ndim of the operand
    at ``position``; ``g``'s kind (a float at least) where it is linear in ``g`` alone, promoted with the
    operand's where the operand enters it too (``rt.var_grad``: a complex operand's cotangent is complex)."""
    def rule(app, args):
        if len(args) <= position or not kinds.known(args[0], args[position]):
            return None
        kind = kinds.promote(args[0][0], args[position][0]) if operand_kind else args[0][0]
        return (kinds.promote(kind, "f"), args[position][1])

    return rule


def _matmul_cotangent(shaped: int, other: int):
    """``rt.matmul_grad_a(g, a, b)`` (``shaped`` 1, ``other`` 2) and ``rt.matmul_grad_b``: ``g`` times the other
    factor, a float at least, in the shape of the factor at ``shaped``."""
    def rule(app, args):
        if len(args) < 3 or not kinds.known(*args[:3]):
            return None
        return (kinds.promote(args[0][0], args[other][0], "f"), args[shaped][1])

    return rule


def _stored(app, args):
    """``rt.stored_cotangent(g, array)``: ``g``'s, a complex ``g``'s real part where ``array`` holds real floats
    (unknown where ``array``'s kind is)."""
    if not args or args[0] is None:
        return None
    if args[0][0] == "c":
        array = args[1] if len(args) > 1 else None
        return None if array is None else ("f", args[0][1]) if array[0] == "f" else args[0]
    return args[0]


def _matched(app, args):
    """``rt.match_kind(g, x)``: ``g``'s ndim, complex where ``x`` is, else a real float."""
    if len(args) < 2 or not kinds.known(args[0], args[1]):
        return None
    return ("c" if args[1][0] == "c" else "f", args[0][1])


def _scalar_output(app, args):
    """grad's output, checked to be a number: an array stays an array (the check raises JAX's TypeError when it
    runs, and the code after it must still compile, typed like the value it was given)."""
    if not args or not args[0]:
        return None
    return args[0] if args[0][1] else (args[0][0], 0)


def _chooser_weights(app, args):
    return ("f", args[0][1]) if args and args[0] else None


define(rt.unbroadcast, rt.unreduce, aval=_unbroadcast, shape=symbolic.same_as(1))  # ``a``'s, whatever the axis
define(rt.reshape_like, rt.tile_grad, rt.repeat_grad, rt.pad_grad, rt.cumsum_grad, rt.diagonal_grad, rt.diag_grad,
       rt.trace_grad, rt.sort_grad, aval=_cotangent_shaped(1))
define(rt.matmul_grad_a, aval=_matmul_cotangent(1, 2))
define(rt.matmul_grad_b, aval=_matmul_cotangent(2, 1))
define(rt.widen, aval=_float_like(0, 0))
define(rt.dsinc, aval=kinds.elementwise("f"))
define(rt.var_grad, rt.cholesky_grad, aval=_cotangent_shaped(1, operand_kind=True))
define(rt.norm_grad, aval=_cotangent_shaped(2, operand_kind=True))
define(rt.primal_dtype, aval=kinds.same_as(1))
define(rt.ones_like, rt.zeros_like, aval=kinds.elementwise("f"))
define(rt.reserve_rows, rt.grow_rows, rt.real_output, rt.last_writes, aval=kinds.same_as(0))
define(rt.stored_cotangent, aval=_stored)
# linear in the cotangent (the real part, the embedding in the complex numbers, sums of elements): their rules,
# the helper again or its transpose, hold for complex operands as JAX's
define(rt.match_kind, aval=_matched, shape=symbolic.same_as(0))
define(rt.stored_cotangent, rt.match_kind, rt.unbroadcast, rt.unreduce, complex_verified=True)
define(rt.index_added, aval=kinds.same_as(0), shape=symbolic.same_as(0))
define(rt.scalar_output, aval=_scalar_output)
define(rt.chooser_weights, aval=_chooser_weights, shape=symbolic.same_as(0))
define(rt.prod_others, aval=_float_like(0, 0), shape=symbolic.same_as(0))
define(rt.prod_others_vjp, rt.cumprod_grad, aval=_float_like(1, 1), shape=symbolic.same_as(1))
define(rt.cumprod_grad_vjp, aval=_float_like(2, 2), shape=symbolic.same_as(2))
define(rt.cumprod_jvp, aval=_float_like(1, 1, axis_at=2), shape=symbolic.same_as(1, axis_at=2, axis_given=True))
define(rt.copy_of, rt.abs_slope, rt.power_exponent, rt.zeros_like, rt.ones_like, rt.maximum, rt.minimum,
       aval=kinds.elementwise(), shape=symbolic.elementwise)
