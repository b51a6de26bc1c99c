"""``*args`` and ``**kwargs`` parameters: bound as Python binds them (a tuple, a dict) in functions compiled code
calls, and in a function ``jit`` compiles (other transformations of such functions: ``test_star_args``)."""
import numpy as np
import pytest

import numbax

X = np.array([0.5, -1.0, 2.0])


def total(*arrays):
    return sum(np.sum(np.sin(a)) for a in arrays)


def shifted(a, *rest, scale=1.0, **offsets):
    out = a
    for r in rest:
        out = out + r
    return out * scale + offsets.get("bias", 0.0)


def calls_them(x, y):
    return total(x, y, y) + np.sum(shifted(x, y, scale=2.0, bias=0.5)) + total()


def want(x, y):
    return np.sum(np.sin(x)) + 2 * np.sum(np.sin(y)) + np.sum((x + y) * 2.0 + 0.5)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_variadic_parameters_of_functions_compiled_code_calls(backend):
    y = X[::-1].copy()
    np.testing.assert_allclose(numbax.jit(calls_them, backend=backend)(X, y), want(X, y), rtol=1e-15)
    grad = numbax.grad(calls_them, argnums=(0, 1), backend=backend)(X, y)
    np.testing.assert_allclose(grad[0], np.cos(X) + 2.0, rtol=1e-15)
    np.testing.assert_allclose(grad[1], 2 * np.cos(y) + 2.0, rtol=1e-15)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_jit_of_a_variadic_function(backend):
    jitted = numbax.jit(shifted, backend=backend)
    np.testing.assert_allclose(jitted(X, X, X, scale=3.0, bias=1.0), X * 9.0 + 1.0, rtol=1e-15)
    np.testing.assert_allclose(jitted(X), X, rtol=1e-15)
    np.testing.assert_allclose(numbax.jit(total, backend=backend)(X, 2 * X), total(X, 2 * X), rtol=1e-15)
