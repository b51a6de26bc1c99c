"""Gradient descent with a backtracking (Armijo) line search on the Rosenbrock function: the step size is halved
in a ``lax.while_loop`` until the loss decreases enough, inside a jit'ed step; run on numbax by its imports."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@jax.jit
def descent_step(x):
    value, g = jax.value_and_grad(rosenbrock)(x)
    slope = jnp.dot(g, g)

    def too_long(step):
        return rosenbrock(x - step * g) > value - 0.5 * step * slope

    step = lax.while_loop(too_long, lambda step: 0.5 * step, 1.0)
    return x - step * g, value, step


def main():
    x = jnp.array([-1.2, 1.0, -0.5, 0.8])
    for i in range(400):
        x, value, step = descent_step(x)
        if i % 50 == 0:
            print(f"iteration {i:3d}  loss {float(value):.12f}  step {float(step):.6e}")
    print("x", " ".join(f"{float(v):.10f}" for v in x))


if __name__ == "__main__":
    main()
