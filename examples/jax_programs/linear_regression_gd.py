"""Linear regression by gradient descent with ``jax.value_and_grad`` and a jit'ed update, compared with the
closed-form least-squares solution, run on numbax by its imports alone."""
import numbax as jax
import numbax.numpy as jnp
from numbax import random

LEARNING_RATE = 0.1


def mse(params, x, y):
    w, b = params
    return jnp.mean((x @ w + b - y) ** 2)


@jax.jit
def update(params, x, y):
    value, (gw, gb) = jax.value_and_grad(mse)(params, x, y)
    w, b = params
    return (w - LEARNING_RATE * gw, b - LEARNING_RATE * gb), value


def main():
    kx, knoise = random.split(random.PRNGKey(42))
    x = random.normal(kx, (100, 3))
    y = x @ jnp.array([2.0, -1.0, 0.5]) + 3.0 + 0.1 * random.normal(knoise, (100,))
    params = (jnp.zeros(3), 0.0)
    for step in range(200):
        params, value = update(params, x, y)
        if step % 50 == 0:
            print(f"step {step} loss {float(value):.10f}")
    w, b = params
    design = jnp.concatenate([x, jnp.ones((100, 1))], axis=1)
    exact = jnp.linalg.lstsq(design, y)[0]
    print("gradient descent " + " ".join(f"{float(v):.10f}" for v in w) + f" {float(b):.10f}")
    print("closed form " + " ".join(f"{float(v):.10f}" for v in exact))
    print(f"max difference {float(jnp.max(jnp.abs(jnp.append(w, b) - exact))):.6e}")


if __name__ == "__main__":
    main()
