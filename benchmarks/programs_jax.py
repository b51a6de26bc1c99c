"""JAX versions of ``programs.py``, for the reference columns of ``run.py`` (imported only if jax is).

JAX traces, so runtime loops and branches become ``lax.fori_loop`` and
``jnp.where``; the explicit per-row loops of the classifier become array code.
Float64 is switched on so that every column computes in the same precision.
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

jax.config.update("jax_enable_x64", True)


def dot_plus_one(x, y):
    return jnp.sum(x * y + 1.0)


def pendulum_rhs(theta, omega, t, damping, drive):
    return omega, -damping * omega - jnp.sin(theta) + drive * jnp.cos(0.667 * t)


def rk4_pendulum(theta0, omega0, dt, n_steps, damping, drive):
    def step(i, state):
        theta, omega, t, energy_max, turns = state
        omega_prev = omega
        k1t, k1w = pendulum_rhs(theta, omega, t, damping, drive)
        k2t, k2w = pendulum_rhs(theta + 0.5 * dt * k1t, omega + 0.5 * dt * k1w, t + 0.5 * dt, damping, drive)
        k3t, k3w = pendulum_rhs(theta + 0.5 * dt * k2t, omega + 0.5 * dt * k2w, t + 0.5 * dt, damping, drive)
        k4t, k4w = pendulum_rhs(theta + dt * k3t, omega + dt * k3w, t + dt, damping, drive)
        theta = theta + dt / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t)
        omega = omega + dt / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w)
        theta = jnp.where(theta > jnp.pi, theta - 2.0 * jnp.pi,
                          jnp.where(theta < -jnp.pi, theta + 2.0 * jnp.pi, theta))
        energy = 0.5 * omega * omega + 1.0 - jnp.cos(theta)
        energy_max = jnp.maximum(energy_max, energy)
        turns = turns + jnp.where(omega_prev * omega < 0.0, 1, 0)
        return theta, omega, t + dt, energy_max, turns

    init = (jnp.float64(theta0), jnp.float64(omega0), jnp.float64(0.0), jnp.float64(0.0), jnp.int64(0))
    theta, omega, _, energy_max, turns = lax.fori_loop(0, n_steps, step, init)
    return theta, omega, energy_max, turns


def mlp_classifier_loss(params, x, labels, l2, smoothing):
    h = x
    for w, b in params[:-1]:
        z = h @ w + b
        z = (z - jnp.mean(z)) / jnp.sqrt(jnp.var(z) + 1e-5)
        h = jnp.maximum(z, 0.0)
    w, b = params[-1]
    logits = jnp.clip(h @ w + b, -30.0, 30.0)
    lse = jax.nn.logsumexp(logits, axis=1)
    picked = jnp.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    target = jnp.where(smoothing > 0.0, (1.0 - smoothing) * picked + smoothing * jnp.mean(logits, axis=1), picked)
    n = logits.shape[0]
    correct = jnp.sum(jnp.argmax(logits, axis=1) == labels)
    reg = sum(jnp.sum(w * w) for w, _ in params)
    return jnp.sum(lse - target) / n + l2 * reg, correct / n
