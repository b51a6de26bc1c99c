"""Derivative rules to second order: the gradients of the rule snippets, differentiated again.

Each snippet function of ``test_grad_rules`` is wrapped in a Hessian-vector product
``hvp(x, y) = <numbax.grad(f)(x, y), v>`` with fixed random directions ``v``, and
``numbax.grad(hvp)`` (the Hessian times ``v``) must match JAX's (float64) where JAX runs the snippet,
and central finite differences of numbax's own gradient otherwise. The python backend checks the
first snippet of every rule and every snippet of the rules whose gradients call the runtime helpers
that ``numbax.primitives.runtime_helpers`` differentiates (``RUNTIME``); the cpu backend, a selection of those. A rule
whose gradient the outer reverse mode cannot read yet (``SECOND_ORDER_REFUSED``) must be refused at
the inner call with a ``NumbaxDifferentiationError`` naming what its gradient uses.
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus import oracles  # noqa: E402
from test_grad_rules import SNIPPETS, _fn, _inputs  # noqa: E402

# rule -> what its gradient uses that reverse mode cannot differentiate yet
SECOND_ORDER_REFUSED = {}

# rules whose gradients call the runtime helpers (rt.unbroadcast, rt.unreduce with and without axes,
# rt.reshape_like, rt.matmul_grad_a/b, rt.cumsum_grad, rt.dsinc, rt.concatenate_grad, ...): every snippet
RUNTIME = ("operator.add", "operator.mul", "operator.truediv", "operator.pow", "operator.matmul", "numpy.sum",
           "numpy.mean", "numpy.max", "numpy.reshape", "numpy.dot", "numpy.broadcast_to", "numpy.cumsum",
           "numpy.trace", "numpy.diag", "numpy.diagonal", "numpy.tile", "numpy.repeat", "numpy.pad",
           "numpy.linalg.solve", "scipy.special.logsumexp", "numpy.var", "numpy.std", "numpy.argsort",
           "numpy.linalg.norm", "numpy.inner", "numpy.tensordot", "numpy.einsum", "numpy.sinc", "numpy.concatenate",
           "numpy.stack", "numpy.hstack", "numpy.vstack", "numpy.split", "numpy.cumprod",
           "numpy.linalg.cholesky", "numpy.vdot", "numpy.polyval", "numpy.convolve", "numpy.interp")
CHECKED = [(name, k, snippet) for name, k, snippet in SNIPPETS if k == 0 or name in RUNTIME]
CPU = [(name, k, snippet) for name, k, snippet in SNIPPETS if k == 0 and name in RUNTIME]


def _project(grads, directions):
    return sum([np.sum(g * v) for g, v in zip(grads, directions)])


def _hvp_of(differentiated, directions, n):
    """``<differentiated(*xs), directions>``: a function of ``n`` arguments numbax reads."""
    if n == 1:
        def hvp(a):
            return _project(differentiated(a), directions)
    elif n == 2:
        def hvp(a, b):
            return _project(differentiated(a, b), directions)
    else:
        def hvp(a, b, c):
            return _project(differentiated(a, b, c), directions)
    return hvp


def _directions(inputs, seed):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=np.shape(x)) if np.ndim(x) else float(rng.normal()) for x in inputs)


def _expected(name, k, snippet, inputs, directions):
    fn, nums = _fn(name, k), tuple(range(len(inputs)))
    if snippet.jax:
        fj = oracles.to_jax(fn)

        def jax_hvp(*xs):
            grads = jax.grad(fj, argnums=nums)(*xs)
            return sum(jnp.vdot(g, v) for g, v in zip(grads, directions))

        return "jax", jax.grad(jax_hvp, argnums=nums)(*inputs)
    first = numbax.grad(fn, argnums=nums, backend="python")
    return "fd", oracles.fd_grad(lambda *xs: _project(first(*xs), directions), inputs, nums)


def _check(name, k, snippet, backend):
    inputs = _inputs(name, k, snippet)
    nums = tuple(range(len(inputs)))
    directions = _directions(inputs, 17 + k)
    hvp = _hvp_of(numbax.grad(_fn(name, k), argnums=nums), directions, len(inputs))
    second = numbax.grad(hvp, argnums=nums, backend=backend)
    if name in SECOND_ORDER_REFUSED:
        with pytest.raises(numbax.NumbaxDifferentiationError, match=SECOND_ORDER_REFUSED[name]):
            second(*inputs)
        return
    oracle, expected = _expected(name, k, snippet, inputs, directions)
    rtol, atol = (1e-8, 1e-10) if oracle == "jax" else (1e-5, 1e-7)
    for g, e in zip(second(*inputs), expected):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=snippet.rtol or rtol, atol=atol,
                                   err_msg=f"{snippet.expr} [{oracle}]")


@pytest.mark.parametrize("name, k, snippet", CHECKED, ids=[f"{name}-{k}" for name, k, _ in CHECKED])
def test_second_order_python(name, k, snippet):
    _check(name, k, snippet, "python")


@pytest.mark.parametrize("name, k, snippet", CPU, ids=[f"{name}-{k}" for name, k, _ in CPU])
def test_second_order_cpu(name, k, snippet):
    _check(name, k, snippet, "cpu")
