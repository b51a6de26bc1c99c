"""Normal modes of a chain of masses joined by springs, fixed at both ends: the Hessian of the potential
energy from ``jax.hessian``, the generalized eigenproblem reduced with the masses and solved by
``jnp.linalg.eigh``, and the frequencies printed."""
import numbax as jax
import numbax.numpy as jnp

STIFFNESS = jnp.array([1.0, 2.0, 1.5, 3.0, 1.0, 2.5])
MASSES = jnp.array([1.0, 2.0, 1.0, 0.5, 1.5])


def potential(u):
    padded = jnp.concatenate([jnp.zeros(1), u, jnp.zeros(1)])
    stretch = padded[1:] - padded[:-1]
    nonlinear = 0.1 * jnp.sum(stretch ** 4)
    return 0.5 * jnp.sum(STIFFNESS * stretch ** 2) + nonlinear


@jax.jit
def modes(u):
    k = jax.hessian(potential)(u)
    scale = 1.0 / jnp.sqrt(MASSES)
    dynamical = scale[:, None] * k * scale[None, :]
    return jnp.linalg.eigh(dynamical)


def main():
    for name, u in (("rest", jnp.zeros(5)), ("stretched", jnp.array([0.1, -0.2, 0.3, 0.0, -0.1]))):
        eigenvalues, vectors = modes(u)
        frequencies = jnp.sqrt(eigenvalues)
        print(name, "frequencies", " ".join(f"{float(w):.12f}" for w in frequencies))
        lowest = vectors[:, 0] * jnp.sign(vectors[0, 0])
        print(name, "lowest mode", " ".join(f"{float(c):.10f}" for c in lowest))


if __name__ == "__main__":
    main()
