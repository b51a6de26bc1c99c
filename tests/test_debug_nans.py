"""debug_nans / debug_infs: compiled and eager code raise FloatingPointError at the operation and line."""
from __future__ import annotations

import numpy as np
import pytest

import numbax
import numbax.numpy as jnp

BACKENDS = ("python", "cpu")
X = np.array([3.0, 4.0])


def log_of_shifted(x, n):
    total = 0.0
    for i in range(n):
        y = np.log(x - i)
        total = total + np.sum(y)
    return total


def root_sum(x):
    return np.sum(np.sqrt(x))


def exp_big(x):
    return np.exp(x * 1000.0)


def reciprocal(x):
    return 1.0 / x


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_reports_the_operation_and_line(backend):
    f = numbax.jit(log_of_shifted, backend=backend)
    assert np.isnan(f(X, 5))
    with numbax.config.debug_nans():
        with pytest.raises(FloatingPointError, match=r"nan\) encountered in np.log at .*test_debug_nans.py:\d+: "
                                                     r"y = np.log\(x - i\)"):
            f(X, 5)
        assert f(X, 3) == pytest.approx(log_of_shifted(X, 3))
    assert np.isnan(f(X, 5)), "the unchecked specialization serves calls again once the option is off"


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_checks_the_forward_sweep(backend):
    g = numbax.grad(root_sum, backend=backend)
    assert np.isnan(g(-X)).all()
    with numbax.config.debug_nans():
        with pytest.raises(FloatingPointError, match=r"np.sqrt at .*test_debug_nans.py:\d+: return np.sum\(np.sqrt\(x\)\)"):
            g(-X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_debug_infs_and_jax_names(backend):
    numbax.config.update("jax_debug_infs", True)
    try:
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in np.exp at .*test_debug_nans.py:\d+: return np.exp"):
            numbax.jit(exp_big, backend=backend)(1.0)
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in `/`"), np.errstate(divide="ignore"):
            numbax.jit(reciprocal, backend=backend)(np.float64(0.0))
    finally:
        numbax.config.update("debug_infs", False)
    with np.errstate(divide="ignore"):
        assert numbax.jit(reciprocal, backend=backend)(np.float64(0.0)) == np.inf, "NumPy's division gives inf"
    with pytest.raises(ZeroDivisionError):  # a Python float's raises, as in Python
        numbax.jit(reciprocal, backend=backend)(0.0)


def test_numbax_numpy_is_numpy_and_checks_eager_calls():
    assert jnp.tanh is np.tanh and jnp.float32 is np.float32 and jnp.linalg is np.linalg
    with numbax.config.debug_nans():
        with pytest.raises(FloatingPointError, match=r"numpy.log at test_debug_nans.py:\d+"):
            jnp.log(jnp.array([-1.0, 2.0]))
        assert jnp.log(jnp.array([1.0]))[0] == 0.0
        compiled = numbax.jit(lambda_free)
        assert compiled(np.ones(2)) == pytest.approx(2 * np.tanh(1.0))
        assert "np.tanh" in numbax.source(compiled, np.ones(2))
    with np.errstate(invalid="ignore"):
        assert np.isnan(jnp.log(jnp.array([-1.0])))[0]


def lambda_free(x):
    return jnp.sum(jnp.tanh(x))


def test_config_accepts_enable_x64():
    numbax.config.update("jax_enable_x64", True)
    with numbax.config.enable_x64():
        assert numbax.config.read("enable_x64")
