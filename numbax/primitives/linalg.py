"""Products, contractions and linear algebra."""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
import gast
import numpy as np

from numbax import runtime as rt
from numbax.primitives import batching, kinds, symbolic
from numbax.primitives.registry import def_methods, def_nondifferentiable, define, defjvp, defvjp

_MATMUL = dict(aval=kinds.matmul, shape=symbolic.contraction)


@defvjp(gast.MatMult, np.matmul, np.dot, **_MATMUL)
def matmul(g, ans, a, b):
    d[a] = rt.matmul_grad_a(g, a, b)
    d[b] = rt.matmul_grad_b(g, a, b)


define(rt.matmul, **_MATMUL)


def _matmul_rows(node, operands, keywords, rows):
    """``a @ b`` for a block of rows, as one matrix product where one is (vectors and matrices)."""
    if len(operands) != 2 or keywords or not batching.known_ranks(operands):
        return None
    a, b = operands
    ranks = (a.rank, b.rank)
    if a.batched and not b.batched and ranks in ((1, 1), (1, 2)):
        return gast.BinOp(left=a.expr, op=gast.MatMult(), right=b.expr)  # rows of vectors times b
    if b.batched and not a.batched and ranks in ((1, 1), (2, 1)):
        a_t = a.expr if a.rank == 1 else gast.Attribute(value=a.expr, attr="T", ctx=gast.Load())
        return gast.BinOp(left=b.expr, op=gast.MatMult(), right=a_t)  # (a @ v)ᵀ = vᵀ aᵀ, row by row
    if a.batched and b.batched and ranks == (1, 1) and a.kind in ("f", "c") and b.kind in ("f", "c"):
        # (a sum of products is NumPy's dot of float64 and complex128 only: of bools it is their logical or, of
        # integers narrower than int64 it wraps where a wide sum does not)
        product = gast.BinOp(left=a.expr, op=gast.Mult(), right=b.expr)
        return batching.call("np.sum", product, keywords=[gast.keyword(arg="axis", value=batching.constant(1))])
    return None


define(gast.MatMult, np.matmul, np.dot, batch=_matmul_rows)
def_methods({"dot": np.dot})


def _inner(app, args):
    """The last axes contracted (unknown where an operand is)."""
    if len(args) > 1 and kinds.known(args[0], args[1]):
        return (kinds.promote(args[0][0], args[1][0]), max(args[0][1] + args[1][1] - 2, 0))
    return None


@defvjp(np.inner, aval=_inner)
def inner(g, ans, a, b):
    d[a] = rt.inner_vjp(g, 0, a, b)
    d[b] = rt.inner_vjp(g, 1, a, b)


define(rt.inner, aval=_inner)
def _outer(app, args):
    """A matrix of the operands' promoted kind (``np.outer`` of integers is integers)."""
    return (kinds.promote(args[0][0], args[1][0]), 2) if len(args) == 2 and kinds.known(*args) else None



def _vdot(app, args):
    """A number of the operands' promoted kind (unknown where one is)."""
    if len(args) > 1 and kinds.known(args[0], args[1]):
        return (kinds.promote(args[0][0], args[1][0]), 0)
    return None


define(rt.vdot, aval=_vdot)


@defvjp(np.vdot, aval=_vdot)
def vdot(g, ans, a, b):
    """The dot product of the flattened operands; real ones only (not complex-verified: reverse mode refuses a
    complex operand, whose conjugation this rule does not write)."""
    d[a] = rt.reshape_like(g * np.ravel(b), a)
    d[b] = rt.reshape_like(g * np.ravel(a), b)


@defvjp(np.outer, aval=_outer)
def outer(g, ans, a, b):
    d[a] = rt.reshape_like(g @ np.ravel(b), a)
    d[b] = rt.reshape_like(np.ravel(a) @ g, b)


# Contractions: the cotangent of operand k (legalize drops the None of an absent operand)

@defvjp(np.einsum)
def einsum(g, ans, subscripts, x, y=None, z=None):
    d[x] = rt.einsum_vjp(g, 0, subscripts, x, y, z)
    d[y] = rt.einsum_vjp(g, 1, subscripts, x, y, z)
    d[z] = rt.einsum_vjp(g, 2, subscripts, x, y, z)


@defvjp(np.tensordot)
def tensordot(g, ans, a, b, axes=2):
    d[a] = rt.tensordot_vjp(g, 0, a, b, axes)
    d[b] = rt.tensordot_vjp(g, 1, a, b, axes)


# Matrices

_MATRIX = dict(aval=kinds.elementwise("f"))  # a float matrix (stack) of the operand's ndim


