"""Differentially private SGD on a linear classifier: per-example gradients from ``vmap(grad(loss))``, each
clipped to a maximum norm, averaged, and Gaussian noise added, run on numbax by its imports alone."""
import numbax as jax
import numbax.numpy as jnp
from numbax import random

CLIP_NORM = 1.0
NOISE_MULTIPLIER = 0.5
LEARNING_RATE = 0.5


def loss(w, x, y):
    logit = jnp.dot(x, w)
    return jnp.logaddexp(0.0, logit) - y * logit


def clip(g):
    norm = jnp.linalg.norm(g)
    return g * jnp.minimum(1.0, CLIP_NORM / (norm + 1e-12))


@jax.jit
def private_step(w, xs, ys, key):
    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    clipped = jax.vmap(clip)(per_example)
    noise = NOISE_MULTIPLIER * CLIP_NORM * random.normal(key, w.shape)
    g = (jnp.sum(clipped, axis=0) + noise) / xs.shape[0]
    return w - LEARNING_RATE * g


@jax.jit
def mean_loss(w, xs, ys):
    return jnp.mean(jax.vmap(loss, in_axes=(None, 0, 0))(w, xs, ys))


def main():
    key = random.PRNGKey(7)
    key, kx, kw = random.split(key, 3)
    xs = random.normal(kx, (32, 4))
    true_w = jnp.array([1.5, -2.0, 0.5, 1.0])
    ys = (jnp.dot(xs, true_w) > 0).astype(jnp.float64)
    w = 0.1 * random.normal(kw, (4,))
    print(f"initial loss {float(mean_loss(w, xs, ys)):.10f}")
    for step in range(5):
        key, sub = random.split(key)
        w = private_step(w, xs, ys, sub)
        print(f"step {step} loss {float(mean_loss(w, xs, ys)):.10f}")
    print("weights " + " ".join(f"{float(v):.10f}" for v in w))


if __name__ == "__main__":
    main()
