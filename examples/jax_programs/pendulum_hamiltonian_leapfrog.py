"""A pendulum's Hamiltonian dynamics: the equations of motion from ``jax.grad`` of the Hamiltonian, leapfrog
(symplectic) integration in ``lax.fori_loop``, the energy drift printed, batched over initial angles with
``jax.vmap``."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax

MASS = 1.0
LENGTH = 1.5
GRAVITY = 9.81


def hamiltonian(q, p):
    return p * p / (2.0 * MASS * LENGTH ** 2) + MASS * GRAVITY * LENGTH * (1.0 - jnp.cos(q))


dH_dq = jax.grad(hamiltonian, argnums=0)
dH_dp = jax.grad(hamiltonian, argnums=1)


def leapfrog(q, p, dt, steps):
    def body(i, state):
        q, p = state
        p = p - 0.5 * dt * dH_dq(q, p)
        q = q + dt * dH_dp(q, p)
        p = p - 0.5 * dt * dH_dq(q, p)
        return q, p

    return lax.fori_loop(0, steps, body, (q, p))


@jax.jit
def simulate(q0):
    q, p = leapfrog(q0, 0.0, 0.01, 1000)
    return q, p, hamiltonian(q, p) - hamiltonian(q0, 0.0)


def main():
    q, p, drift = simulate(0.5)
    print(f"q {float(q):.10f}  p {float(p):.10f}")
    print(f"energy drift {float(drift):.6e}")
    qs, ps, drifts = jax.vmap(simulate)(jnp.array([0.1, 1.0, 2.5]))
    for i in range(3):
        print(f"q0 #{i}  q {float(qs[i]):.10f}  p {float(ps[i]):.10f}  drift {float(drifts[i]):.6e}")


if __name__ == "__main__":
    main()
