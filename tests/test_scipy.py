"""``numbax.scipy`` against ``jax.scipy`` (float64) and SciPy: values, both modes and second derivatives,
outside compiled code (NumPy) and inside it (the python backend, and compiled by Numba for the functions
whose stand-ins are new)."""
import os
import sys

import jax
import jax.numpy as jnp
import jax.scipy as jsp
import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats

import numbax
import numbax.scipy as nsp
from numbax.errors import NumbaxError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import jit_or_eager, to_jax  # noqa: E402,F401  (to_jax's module turns on jax_enable_x64)

X = np.array([[-2.5, -0.3, 0.1, 0.4], [1.7, 6.0, -7.0, 3.2]])
P = np.array([[0.02, 0.3, 0.5, 0.9], [0.999, 0.01, 0.7, 0.2]])  # probabilities
POS = np.array([[0.4, 1.3, 2.5, 7.1], [11.5, 0.9, 3.3, 0.05]])  # positive numbers
NEG = np.array([[-0.5, -1.5, -2.7, -3.2], [-4.1, -0.3, -5.5, -0.7]])  # negative non-integers
WEIGHTS = np.linspace(0.5, 1.5, X.size).reshape(X.shape)
A = np.array([[4.0, 1.0, 0.5], [0.3, 3.0, 0.2], [0.1, -0.4, 2.0]])
SPD = A @ A.T + np.eye(3)
B = np.array([[1.0, -2.0], [0.5, 0.3], [2.0, 1.0]])


def logsumexp_all(x, m):
    return m.special.logsumexp(x)


def logsumexp_rows(x, m):
    return m.special.logsumexp(x, axis=1)


def logsumexp_keepdims(x, m):
    return m.special.logsumexp(x, axis=0, keepdims=True)


def logsumexp_b(x, m):
    return m.special.logsumexp(x, axis=1, b=WEIGHTS)


def logsumexp_sign(x, m):
    value, sign = m.special.logsumexp(x, axis=0, b=np.cos(X), return_sign=True)
    return value * sign


def xlogy_x(x, m):
    return m.special.xlogy(x, POS)


def xlogy_y(y, m):
    return m.special.xlogy(X, y)


def xlog1py(y, m):
    return m.special.xlog1py(X, y)


def norm_logpdf(x, m):
    return m.stats.norm.logpdf(x, 0.3, 1.7)


def norm_logpdf_scale(v, m):
    return m.stats.norm.logpdf(X, 0.3, v)


def norm_pdf(x, m):
    return m.stats.norm.pdf(x, -0.2, 2.0)


def norm_cdf(x, m):
    return m.stats.norm.cdf(x, 0.5, 1.5)


def norm_logcdf(x, m):
    return m.stats.norm.logcdf(x)


def norm_sf(x, m):
    return m.stats.norm.sf(x, 0.5, 1.5)


def norm_logsf(x, m):
    return m.stats.norm.logsf(x)


def norm_ppf(q, m):
    return m.stats.norm.ppf(q, 1.0, 2.0)


def norm_isf(q, m):
    return m.stats.norm.isf(q, 1.0, 2.0)


def _special(name):
    def apply(x, m):
        return getattr(m.special, name)(x)

    return apply


def _negative_gammaln(x, m):
    return m.special.gammaln(x)


CASES = [(f.__name__, f, X) for f in (logsumexp_all, logsumexp_rows, logsumexp_keepdims, logsumexp_b, logsumexp_sign,
                                       xlogy_x, norm_logpdf, norm_pdf, norm_cdf, norm_logcdf, norm_sf, norm_logsf)]
CASES += [(f.__name__, f, POS) for f in (xlogy_y, xlog1py, norm_logpdf_scale)]
CASES += [(f.__name__, f, P) for f in (norm_ppf, norm_isf)]
CASES += [(n, _special(n), x) for n, x in (("gammaln", POS), ("digamma", POS), ("logit", P), ("ndtri", P),
                                           ("expit", X), ("erf", X), ("erfc", X), ("ndtr", X), ("log_ndtr", X))]
