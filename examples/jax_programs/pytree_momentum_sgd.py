"""A two-layer network whose parameters are a dict of dicts of arrays, trained by momentum SGD written with
``jax.tree.map`` and ``jax.tree_util.tree_map`` over those pytrees, run on numbax by its imports alone."""
import numbax as jax
import numbax.numpy as jnp
from numbax import random

LEARNING_RATE = 0.05
MOMENTUM = 0.9


def init_params(key):
    k1, k2 = random.split(key)
    return {
        "hidden": {"w": 0.5 * random.normal(k1, (2, 8)), "b": jnp.zeros(8)},
        "out": {"w": 0.5 * random.normal(k2, (8,)), "b": jnp.zeros(())},
    }


def predict(params, x):
    h = jnp.tanh(x @ params["hidden"]["w"] + params["hidden"]["b"])
    return h @ params["out"]["w"] + params["out"]["b"]


def loss(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)


@jax.jit
def train_step(params, velocity, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    velocity = jax.tree.map(lambda v, g: MOMENTUM * v + g, velocity, grads)
    params = jax.tree_util.tree_map(lambda p, v: p - LEARNING_RATE * v, params, velocity)
    return params, velocity, value


def main():
    key = random.PRNGKey(0)
    kdata, kparams = random.split(key)
    x = random.uniform(kdata, (64, 2), minval=-1.0, maxval=1.0)
    y = jnp.sin(2.0 * x[:, 0]) * x[:, 1]
    params = init_params(kparams)
    velocity = jax.tree.map(jnp.zeros_like, params)
    for step in range(30):
        params, velocity, value = train_step(params, velocity, x, y)
        if step % 5 == 0:
            print(f"step {step} loss {float(value):.10f}")
    print(f"final loss {float(loss(params, x, y)):.10f}")
    leaves = jax.tree_util.tree_leaves(params)
    print(f"parameter count {sum(leaf.size for leaf in leaves)}")
    print(f"output bias {float(params['out']['b']):.10f}")


if __name__ == "__main__":
    main()
