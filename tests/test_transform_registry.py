"""The transform registry and the one mechanism by which transformations compose.

Every transformation ``transforms.registry`` declares is made from its entry (what ``numbax show
--transform`` and ``numbax.source`` read), and every ordered pair of them composes: ``outer(inner(f))``
against JAX's same composition (float64), on the python backend (the generated code, run as Python) and,
for the pairs that only composition reaches, compiled.
"""
from __future__ import annotations

import itertools
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax import generated_source
from numbax.api import Jitted
from numbax.transforms.registry import TRANSFORMATIONS

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402  (also turns on jax_enable_x64)

X = np.array([0.3, -0.7, 1.1])


def field(x):
    return np.sin(x) * x[0] + np.cos(x[1]) * x


def scalar(x):
    return np.sum(np.sin(x) * x[0])


def test_every_transformation_is_made_from_its_entry():
    """Each entry says what it rewrites and how it composes, and makes a ``Jitted`` whose code is shown."""
    assert list(TRANSFORMATIONS) == list(generated_source.TRANSFORMS)
    for name, entry in TRANSFORMATIONS.items():
        assert entry.name == name and entry.rewrites and entry.composes
        made = generated_source.transformed(scalar, name)
        assert isinstance(made, Jitted)
        assert "def " in made.generate((X,), {}, None).source
    with pytest.raises(ValueError, match="jvp takes no static arguments"):
        generated_source.transformed(scalar, "jvp", static_argnums=(0,))
    with pytest.raises(ValueError, match="unknown transform 'nope'"):
        generated_source.transformed(scalar, "nope")


def _sum_grad(numbax_side: bool, backend: str):
    def make(g):
        if not numbax_side:
            return jax.grad(lambda x: jnp.sum(g(x)))

        def total(x):
            return np.sum(g(x))

        return numbax.grad(total, backend=backend)

    return make


def _tangent(numbax_side: bool, backend: str):
    def make(g):
        if not numbax_side:
            return lambda x: jax.jvp(g, (x,), (jnp.ones_like(x),))[1]

        def push(x):
            return numbax.jvp(g, (x,), (np.ones_like(x),))[1]

        return numbax.jit(push, backend=backend)

    return make


def _transformations(numbax_side: bool, backend: str) -> dict:
    """name -> a transformation of a function of a vector (numbax's for ``backend``, or JAX's)."""
    if not numbax_side:
        return {"jit": jax.jit, "grad": _sum_grad(False, backend), "jvp": _tangent(False, backend),
                "jacfwd": jax.jacfwd, "jacrev": jax.jacrev, "vmap": jax.vmap}
    return {"jit": lambda g: numbax.jit(g, backend=backend), "grad": _sum_grad(True, backend),
            "jvp": _tangent(True, backend), "jacfwd": lambda g: numbax.jacfwd(g, backend=backend),
            "jacrev": lambda g: numbax.jacrev(g, backend=backend),
            "vmap": lambda g: numbax.vmap(g, backend=backend)}


PAIRS = list(itertools.product(_transformations(False, "cpu"), repeat=2))


def _composed(pair, backend: str):
    ours, theirs = _transformations(True, backend), _transformations(False, backend)
    mine, jaxs = field, to_jax(field)
    for name in reversed(pair):
        mine, jaxs = ours[name](mine), theirs[name](jaxs)
    arg = X
    for _ in range(pair.count("vmap")):
        arg = np.stack([arg, 0.5 * arg + 0.1])
    return mine, jaxs, arg


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}-of-{p[1]}")
def test_every_pair_composes_as_in_jax(pair):
    mine, jaxs, arg = _composed(pair, "python")
    want = np.asarray(jaxs(arg))
    got = mine(arg)
    assert np.shape(got) == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("pair", [("jit", "jit"), ("jacrev", "jacrev"), ("grad", "vmap")],
                         ids=lambda p: f"{p[0]}-of-{p[1]}")
def test_compiled_compositions(pair):
    """``jit(jit(f))`` is ``jit(f)``; ``jacrev(jacrev(f))`` (one sweep inside another of the same kind) is
    not taken for recursion."""
    mine, jaxs, arg = _composed(pair, "cpu")
    np.testing.assert_allclose(mine(arg), np.asarray(jaxs(arg)), rtol=1e-10, atol=1e-12)


def takes(x, n, *, scale=1.0):
    return scale * x ** n


def test_jit_of_jit_keeps_both_static_arguments():
    inner = numbax.jit(takes, static_argnums=1)
    outer = numbax.jit(inner, static_argnames="scale")
    assert type(outer) is Jitted and outer.fun is takes
    direct = numbax.jit(takes, static_argnums=1, static_argnames="scale")
    assert (outer.static_argnums, outer.static_argnames) == (direct.static_argnums, direct.static_argnames)
    assert "n" in outer.static_argnames and 1 in outer.static_argnums
    np.testing.assert_allclose(outer(X, 3, scale=2.0), 2.0 * X ** 3)


def summed_jacobian(x):
    return np.sum(numbax.jacfwd(field, backend="python")(x))


def test_a_refused_composition_names_the_users_function():
    """A third derivative through a batch loop's list tape is refused (fail closed), at the user's ``def``
    when the call that meets it is one numbax wrote (the wrapper of ``jacfwd(grad(f))``)."""
    third = numbax.jacfwd(numbax.grad(summed_jacobian, backend="python"), backend="python")
    with pytest.raises(numbax.NumbaxDifferentiationError, match="higher-order derivative") as info:
        third(X)
    assert info.value.origin is not None and info.value.origin.filename == __file__


def test_jit_of_a_transformation_without_its_own_jit_is_refused():
    """``jit`` of a ``Jitted`` subclass that does not say how ``jit`` composes with it (the forward-mode
    transformation ``numbax show --transform jvp`` makes) is refused, not compiled as the bare function."""
    pushforward = generated_source.transformed(scalar, "jvp")
    with pytest.raises(numbax.NumbaxError, match="jit of .* is not supported"):
        numbax.jit(pushforward)