CASES += [("gammaln_negative", _negative_gammaln, NEG)]


def _loss(case, m, xp):
    def loss(x):
        out = case(x, m)
        if out.ndim == 2:
            return xp.sum(out * WEIGHTS * 1.3)
        return xp.sum(out * 1.3)

    return loss


@pytest.mark.parametrize("name, case, x", CASES, ids=[c[0] for c in CASES])
def test_special_and_norm_follow_jax_to_second_order(name, case, x):
    np.testing.assert_allclose(case(x, nsp), case(x, jsp), rtol=1e-12, atol=1e-14)
    loss, jax_loss = _loss(case, nsp, np), _loss(case, jsp, jnp)
    np.testing.assert_allclose(numbax.jit(loss, backend="python")(x), jax_loss(x), rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(loss, backend="python")(x), jax.grad(jax_loss)(x), rtol=1e-10,
                               atol=1e-13)
    tangent = np.cos(x)
    np.testing.assert_allclose(numbax.jvp(loss, (x,), (tangent,), backend="python")[1],
                               jax.jvp(jax_loss, (x,), (tangent,))[1], rtol=1e-10, atol=1e-13)
    if name == "digamma":  # its second derivative is trigamma's first, which numbax has no rule for
        with pytest.raises(NumbaxError, match="rt.trigamma"):
            numbax.hessian(loss, backend="python")(x)
        return
    np.testing.assert_allclose(numbax.hessian(loss, backend="python")(x), jax.hessian(jax_loss)(x), rtol=1e-8,
                               atol=1e-11)


def _gamma_pair(v):
    return nsp.special.gammaln(v), nsp.special.digamma(v)


def _gamma_triple(v):
    return nsp.special.gammaln(v), nsp.special.digamma(v), nsp.special.ndtri(v)


def _eigenvalues(a):
    return nsp.linalg.eigh(a, eigvals_only=True)


