"""Sensitivity of the Lotka-Volterra predator-prey solution to its four parameters by forward mode:
``jax.jacfwd`` and ``jax.jvp`` through a fixed-step RK4 integrator in ``lax.fori_loop``, the initial state
closed over where the sensitivity is to the parameters alone."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax

DT = 0.01
STEPS = 500


def vector_field(z, theta):
    prey, predator = z[0], z[1]
    alpha, beta, delta, gamma = theta[0], theta[1], theta[2], theta[3]
    return jnp.stack([alpha * prey - beta * prey * predator, delta * prey * predator - gamma * predator])


def solve(theta, z0):
    def body(i, z):
        k1 = vector_field(z, theta)
        k2 = vector_field(z + 0.5 * DT * k1, theta)
        k3 = vector_field(z + 0.5 * DT * k2, theta)
        k4 = vector_field(z + DT * k3, theta)
        return z + DT / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    return lax.fori_loop(0, STEPS, body, z0)


@jax.jit
def sensitivity(theta, z0):
    return solve(theta, z0), jax.jacfwd(solve)(theta, z0)


def main():
    theta = jnp.array([1.1, 0.4, 0.1, 0.4])
    z0 = jnp.array([10.0, 5.0])
    z, jac = sensitivity(theta, z0)
    print(f"prey {float(z[0]):.10f}  predators {float(z[1]):.10f}")
    for name, row in zip(("prey", "predators"), jac):
        print(name, "d/d(alpha, beta, delta, gamma)", " ".join(f"{float(c):.8f}" for c in row))
    direction = jnp.array([1.0, 0.0, 0.0, -1.0])
    _, tangent = jax.jvp(lambda t: solve(t, z0), (theta,), (direction,))
    print("jvp along alpha - gamma", " ".join(f"{float(c):.8f}" for c in tangent))


if __name__ == "__main__":
    main()