@defvjp(np.linalg.inv, **_MATRIX)
def inv(g, ans, a):
    d[a] = -(ans.T @ g @ ans.T)


def _determinant(app, args):
    """Over the last two axes: floats, or complex numbers (unknown where the operand is)."""
    return (kinds.promote("f", args[0][0]), max(args[0][1] - 2, 0)) if args and args[0] else None


@defvjp(np.linalg.det, aval=_determinant)
def det(g, ans, a):
    d[a] = g * ans * np.linalg.inv(a).T


def _solve(app, args):
    """``x`` of ``a @ x = b`` has ``b``'s ndim, a float."""
    if len(args) > 1 and kinds.known(args[0], args[1]):
        return (kinds.promote(args[0][0], args[1][0], "f"), args[1][1])
    return None


@defvjp(np.linalg.solve, aval=_solve)
def solve(g, ans, a, b):
    gb = np.linalg.solve(a.T, g)
    d[a] = rt.solve_grad_a(gb, ans)
    d[b] = gb


@defvjp(np.linalg.cholesky, **_MATRIX)
def cholesky(g, ans, a):
    d[a] = rt.cholesky_grad(g, ans)


# Primitives with several results, split into one primitive per result when unpacked

SPLIT_RESULTS = {np.linalg.slogdet: ("rt.slogdet_sign", "rt.slogdet_logabs")}


@defvjp(np.linalg.slogdet)
def slogdet(g, ans, a):
    d[a] = rt.slogdet_grad(g, a)


@defvjp(rt.slogdet_logabs, aval=_determinant)
def slogdet_logabs(g, ans, a):
    d[a] = g * np.linalg.inv(a).T


def_nondifferentiable(rt.slogdet_sign, aval=_determinant)

# Checked against JAX for complex operands (tests/test_grad_complex.py)
define(gast.MatMult, np.matmul, np.dot, np.inner, np.einsum, np.tensordot, np.linalg.inv, np.linalg.solve,
       complex_verified=True)


# Forward mode: ``g`` is the operand's tangent, the line its part of the result's tangent


@defjvp(gast.MatMult, np.matmul)
def matmul_jvp(g, ans, a, b):
    d[a] = g @ b
    d[b] = a @ g


@defjvp(np.dot)
def dot_jvp(g, ans, a, b):
    d[a] = np.dot(g, b)
    d[b] = np.dot(a, g)


@defjvp(np.linalg.inv)
def inv_jvp(g, ans, a):
    d[a] = -(ans @ g @ ans)


@defjvp(np.linalg.solve)
def solve_jvp(g, ans, a, b):
    d[a] = -np.linalg.solve(a, g @ ans)
    d[b] = np.linalg.solve(a, g)


@defjvp(np.linalg.det)
def det_jvp(g, ans, a):
    d[a] = ans * np.trace(np.linalg.solve(a, g))


@defjvp(np.vdot)
def vdot_jvp(g, ans, a, b):
    d[a] = np.vdot(g, b)
    d[b] = np.vdot(a, g)


@defjvp(np.inner)
def inner_jvp(g, ans, a, b):
    d[a] = np.inner(g, b)
    d[b] = np.inner(a, g)


@defjvp(np.outer)
def outer_jvp(g, ans, a, b):
    d[a] = np.outer(g, b)
    d[b] = np.outer(a, g)


@defjvp(np.tensordot)
def tensordot_jvp(g, ans, a, b, axes=2):
    d[a] = np.tensordot(g, b, axes)
    d[b] = np.tensordot(a, g, axes)


@defjvp(np.einsum)
def einsum_jvp(g, ans, subscripts, x, y=None, z=None):
    """Multilinear: each operand's tangent in its place."""
    d[x] = np.einsum(subscripts, g) if y is None else np.einsum(subscripts, g, y) if z is None else \
        np.einsum(subscripts, g, y, z)
    d[y] = np.einsum(subscripts, x, g) if z is None else np.einsum(subscripts, x, g, z)
    d[z] = np.einsum(subscripts, x, y, g)


@defjvp(rt.slogdet_logabs)
def slogdet_logabs_jvp(g, ans, a):
    d[a] = np.trace(np.linalg.solve(a, g))


@defjvp(np.linalg.cholesky)
def cholesky_jvp(g, ans, a):
    """``L phi(inv(L) sym(g) inv(L).T)``, ``phi`` the lower triangle with its diagonal halved (JAX's rule, which
    reads the symmetric part of the tangent)."""
    inner = np.linalg.solve(ans, np.linalg.solve(ans, 0.5 * (g + g.T)).T)
    d[a] = ans @ (np.tril(inner) - 0.5 * np.diag(np.diag(inner)))