def test_special_values_match_scipy_in_the_tails():
    far = np.array([-40.0, -21.0, -20.01, -19.99, -3.0, 0.0, 4.9, 12.0])
    np.testing.assert_allclose(nsp.special.log_ndtr(far), scipy.special.log_ndtr(far), rtol=2e-14)
    p = np.array([1e-300, 1e-20, 1e-5, 0.02425, 0.5, 0.97575, 1 - 1e-10])
    np.testing.assert_allclose(numbax.jit(nsp.special.ndtri)(p), scipy.special.ndtri(p), rtol=1e-14)
    xs = np.array([1e-8, 0.3, 1.0, 2.5, 11.9, 30.0, 1e5, -0.5, -2.7, -10.3])
    compiled = numbax.jit(_gamma_pair)
    values, slopes = compiled(xs)
    np.testing.assert_allclose(values, scipy.special.gammaln(xs), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(slopes, scipy.special.digamma(xs), rtol=1e-13, atol=1e-14)
    edges = numbax.jit(_gamma_triple)
    for got, want in zip(edges(np.array([0.0, -1.0, 1.0])),
                         (scipy.special.gammaln([0.0, -1.0, 1.0]), scipy.special.digamma([0.0, -1.0, 1.0]),
                          scipy.special.ndtri([0.0, -1.0, 1.0]))):
        np.testing.assert_allclose(got, want, rtol=1e-13)  # inf, nan and -inf where SciPy gives them


def gamma_loss(x):
    return np.sum(scipy.special.gammaln(x) * scipy.special.digamma(x) + scipy.special.ndtri(x / 20.0))


def test_scipy_special_inside_jit_and_grad_compiled():
    """``scipy.special.gammaln`` inside ``jit`` raised Unrepresentable; its derivatives are JAX's."""
    def jax_gamma_loss(x):
        return jnp.sum(jsp.special.gammaln(x) * jsp.special.digamma(x) + jsp.special.ndtri(x / 20.0))

    x = POS[0]
    np.testing.assert_allclose(numbax.jit(gamma_loss)(x), jax_gamma_loss(x), rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(gamma_loss)(x), jax.grad(jax_gamma_loss)(x), rtol=1e-10)


def gammaln_third(x):
    return np.sum(scipy.special.gammaln(x))


def test_a_third_derivative_of_gammaln_is_refused():
    third = numbax.jacfwd(numbax.hessian(gammaln_third))
    with pytest.raises(NumbaxError, match="trigamma"):
        third(POS[0])


def cholesky_upper(a, m):
    return m.linalg.cholesky(a)


def cholesky_lower(a, m):
    return m.linalg.cholesky(a, lower=True)


def solve_triangular_a(a, m):
    return m.linalg.solve_triangular(a, B, lower=True)


def solve_triangular_upper_t(a, m):
    return m.linalg.solve_triangular(a, B, trans="T")


def solve_triangular_unit(a, m):
    return m.linalg.solve_triangular(a, B, trans=1, lower=True, unit_diagonal=True)


def solve_triangular_b(b, m):
    return m.linalg.solve_triangular(A, b)


def cho_solve_lower(a, m):
    return m.linalg.cho_solve(m.linalg.cho_factor(a, lower=True), B)


def cho_solve_upper_b(b, m):
    return m.linalg.cho_solve(m.linalg.cho_factor(SPD), b)


def solve(a, m):
    return m.linalg.solve(a, B)


def inv(a, m):
    return m.linalg.inv(a)


def det(a, m):
    return m.linalg.det(a)


def mvn_logpdf_x(x, m):
    return m.stats.multivariate_normal.logpdf(x, np.ones(3), SPD)


def mvn_logpdf_mean(mean, m):
    return m.stats.multivariate_normal.logpdf(B[:, 0], mean, SPD)


def mvn_logpdf_cov(cov, m):
    return m.stats.multivariate_normal.logpdf(B.T, np.ones(3), cov)


def mvn_pdf(x, m):
    return m.stats.multivariate_normal.pdf(x, np.zeros(3), SPD)


LINALG = [(cholesky_upper, SPD), (cholesky_lower, SPD), (solve_triangular_a, A), (solve_triangular_upper_t, A),
          (solve_triangular_unit, A), (solve_triangular_b, B), (cho_solve_lower, SPD), (cho_solve_upper_b, B),
          (solve, A), (inv, A), (det, A), (mvn_logpdf_x, B.T), (mvn_logpdf_mean, B[:, 1]), (mvn_logpdf_cov, SPD),
          (mvn_pdf, B[:, 0])]
# functions of a matrix's triangle: numbax's derivative is in the triangle read, JAX's in both (JAX does not
# symmetrize the input of jax.scipy.linalg.cholesky); they agree along symmetric directions
ONE_TRIANGLE = (cholesky_upper, cholesky_lower, cho_solve_lower)


def _sin_loss(case, m, xp):
    def loss(v):
        return xp.sum(xp.sin(case(v, m)))

    return loss


def _symmetric(a):
    return 0.5 * (a + a.T)


@pytest.mark.parametrize("case, x", LINALG, ids=[c[0].__name__ for c in LINALG])
def test_linalg_and_multivariate_normal_follow_jax_to_second_order(case, x):
    np.testing.assert_allclose(case(x, nsp), case(x, jsp), rtol=1e-12, atol=1e-14)
    loss, jax_loss = _sin_loss(case, nsp, np), _sin_loss(case, jsp, jnp)
    tangent = _symmetric(np.cos(x)) if case in ONE_TRIANGLE else np.cos(x)
    project = _symmetric if case in ONE_TRIANGLE else np.asarray
    np.testing.assert_allclose(project(numbax.grad(loss, backend="python")(x)),
                               project(jit_or_eager(jax.grad(jax_loss))(x)), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(numbax.jvp(loss, (x,), (tangent,), backend="python")[1],
                               jit_or_eager(lambda x, t: jax.jvp(jax_loss, (x,), (t,))[1])(x, tangent), rtol=1e-9,
                               atol=1e-12)
    hvp = numbax.jvp(numbax.grad(loss), (x,), (tangent,), backend="python")[1]
    jax_hvp = jit_or_eager(lambda x, t: jax.jvp(jax.grad(jax_loss), (x,), (t,))[1])(x, tangent)
    np.testing.assert_allclose(project(hvp), project(jax_hvp), rtol=1e-8, atol=1e-11)
    if case not in ONE_TRIANGLE:
        np.testing.assert_allclose(numbax.hessian(loss, backend="python")(x), jit_or_eager(jax.hessian(jax_loss))(x),
                                   rtol=1e-7, atol=1e-10)


def test_cholesky_derivative_is_in_the_triangle_read():
    gradient = numbax.grad(_sin_loss(cholesky_lower, nsp, np), backend="python")(SPD)
    assert np.all(np.triu(gradient, 1) == 0.0)
    eps = 1e-6
    bump = np.zeros((3, 3))
    bump[2, 0] = eps
    loss = _sin_loss(cholesky_lower, nsp, np)
    np.testing.assert_allclose(gradient[2, 0], (loss(SPD + bump) - loss(SPD - bump)) / (2 * eps), rtol=1e-7)


def test_linalg_values_match_scipy():
    np.testing.assert_allclose(nsp.linalg.cholesky(SPD), scipy.linalg.cholesky(SPD), rtol=1e-13)
    np.testing.assert_allclose(nsp.linalg.solve_triangular(A, B, trans=2, lower=True),
                               scipy.linalg.solve_triangular(A, B, trans=2, lower=True), rtol=1e-13)
    w, v = nsp.linalg.eigh(SPD)
    w_ref = scipy.linalg.eigh(SPD, eigvals_only=True)
    np.testing.assert_allclose(w, w_ref, rtol=1e-13)
    np.testing.assert_allclose(SPD @ v, v * w, atol=1e-12)
    np.testing.assert_allclose(numbax.jit(_eigenvalues)(SPD), w_ref, rtol=1e-13)


def gp_loss(log_scale, x, y):
    """The negative log marginal likelihood of a Gaussian process with a squared-exponential kernel."""
    d = x[:, None] - x[None, :]
    k = np.exp(-0.5 * d * d / np.exp(2.0 * log_scale)) + 0.1 * np.eye(x.shape[0])
    factor = nsp.linalg.cho_factor(k, lower=True)
    alpha = nsp.linalg.cho_solve(factor, y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(factor[0])))


def test_a_gaussian_process_likelihood_compiled():
    def jax_gp_loss(log_scale, x, y):
        d = x[:, None] - x[None, :]
        k = jnp.exp(-0.5 * d * d / jnp.exp(2.0 * log_scale)) + 0.1 * jnp.eye(x.shape[0])
        factor = jsp.linalg.cho_factor(k, lower=True)
        alpha = jsp.linalg.cho_solve(factor, y)
        return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(factor[0])))

    x = np.linspace(-2.0, 2.0, 7)
    y = np.sin(x)
    np.testing.assert_allclose(numbax.jit(gp_loss)(0.3, x, y), jax_gp_loss(0.3, x, y), rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(gp_loss)(0.3, x, y), jax.grad(jax_gp_loss)(0.3, x, y), rtol=1e-9)


def eigenvalue_sum(a):
    return np.sum(nsp.linalg.eigh(a)[0])


def test_refusals():
    with pytest.raises(NotImplementedError, match="assume_a"):
        nsp.linalg.solve(SPD, B, assume_a="pos")
    with pytest.raises(NumbaxError, match="eigh"):
        numbax.grad(eigenvalue_sum, backend="python")(SPD)
