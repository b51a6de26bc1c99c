"""Newton's method for a system of nonlinear equations, the Jacobian from ``jax.jacobian``, run on numbax by its
imports alone."""
import numbax as jax
import numbax.numpy as jnp


def residual(v):
    x, y, z = v[0], v[1], v[2]
    return jnp.array([x * x + y * y + z * z - 3.0, x * y - z, jnp.exp(x) - y - 1.0])


@jax.jit
def newton_step(v):
    return v - jnp.linalg.solve(jax.jacobian(residual)(v), residual(v))


def main():
    v = jnp.array([1.0, 0.5, 0.2])
    for i in range(8):
        v = newton_step(v)
        print(f"step {i}  residual {float(jnp.linalg.norm(residual(v))):.3e}  v {v[0]:.12f} {v[1]:.12f} {v[2]:.12f}")


if __name__ == "__main__":
    main()
