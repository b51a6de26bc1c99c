"""The runtime helpers of reverse mode on ordinary calls, and the contractions they refuse.

Each helper types (and computes JAX's numbers) on the calls users make: ``np.linalg.norm(x, ord=2)`` of a
vector, a NumPy function given to ``grad`` itself (``grad(np.var)``, as JAX's ``grad(jnp.var)``), the
pullback of ``np.split`` with a list cotangent, ``rt.matmul_vjp``/``rt.inner_vjp`` on every layout and on
mixed dtypes. Contractions whose operands do not fit raise ``NumbaxShapeError`` (a TypeError, as JAX's
``dot_general``) at the user's line, even where the gradient never computes the product; what first order
refuses (``np.dot`` over N-D arrays, einsum's sublist form) is refused the same when a pullback runs inside
compiled code (``numbax.vjp`` inside ``grad`` or ``jit``), by the same check.
"""
import os
import sys

import jax
import jax.numpy as jnp
import numba
import numpy as np
import pytest

import numbax
from numbax import runtime as rt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import fd_grad, to_jax  # noqa: E402  (also turns on JAX's float64 mode)

BACKENDS = ("python", "cpu")
X = np.array([0.3, -0.7, 1.1, 0.5])
RNG = np.random.default_rng(3)
A, B, V = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2)), RNG.normal(size=4)


def _close(got, want, rtol=1e-10):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-12)


# ---- helpers that type on ordinary calls -------------------------------------------------------

def norm_2(x):
    return np.linalg.norm(x, ord=2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_norm_ord_2_of_a_vector(backend):
    _close(numbax.grad(norm_2, backend=backend)(X), jax.grad(to_jax(norm_2))(X))
    _close(numbax.grad(norm_2, backend=backend)(X), fd_grad(norm_2, (X,)), rtol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, jfn, args", [
    (np.var, jnp.var, (0.5,)), (np.var, jnp.var, (X,)), (np.tanh, jnp.tanh, (0.3,)), (np.dot, jnp.dot, (X, X)),
    (np.linalg.norm, jnp.linalg.norm, (X,)),
], ids=["var-scalar", "var", "tanh", "dot", "norm"])
def test_grad_of_a_numpy_function(fn, jfn, args, backend):
    _close(numbax.grad(fn, backend=backend)(*args), jax.grad(jfn)(*args))


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_and_vmap_of_a_numpy_function(backend):
    _close(numbax.jit(np.var, backend=backend)(X), jnp.var(X))
    rows = np.arange(6.0).reshape(3, 2)
    _close(numbax.vmap(np.sum, backend=backend)(rows), jax.vmap(jnp.sum)(rows))
    _close(numbax.vmap(numbax.grad(np.var), backend=backend)(rows), jax.vmap(jax.grad(jnp.var))(rows))


def halves(x):
    return np.split(x, 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_split_pullback_takes_a_list_cotangent(backend):
    cotangent = [np.array([1.0, 2.0]), np.array([3.0, -4.0])]
    _, pull = numbax.vjp(halves, X, backend=backend)
    _, jax_pull = jax.vjp(to_jax(halves), X)
    _close(pull(cotangent), jax_pull([jnp.asarray(c) for c in cotangent]))


LAYOUTS = {
    "C": (A, B), "F": (np.asfortranarray(A), np.asfortranarray(B)), "strided": (RNG.normal(size=(3, 8))[:, ::2], B),
    "transposed": (np.ascontiguousarray(A.T).T, np.ascontiguousarray(B.T).T), "1x2": (V, B), "2x1": (A, V),
    "1x1": (V, V), "float32": (A.astype(np.float32), B.astype(np.float32)), "mixed": (A.astype(np.float32), B),
    "int": (np.arange(12).reshape(3, 4), B),
}
_MATMUL_VJP = [numba.njit(lambda g, a, b: rt.matmul_vjp(g, 0, a, b)),
               numba.njit(lambda g, a, b: rt.matmul_vjp(g, 1, a, b))]
_INNER_VJP = [numba.njit(lambda g, a, b: rt.inner_vjp(g, 0, a, b)),
              numba.njit(lambda g, a, b: rt.inner_vjp(g, 1, a, b))]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_matmul_and_inner_vjp_on_layouts(layout):
    a, b = LAYOUTS[layout]
    out = np.matmul(a, b)
    g = np.linspace(-1.0, 2.0, out.size).reshape(out.shape) if out.ndim else 1.5
    a64, b64 = a.astype(np.float64), b.astype(np.float64)  # the oracle in float64, as the cotangent
    _, pull = jax.vjp(jnp.matmul, a64, b64)
    for k in (0, 1):
        _close(_MATMUL_VJP[k](g, a, b), pull(jnp.asarray(g))[k], rtol=1e-6)
    bt = b.T if b.ndim == 2 else b  # np.inner(a, b.T) is a @ b
    _, pull = jax.vjp(jnp.inner, a64, bt.astype(np.float64))
    for k in (0, 1):
        _close(_INNER_VJP[k](g, a, bt), pull(jnp.asarray(g))[k], rtol=1e-6)


def tanh_product(a, b):
    return np.sum(np.tanh(a @ b))


@pytest.mark.parametrize("layout", ["F", "strided", "float32", "mixed"])
def test_grad_of_a_product_on_layouts(layout):
    a, b = LAYOUTS[layout]
    _close(numbax.grad(tanh_product, argnums=(0, 1))(a, b), jax.grad(to_jax(tanh_product), argnums=(0, 1))(a, b),
           rtol=1e-5)


# ---- contractions whose operands do not fit ----------------------------------------------------

def dot_sum(x, y):
    return np.sum(np.dot(x, y))


def matmul_sum(a, b):
    return np.sum(a @ b)


def inner_sum(a, b):
    return np.sum(np.inner(a, b))


def tensordot_sum(a, b):
    return np.sum(np.tensordot(a, b, 1))


def einsum_sum(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b))


