"""A JAX program that trains a stax MLP with Adam, run on numbax by its imports alone.

With ``import jax; import jax.numpy as jnp; from jax import random; from jax.example_libraries import
optimizers, stax`` (and 64-bit mode) it is a JAX program; the four imports below make it numbax's. The
network comes from ``stax.serial``, its parameters from ``init_fun`` (JAX's initializers, the same bits), and
``update`` is ``jit``-compiled around ``grad(loss)`` and Adam's ``opt_update``, so numbax compiles the forward
pass, the gradient and the optimizer step into one Numba function.
"""
import numbax as jax
import numbax.numpy as jnp
from numbax import random
from numbax.example_libraries import optimizers, stax

init_fun, predict = stax.serial(stax.Dense(32), stax.Relu, stax.Dense(4), stax.LogSoftmax)


def loss(params, batch):
    inputs, targets = batch
    return -jnp.mean(jnp.sum(predict(params, inputs) * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    return jnp.mean(jnp.argmax(predict(params, inputs), axis=1) == jnp.argmax(targets, axis=1))


opt_init, opt_update, get_params = optimizers.adam(1e-2)


@jax.jit
def update(i, opt_state, batch):
    params = get_params(opt_state)
    return opt_update(i, jax.grad(loss)(params, batch), opt_state)


def main():
    key, x_key, teacher_key = random.split(random.PRNGKey(0), 3)
    inputs = random.normal(x_key, (64, 8))
    labels = jnp.argmax(inputs @ random.normal(teacher_key, (8, 4)), axis=1)
    batch = (inputs, jax.nn.one_hot(labels, 4))
    _, params = init_fun(key, (-1, 8))
    opt_state = opt_init(params)
    for i in range(20):
        opt_state = update(i, opt_state, batch)
        print(f"step {i:2d}  loss {float(loss(get_params(opt_state), batch)):.12f}")
    print(f"accuracy {float(accuracy(get_params(opt_state), batch)):.4f}")


if __name__ == "__main__":
    main()
