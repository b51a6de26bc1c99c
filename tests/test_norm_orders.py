"""``np.linalg.norm`` of every vector and matrix order against ``jax.numpy.linalg.norm`` (float64): values,
reverse and forward mode, central differences, JAX's subgradients at ties and zeros, ``vmap`` against
stacking, second derivatives where numbax has them, and the refusals (at the user's line, when compiling) of
what it has no rule for."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

M = np.array([[1.0, -2.0, 0.3], [3.0, 0.5, -1.2]])
V = np.array([1.0, -2.0, 0.7, 3.0])
S = np.array([[[1.0, -2.0], [0.3, 0.9]], [[3.0, 0.5], [-1.2, 2.2]]])  # a stack of matrices

# (operand, ord, axis, keepdims)
CASES = [(M, o, None, False) for o in (1, -1, np.inf, -np.inf, "nuc", 2, -2, "fro")] + \
        [(M, o, (1, 0), False) for o in (1, -np.inf, "nuc", -2)] + \
        [(M, o, (0, 1), True) for o in (np.inf, 2)] + \
        [(V, o, None, False) for o in (3, 0.5, -1, 0, -np.inf, 2.5)] + \
        [(M, o, 1, False) for o in (3, 0, np.inf)] + [(M, -1.5, 0, True)]
PYTHON = [(M, 1, None, False), (M, "nuc", (1, 0), False), (M, -2, None, False), (V, 3, None, False),
          (V, 0, None, False), (M, np.inf, 1, False)]


def _name(case) -> str:
    x, order, axis, keepdims = case
    return f"{x.ndim}d-ord{order}-axis{axis}{'-keep' if keepdims else ''}"


def _functions(order, axis, keepdims, shape):
    """The weighted sum of the norm (numbax's, JAX's): a scalar whose gradient reads every output."""
    out = np.linalg.norm(np.ones(shape), ord=order, axis=axis, keepdims=keepdims)
    weights = np.arange(1.0, 1.0 + np.size(out)).reshape(np.shape(out))

    def f(x):
        return np.sum(np.linalg.norm(x, ord=order, axis=axis, keepdims=keepdims) * weights)

    def fj(x):
        return jnp.sum(jnp.linalg.norm(x, ord=order, axis=axis, keepdims=keepdims) * weights)

    return f, fj


def _central(f, x, eps=1e-6):
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        out[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


def _check(case, backend):
    x, order, axis, keepdims = case
    f, fj = _functions(order, axis, keepdims, x.shape)
    value = numbax.jit(lambda a: np.linalg.norm(a, ord=order, axis=axis, keepdims=keepdims), backend=backend)(x)
    np.testing.assert_allclose(value, np.linalg.norm(x, ord=order, axis=axis, keepdims=keepdims), rtol=1e-12)
    grad = numbax.grad(f, backend=backend)(x)
    np.testing.assert_allclose(grad, jax.grad(fj)(x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad, _central(f, x), rtol=1e-6, atol=1e-6)
    tangent = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    primal, out = numbax.jvp(f, (x,), (tangent,), backend=backend)
    np.testing.assert_allclose(out, jax.jvp(fj, (x,), (tangent,))[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(primal, f(x), rtol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=_name)
def test_norm_orders_cpu(case):
    _check(case, "cpu")


@pytest.mark.parametrize("case", PYTHON, ids=_name)
def test_norm_orders_python(case):
    _check(case, "python")


# JAX's subgradients: ties share equally; the largest-of norms (``initial=0``) give half to the initial value at 0
SUBGRADIENTS = [(np.zeros((2, 3)), o, None) for o in (1, -1, np.inf, -np.inf)] + \
               [(np.array([[1.0, -2.0], [2.0, 1.0]]), o, None) for o in (1, -1, np.inf, -np.inf)] + \
               [(np.array([0.0, 1.0, -1.0]), o, None) for o in (np.inf, -np.inf, 1, 3, 0)] + \
               [(np.zeros(3), o, None) for o in (np.inf, -np.inf, 1, 0)] + \
               [(np.array([[0.0, 2.0], [0.0, -2.0]]), np.inf, 1)]


@pytest.mark.parametrize("case", SUBGRADIENTS, ids=lambda c: f"{c[0].tolist()}-ord{c[1]}-axis{c[2]}")
def test_subgradients_at_ties_and_zeros_match_jax(case):
    x, order, axis = case
    f, fj = _functions(order, axis, False, x.shape)
    np.testing.assert_allclose(numbax.grad(f)(x), jax.grad(fj)(x), rtol=1e-12)
    tangent = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    np.testing.assert_allclose(numbax.jvp(f, (x,), (tangent,))[1], jax.jvp(fj, (x,), (tangent,))[1], rtol=1e-12)


def test_p_norm_at_zeros_gives_jax_infinities_and_nans():
    x = np.array([0.0, 1.0, -1.0])
    for order in (0.5, -1):
        f, fj = _functions(order, None, False, x.shape)
        np.testing.assert_array_equal(numbax.grad(f)(x), np.asarray(jax.grad(fj)(x)))


def p_norm(x, p):
    return np.linalg.norm(x, ord=p)


def test_order_known_at_run_time():
    for p in (3.0, 0.5, np.inf, 1.0, 0.0):
        np.testing.assert_allclose(numbax.grad(p_norm)(V, p), jax.grad(lambda x: jnp.linalg.norm(x, ord=p))(V),
                                   rtol=1e-12)


def matrix_norms(x):
    return np.linalg.norm(x, ord=1) + np.linalg.norm(x, ord="nuc") + np.linalg.norm(x, ord=3, axis=1)[0]


def test_vmap_of_gradient_matches_stacking():
    batch = np.stack([M, 2.0 * M[::-1], M - 0.5])
    got = numbax.vmap(numbax.grad(matrix_norms))(batch)
    np.testing.assert_allclose(got, np.stack([numbax.grad(matrix_norms)(b) for b in batch]), rtol=1e-12)
    np.testing.assert_allclose(got, jax.vmap(jax.grad(to_jax(matrix_norms)))(batch), rtol=1e-10)


def test_float32_operand_gives_numpy_dtypes():
    x = M.astype(np.float32)
    value = numbax.jit(lambda a: np.linalg.norm(a, ord="nuc"))(x)
    assert value.dtype == np.linalg.norm(x, ord="nuc").dtype
    f, _ = _functions(-1, None, False, x.shape)
    assert numbax.grad(f)(x).dtype == np.float32


def vector_one(x):
    return np.linalg.norm(x, ord=1) * np.sum(x * x)


def test_second_order_where_numbax_has_it():
    np.testing.assert_allclose(numbax.hessian(vector_one)(V), jax.hessian(to_jax(vector_one))(V), rtol=1e-10)


def p3(x):
    return np.linalg.norm(x, ord=3)


def spectral(x):
    return np.linalg.norm(x, ord=2)


def stacked_ones(x):
    return np.sum(np.linalg.norm(x, ord=1, axis=(1, 2)))


def complex_ones(z):
    return np.linalg.norm(z, ord=1)


@pytest.mark.parametrize("transform", ["grad", "jvp"])
def test_stack_of_matrices_is_refused_at_the_users_line(transform):
    with pytest.raises(numbax.NumbaxDifferentiationError, match=r"test_norm_orders.py:\d+.*stack of matrices"):
        if transform == "grad":
            numbax.grad(stacked_ones)(S)
        else:
            numbax.jvp(stacked_ones, (S,), (S,))
    np.testing.assert_allclose(numbax.jit(stacked_ones)(S), stacked_ones(S), rtol=1e-12)


def test_complex_other_orders_are_refused():
    z = np.array([1.0 + 2.0j, -0.5j, 3.0])
    with pytest.raises(numbax.NumbaxDifferentiationError, match="complex numbers with ord=1"):
        numbax.grad(complex_ones)(z)


@pytest.mark.parametrize("fn, x, order", [(p3, V, "ord=3 over a vector"), (spectral, M[:, :2], "ord=2 over a matrix")])
def test_second_derivatives_without_rules_are_refused(fn, x, order):
    with pytest.raises(numbax.NumbaxDifferentiationError, match=f"second derivative of np.linalg.norm. with {order}"):
        numbax.hessian(fn)(x)
    with pytest.raises(numbax.NumbaxDifferentiationError, match=f"second derivative of np.linalg.norm. with {order}"):
        numbax.jacfwd(numbax.grad(fn))(x)
