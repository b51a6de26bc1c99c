"""Products, contractions and linear algebra."""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
import gast
import numpy as np

from numbax import runtime as rt
from numbax.primitives import kinds, symbolic
from numbax.primitives.registry import def_methods, def_nondifferentiable, define, defvjp

_MATMUL = dict(aval=kinds.matmul, shape=symbolic.contraction)


@defvjp(gast.MatMult, np.matmul, np.dot, **_MATMUL)
def matmul(g, ans, a, b):
    d[a] = rt.matmul_grad_a(g, a, b)
    d[b] = rt.matmul_grad_b(g, a, b)


define(np.linalg.matmul, rt.matmul, **_MATMUL)
def_methods({"dot": np.dot})


def _inner(app, args):
    """The last axes contracted (a number where an operand is unknown, as reverse mode takes it)."""
    if len(args) > 1 and kinds.known(args[0], args[1]):
        return (kinds.promote(args[0][0], args[1][0]), max(args[0][1] + args[1][1] - 2, 0))
    return ("f", 0)


@defvjp(np.inner, aval=_inner)
def inner(g, ans, a, b):
    d[a] = rt.inner_vjp(g, 0, a, b)
    d[b] = rt.inner_vjp(g, 1, a, b)


define(rt.inner, aval=_inner)
define(np.linalg.outer, aval=kinds.constant("f", 2))
define(np.vdot, aval=kinds.constant("f", 0))


@defvjp(np.outer, aval=kinds.constant("f", 2))
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
    """Over the last two axes (a number where the operand is unknown)."""
    return ("f", max(args[0][1] - 2, 0)) if args and args[0] else ("f", 0)


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
