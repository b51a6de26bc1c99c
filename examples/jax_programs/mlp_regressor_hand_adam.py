"""A small tanh MLP regressor on 1-D data, parameters a list of ``(W, b)`` tuples, trained with Adam written
by hand with ``jax.tree_util.tree_map`` (moments as pytrees), run on numbax by its imports alone."""
import numbax as jax
import numbax.numpy as jnp
from numbax import random

SIZES = [1, 16, 16, 1]
STEP_SIZE = 0.01
B1, B2, EPS = 0.9, 0.999, 1e-8


def init_mlp(key, sizes):
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, sub = random.split(key)
        params.append((random.normal(sub, (n_in, n_out)) / jnp.sqrt(n_in), jnp.zeros(n_out)))
    return params


def forward(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    return jnp.mean((forward(params, x) - y) ** 2)


@jax.jit
def adam_step(params, m, v, t, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    m = jax.tree_util.tree_map(lambda m, g: B1 * m + (1 - B1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda v, g: B2 * v + (1 - B2) * g * g, v, grads)
    m_hat = jax.tree_util.tree_map(lambda m: m / (1 - B1 ** t), m)
    v_hat = jax.tree_util.tree_map(lambda v: v / (1 - B2 ** t), v)
    params = jax.tree_util.tree_map(lambda p, mh, vh: p - STEP_SIZE * mh / (jnp.sqrt(vh) + EPS), params, m_hat, v_hat)
    return params, m, v, value


def main():
    kdata, kinit = random.split(random.PRNGKey(1))
    x = jnp.linspace(-2.0, 2.0, 50)[:, None]
    y = jnp.sin(2.0 * x) + 0.05 * random.normal(kdata, x.shape)
    params = init_mlp(kinit, SIZES)
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    for t in range(1, 61):
        params, m, v, value = adam_step(params, m, v, float(t), x, y)
        if t % 15 == 0:
            print(f"step {t} loss {float(value):.10f}")
    test = jnp.array([[-1.5], [0.0], [0.7]])
    print("predictions " + " ".join(f"{float(p):.10f}" for p in forward(params, test)[:, 0]))


if __name__ == "__main__":
    main()
