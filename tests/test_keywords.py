"""Keyword arguments of NumPy and SciPy calls: implemented ones work, every other one is refused at the user's line."""
import inspect

import numpy as np
import pytest
import scipy.special

import numbax
from numbax.errors import NumbaxSpecializationError

X = np.array([.3, -.7, 1.1, .5])
Z = np.arange(12.0).reshape(3, 4) / 3


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def add_out(x):
    y = np.empty_like(x)
    np.add(x, x, out=y)
    return y


def add_out_positional(x):
    y = np.zeros_like(x)
    r = np.multiply(x, 3.0, y)
    return y + r


def exp_out_tuple(x):
    y = np.empty_like(x)
    np.exp(x, out=(y,))
    return y


def test_ufunc_out_receives_the_result():
    np.testing.assert_array_equal(numbax.jit(add_out)(X), add_out(X))
    np.testing.assert_array_equal(numbax.jit(add_out_positional)(X), add_out_positional(X))
    np.testing.assert_allclose(numbax.jit(exp_out_tuple)(X), np.exp(X), rtol=1e-15)


def out_wrong_kind(x):
    y = np.zeros_like(x, dtype=np.int64)
    np.add(x, x, out=y)
    return y


def test_ufunc_out_that_cannot_hold_the_result_is_refused():
    with pytest.raises(NumbaxSpecializationError, match="same_kind") as info:
        numbax.jit(out_wrong_kind)(X)
    assert f":{_line_of(out_wrong_kind, 'out=y')}:" in str(info.value)


def unknown_keyword(x):
    return np.sum(x, foo=1)


def reduction_out(x):
    y = np.zeros(())
    return np.sum(x, out=y)


def ufunc_where(x):
    return np.add(x, 1.0, where=x > 0)


def method_out(x):
    y = np.zeros(())
    return x.sum(out=y)


def linspace_endpoint(x):
    return np.linspace(0.0, 1.0, 5, endpoint=False) * x[0]


@pytest.mark.parametrize("fn, keyword, text", [
    (unknown_keyword, "foo", "foo=1"), (reduction_out, "out", "out=y"), (ufunc_where, "where", "where="),
    (method_out, "out", "out=y"), (linspace_endpoint, "endpoint", "endpoint="),
])
def test_keywords_numbax_does_not_implement_are_refused_at_the_line(fn, keyword, text):
    with pytest.raises(NumbaxSpecializationError) as info:
        numbax.jit(fn)(X)
    message = str(info.value)
    assert f"`{keyword}=`" in message and f":{_line_of(fn, text)}:" in message


def test_refused_under_grad_too():
    with pytest.raises(NumbaxSpecializationError, match="`foo=`"):
        numbax.grad(unknown_keyword)(X)


def keywords_at_defaults(x):
    return np.sum(x, axis=None, keepdims=False) + np.mean(x, dtype=None) + np.max(x, axis=0, keepdims=False)


def implemented_keywords(z):
    return np.sum(z, axis=1, keepdims=True) + np.std(z, axis=1, ddof=1, keepdims=True) + z.mean(axis=1, keepdims=True)


def test_implemented_and_default_keywords_compile_to_numpys_values():
    assert numbax.jit(keywords_at_defaults)(X) == pytest.approx(keywords_at_defaults(X), rel=1e-15)
    np.testing.assert_allclose(numbax.jit(implemented_keywords)(Z), implemented_keywords(Z), rtol=1e-14)


def lse_keepdims(z):
    return scipy.special.logsumexp(z, axis=1, keepdims=True)


def lse_axis0(z):
    return scipy.special.logsumexp(z, axis=0)


def lse_all_kept(z):
    return scipy.special.logsumexp(z, keepdims=True)


def lse_axes(z):
    return scipy.special.logsumexp(z, axis=(0, 1), keepdims=True)


def lse_b(z):
    return scipy.special.logsumexp(z, b=2.0)


@pytest.mark.parametrize("fn", [lse_keepdims, lse_axis0, lse_all_kept, lse_axes])
def test_logsumexp_keeps_dims_as_scipy(fn):
    got, want = numbax.jit(fn)(Z), fn(Z)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_logsumexp_keepdims_gradient_matches_jax():
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    jax.config.update("jax_enable_x64", True)
    got = numbax.grad(lambda z: np.sum(np.sin(lse_keepdims(z))))(Z)
    want = jax.grad(lambda z: jnp.sum(jnp.sin(logsumexp(z, axis=1, keepdims=True))))(Z)
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_logsumexp_b_is_refused():
    with pytest.raises(NumbaxSpecializationError, match="`b=` of `scipy.special.logsumexp`"):
        numbax.jit(lse_b)(Z)
