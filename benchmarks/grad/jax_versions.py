"""JAX versions of ``grad_tasks``: traced, so the runtime loops become ``lax.fori_loop`` / ``lax.while_loop``.

Float64 on the CPU. ``gradient(task)`` is what the JAX column times: ``jax.jit(jax.grad(f))``, except for
Newton's ``while`` loop, which JAX cannot reverse-differentiate: there it is forward mode, ``jax.jacfwd``.
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from grad import same_source  # noqa: E402

jax.config.update("jax_enable_x64", True)

# Loops over containers unroll as JAX traces them: the NumPy source runs as it is.
globals().update(same_source(jnp, ("forward", "mlp_loss", "rosenbrock", "lotka_volterra")))


def ode_loss(p, u0, dt, n_steps):
    def step(i, state):
        x, y = state
        fx, fy = lotka_volterra(x, y, p)
        gx, gy = lotka_volterra(x + 0.5 * dt * fx, y + 0.5 * dt * fy, p)
        return x + dt * gx, y + dt * gy

    x, y = lax.fori_loop(0, n_steps, step, (u0[0], u0[1]))
    return (x - 1.0) ** 2 + (y - 1.0) ** 2


def kepler(e, M):
    def body(state):
        E, _ = state
        delta = (E - e * jnp.sin(E) - M) / (1.0 - e * jnp.cos(E))
        return E - delta, delta

    E, _ = lax.while_loop(lambda state: jnp.abs(state[1]) > 1e-12, body, (M, jnp.ones_like(M)))
    return E


def softmax_cross_entropy(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


FORWARD_MODE = {"newton"}  # jax.grad cannot go through lax.while_loop


def gradient(task):
    """The JAX column's compiled gradient for a ``grad_tasks.Task``."""
    fn = globals()[task.fn.__name__]
    if task.name in FORWARD_MODE:
        return jax.jit(jax.jacfwd(fn, argnums=task.argnums), static_argnums=task.jax_static)
    return jax.jit(jax.grad(fn, argnums=task.argnums), static_argnums=task.jax_static)


def args(task, task_args):
    return tuple(a if i in task.jax_static else jax.device_put(jnp.asarray(a) if isinstance(a, float) else a)
                 for i, a in enumerate(task_args))