MISFITS = [(dot_sum, np.ones(3), np.ones(4), "np.dot"), (matmul_sum, np.ones((2, 3)), np.ones((4, 2)), "@"),
           (inner_sum, np.ones((2, 3)), np.ones(4), "np.inner"),
           (tensordot_sum, np.ones((2, 3)), np.ones((4, 2)), "np.tensordot"),
           (einsum_sum, np.ones((2, 3)), np.ones((4, 2)), "np.einsum")]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, a, b, name", MISFITS, ids=[m[0].__name__ for m in MISFITS])
def test_misfit_contraction_raises_a_type_error_at_the_users_line(fn, a, b, name, backend):
    line = fn.__code__.co_firstlineno + 1
    with pytest.raises(numbax.NumbaxShapeError) as info:
        numbax.grad(fn, argnums=(0, 1), backend=backend)(a, b)
    assert isinstance(info.value, TypeError)
    message = str(info.value)
    assert f"{os.path.basename(__file__)}:{line}: {name} requires contracting dimensions" in message
    assert f"got shapes {a.shape} and {b.shape}" in message
    with pytest.raises(ValueError if fn is einsum_sum else TypeError):  # JAX's einsum raises ValueError
        jax.grad(to_jax(fn), argnums=(0, 1))(a, b)


def test_fitting_contractions_pass_the_check():
    a, b = RNG.normal(size=(1, 2, 3)), RNG.normal(size=(4, 3, 2))  # matmul's batch axes broadcast a size of 1
    _close(numbax.grad(matmul_sum, argnums=(0, 1))(a, b), jax.grad(to_jax(matmul_sum), argnums=(0, 1))(a, b))


# ---- refused by first order, and by the same check where a pullback runs in compiled code -------

P, Q = np.arange(6.0).reshape(2, 3) / 5, np.arange(24.0).reshape(4, 3, 2) / 7


def dot_nd(a, b):
    return np.dot(a, b)


def einsum_sublist(x):
    return np.einsum(x, (0, 1), (1, 0))


def dot_pullback(a, b):
    out, pull = numbax.vjp(dot_nd, a, b)
    ga, gb = pull(np.ones_like(out))
    return np.sum(ga * ga) + np.sum(gb)


def einsum_pullback(x, y):
    out, pull = numbax.vjp(einsum_sublist, x)
    (gx,) = pull(np.ones_like(out) * 2.0)
    return np.sum(gx * x) + y


def dot_nd_sum(a, b):
    return np.sum(np.dot(a, b))


def einsum_sublist_sum(x):
    return np.sum(np.einsum(x, (0, 1), (1, 0)))


REFUSED = [(dot_nd_sum, (P, Q), "np.dot of an array of more than two dimensions"),
           (einsum_sublist_sum, (P,), "np.einsum's sublist form")]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args, what", REFUSED, ids=["dot-nd", "einsum-sublist"])
def test_first_order_refuses(fn, args, what, backend):
    with pytest.raises(numbax.NumbaxDifferentiationError, match=what) as info:
        numbax.grad(fn, argnums=tuple(range(len(args))), backend=backend)(*args)
    assert f"{os.path.basename(__file__)}:{fn.__code__.co_firstlineno + 1}:" in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("transform", ["grad", "jit"])
@pytest.mark.parametrize("fn, args, what", [(dot_pullback, (P, Q), REFUSED[0][2]),
                                            (einsum_pullback, (P, 1.0), REFUSED[1][2])], ids=["dot-nd", "einsum"])
def test_pullback_in_compiled_code_refuses_the_same(fn, args, what, transform, backend):
    compiled = numbax.grad(fn, backend=backend) if transform == "grad" else numbax.jit(fn, backend=backend)
    with pytest.raises(numbax.NumbaxDifferentiationError, match=what):
        compiled(*args)
