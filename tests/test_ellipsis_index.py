"""``x[...]``, the whole array as an index, read, stored into and updated in place: Numba types a read of
``x[...]`` but cannot lower it (nor ``x[...] += y``, which reads it), so the CPU backend compiles the read as
``x`` and the update as ``x += y`` (``legalize``). ``jit``, ``grad`` and ``jvp`` agree with NumPy and JAX
(float64); found by writing ``z[...] = np.sort(z)``, whose store check read ``z[...]``."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

jax.config.update("jax_enable_x64", True)

X = np.array([[3.0, -1.0, 2.0], [0.5, 1.5, -2.0]])


def program(x):
    z = x * 1.0
    z[...] = np.sort(z)
    y = np.copy(z[...])
    y[...] += x * x
    return np.sum(np.sin(y[...]) * z)


def program_jax(x):
    z = jnp.sort(x)
    y = z + x * x
    return jnp.sum(jnp.sin(y) * z)


@pytest.mark.parametrize("backend", ["cpu", "python"])
def test_ellipsis_reads_stores_and_updates_agree_with_numpy_and_jax(backend):
    np.testing.assert_allclose(numbax.jit(program, backend=backend)(X), program(X.copy()), rtol=1e-13)
    np.testing.assert_allclose(program(X.copy()), program_jax(X), rtol=1e-13)
    np.testing.assert_allclose(numbax.grad(program, backend=backend)(X), jax.grad(program_jax)(X), rtol=1e-12)
    tangent = np.linspace(-1.0, 1.0, X.size).reshape(X.shape)
    ours = numbax.jvp(program, (X,), (tangent,), backend=backend)
    theirs = jax.jvp(program_jax, (X,), (tangent,))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
