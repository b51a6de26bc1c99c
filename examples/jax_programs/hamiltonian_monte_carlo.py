"""Hamiltonian Monte Carlo for a correlated two-dimensional Gaussian: a leapfrog integrator driven by
``jax.grad`` of the log density, momentum and accept draws from keys split at each step, 300 steps in a
jit'ed ``lax.fori_loop``; prints the acceptance rate and the sample moments."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax, random

PRECISION = jnp.linalg.inv(jnp.array([[1.0, 0.8], [0.8, 2.0]]))
MEAN = jnp.array([1.0, -1.0])


def log_density(q):
    d = q - MEAN
    return -0.5 * d @ PRECISION @ d


def leapfrog(q, p, step_size, num_steps):
    p = p + 0.5 * step_size * jax.grad(log_density)(q)
    for _ in range(num_steps - 1):
        q = q + step_size * p
        p = p + step_size * jax.grad(log_density)(q)
    q = q + step_size * p
    p = p + 0.5 * step_size * jax.grad(log_density)(q)
    return q, p


def hmc_step(i, state):
    key, q, accepted, total, total_sq = state
    key, key_momentum, key_accept = random.split(key, 3)
    p = random.normal(key_momentum, (2,))
    q_new, p_new = leapfrog(q, p, 0.25, 8)
    log_ratio = log_density(q_new) - 0.5 * p_new @ p_new - log_density(q) + 0.5 * p @ p
    accept = jnp.log(random.uniform(key_accept)) < log_ratio
    q = jnp.where(accept, q_new, q)
    return key, q, accepted + accept, total + q, total_sq + jnp.outer(q, q)


@jax.jit
def sample(key, q0):
    init = (key, q0, 0, jnp.zeros(2), jnp.zeros((2, 2)))
    return lax.fori_loop(0, 300, hmc_step, init)


def main():
    _, q, accepted, total, total_sq = sample(random.PRNGKey(11), jnp.array([0.0, 0.0]))
    mean = total / 300
    cov = total_sq / 300 - jnp.outer(mean, mean)
    print(f"acceptance {int(accepted) / 300:.4f}")
    print(f"mean {float(mean[0]):.10f} {float(mean[1]):.10f}")
    print(f"covariance {float(cov[0, 0]):.10f} {float(cov[0, 1]):.10f} {float(cov[1, 1]):.10f}")
    print(f"last state {float(q[0]):.10f} {float(q[1]):.10f}")


if __name__ == "__main__":
    main()
