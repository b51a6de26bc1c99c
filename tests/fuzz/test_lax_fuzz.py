"""Generated ``numbax.lax`` programs (``lax_programs``) against JAX's ``jax.lax`` on the same source, float64.

Each seed is one program: ``jit``'s value, ``grad`` (JAX's forward-mode gradient is the oracle: ``jax.grad``
cannot reverse ``lax.while_loop``, numbax can), ``jvp``, ``vmap`` over ``x``, ``jacrev`` and ``vmap`` of
``grad``. A numbax error is a refusal (allowed: a construct without a rule); anything else that differs is a
failure. The tester found local functions reading the variables of the lowering that called them (a wrong
value, ``test_closure_scopes``) and ``jvp``'s tangent of a constant output (``test_jvp``).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

from . import loader
from .lax_programs import lax_program

from grad_corpus.oracles import to_jax  # noqa: E402  (turns on jax_enable_x64)

SEEDS = range(24)


def _compare(label, ours, theirs):
    want = theirs()
    try:
        got = ours()
    except numbax.NumbaxError:
        return  # refused at the user's line: no rule for a construct
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves), label
    for g, w in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-9, err_msg=label)


def _check(seed: int, backend: str, transforms) -> None:
    source, _ = lax_program(seed)
    module = loader.load(source)
    twin, twin_sum = to_jax(module.prog), to_jax(module.prog_sum)
    rs = np.random.RandomState(seed)
    args = (rs.randn(3), rs.randn(3), float(rs.randn()))
    tangents = (rs.randn(3), rs.randn(3), float(rs.randn()))
    xs = rs.randn(4, 3)
    mapped = (0, None, None)
    jargs, jtangents, jxs = (jax.tree_util.tree_map(jnp.asarray, t) for t in (args, tangents, xs))
    checks = {
        "jit": (lambda: numbax.jit(module.prog, backend=backend)(*args), lambda: twin(*jargs)),
        "grad": (lambda: numbax.grad(module.prog_sum, argnums=(0, 1, 2), backend=backend)(*args),
                 lambda: jax.jacfwd(twin_sum, argnums=(0, 1, 2))(*jargs)),
        "jvp": (lambda: numbax.jvp(module.prog, args, tangents, backend=backend),
                lambda: jax.jvp(twin, jargs, jtangents)),
        "vmap": (lambda: numbax.vmap(module.prog, in_axes=mapped, backend=backend)(xs, *args[1:]),
                 lambda: jax.vmap(twin, in_axes=mapped)(jxs, *jargs[1:])),
        "jacrev": (lambda: numbax.jacrev(module.prog, backend=backend)(*args), lambda: jax.jacfwd(twin)(*jargs)),
        "vmap_grad": (lambda: numbax.vmap(numbax.grad(module.prog_sum, backend=backend), in_axes=mapped,
                                          backend=backend)(xs, *args[1:]),
                      lambda: jax.vmap(jax.jacfwd(twin_sum), in_axes=mapped)(jxs, *jargs[1:])),
    }
    try:
        for label in transforms:
            _compare(f"{label} of program {seed}:\n{source}", *checks[label])
    finally:
        loader.unload(module)


@pytest.mark.parametrize("seed", SEEDS)
def test_python_backend(seed):
    _check(seed, "python", ("jit", "grad", "jvp", "vmap", "jacrev", "vmap_grad"))


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_cpu_backend(seed):
    _check(seed, "cpu", ("jit", "grad", "jvp"))
