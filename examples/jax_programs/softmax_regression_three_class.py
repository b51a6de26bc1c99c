"""Softmax regression on synthetic three-class data with ``jax.nn.log_softmax`` and ``jax.nn.one_hot``,
trained by jit'ed gradient steps, printing loss and accuracy, run on numbax by its imports alone."""
import numbax as jax
import numbax.numpy as jnp
from numbax import nn, random

NUM_CLASSES = 3
LEARNING_RATE = 0.5


def make_data(key):
    kc, kx = random.split(key)
    centers = jnp.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    labels = random.randint(kc, (90,), 0, NUM_CLASSES)
    x = centers[labels] + 0.8 * random.normal(kx, (90, 2))
    return x, labels


def loss(params, x, labels):
    w, b = params
    log_probs = nn.log_softmax(x @ w + b)
    return -jnp.mean(jnp.sum(nn.one_hot(labels, NUM_CLASSES) * log_probs, axis=-1))


@jax.jit
def step(params, x, labels):
    grads = jax.grad(loss)(params, x, labels)
    return tuple(p - LEARNING_RATE * g for p, g in zip(params, grads))


@jax.jit
def accuracy(params, x, labels):
    w, b = params
    return jnp.mean(jnp.argmax(x @ w + b, axis=-1) == labels)


def main():
    x, labels = make_data(random.PRNGKey(3))
    params = (jnp.zeros((2, NUM_CLASSES)), jnp.zeros(NUM_CLASSES))
    for i in range(40):
        params = step(params, x, labels)
        if i % 10 == 9:
            print(f"step {i + 1} loss {float(loss(params, x, labels)):.10f} "
                  f"accuracy {float(accuracy(params, x, labels)):.4f}")
    w, b = params
    print("bias " + " ".join(f"{float(v):.10f}" for v in b))


if __name__ == "__main__":
    main()
