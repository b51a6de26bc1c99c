"""The README's main example: a JAX program that runs on numbax with only its imports swapped.

With ``import jax; import jax.numpy as jnp; from jax import random`` (and 64-bit
mode) it is a JAX program; these three lines make it numbax's. The network is an
MLP [10, 20, 1] initialised with ``random.PRNGKey``/``split``/``normal``; ``step``
is ``jit``-compiled and calls ``grad(loss)``, so numbax compiles the forward pass,
the gradient and the update into one Numba function.
"""
import numbax as jax
import numbax.numpy as jnp
from numbax import random


def init_params(key, sizes):
    params = []
    for m, n in zip(sizes[:-1], sizes[1:]):
        key, subkey = random.split(key)
        params.append((random.normal(subkey, (m, n)) / jnp.sqrt(m), jnp.zeros(n)))
    return params


def forward(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    return jnp.mean((forward(params, x) - y) ** 2)


def update(params, grads, learning_rate=0.1):
    return [(w - learning_rate * dw, b - learning_rate * db) for (w, b), (dw, db) in zip(params, grads)]


@jax.jit
def step(params, x, y):
    return update(params, jax.grad(loss)(params, x, y))


def main():
    key, x_key, noise_key = random.split(random.PRNGKey(0), 3)
    params = init_params(key, [10, 20, 1])
    x = random.normal(x_key, (100, 10))
    y = jnp.sin(x[:, :1]) + 0.1 * random.normal(noise_key, (100, 1))
    for epoch in range(1000):
        if epoch % 100 == 0:
            print(f"epoch {epoch:4d}  loss {float(loss(params, x, y)):.6f}")
        params = step(params, x, y)
    print(f"final loss {float(loss(params, x, y)):.6f}")
    print("predictions", [round(float(v), 4) for v in forward(params, x[:3]).ravel()],
          "targets", [round(float(v), 4) for v in y[:3].ravel()])
    return params, x, y


if __name__ == "__main__":
    main()
