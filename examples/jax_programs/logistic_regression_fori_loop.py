"""L2-penalized logistic regression whose whole training loop is a ``lax.fori_loop`` inside one jit'ed
function, run on numbax by its imports alone."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax, random

L2 = 0.01
LEARNING_RATE = 0.3


def loss(w, b, x, y):
    logits = x @ w + b
    data = jnp.mean(jnp.logaddexp(0.0, logits) - y * logits)
    return data + 0.5 * L2 * jnp.sum(w ** 2)


@jax.jit
def train(w, b, x, y, num_steps):
    def body(i, state):
        w, b = state
        gw, gb = jax.grad(loss, argnums=(0, 1))(w, b, x, y)
        return w - LEARNING_RATE * gw, b - LEARNING_RATE * gb

    return lax.fori_loop(0, num_steps, body, (w, b))


def main():
    kx, ky = random.split(random.PRNGKey(5))
    x = random.normal(kx, (80, 3))
    p = jax.nn.sigmoid(x @ jnp.array([1.0, -2.0, 0.7]) - 0.3)
    y = (random.uniform(ky, (80,)) < p).astype(jnp.float64)
    w, b = jnp.zeros(3), jnp.array(0.0)
    for rounds in range(3):
        w, b = train(w, b, x, y, 50)
        print(f"after {50 * (rounds + 1)} steps loss {float(loss(w, b, x, y)):.10f}")
    print("weights " + " ".join(f"{float(v):.10f}" for v in w) + f" bias {float(b):.10f}")
    gw, gb = jax.grad(loss, argnums=(0, 1))(w, b, x, y)
    print(f"gradient norm {float(jnp.sqrt(jnp.sum(gw ** 2) + gb ** 2)):.6e}")


if __name__ == "__main__":
    main()
