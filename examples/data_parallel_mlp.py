"""The README's MLP trained data-parallel: the batch split over 2 devices, gradients averaged with pmean.

Each device computes the gradient of the loss on its shard of the batch; ``lax.pmean`` averages them over
the ``"batch"`` axis, so every shard applies the full batch's gradient (the shards are of equal size) and
the parameters stay the same on every device. The losses are those of ``mlp.py``'s single-device training
to rounding; the script prints both and their largest difference.

    python examples/data_parallel_mlp.py               # one process, 2 CPU devices
    mpiexec -n 2 python examples/data_parallel_mlp.py --mpi  # 2 processes, one CPU device each

Under ``mpiexec`` each process passes its own shards (``local_device_count()`` of them, from
``process_index()``) and gets its own results back, as in JAX's multi-process ``pmap``; the ``pmean`` goes
through MPI. Process 0 prints.
"""
import sys

import numbax as jax
import numbax.numpy as jnp
from numbax import distributed, lax, random, tree_util

from mlp import init_params, loss, step, update


def sharded_step(params, x, y):
    grads = lax.pmean(jax.grad(loss)(params, x, y), "batch")
    return update(params, grads)


parallel_step = jax.pmap(sharded_step, axis_name="batch", in_axes=(None, 0, 0))


def train(data_parallel, epochs=1000):
    """The losses every 100 epochs (and the last one), training on one device or on every device."""
    key, x_key, noise_key = random.split(random.PRNGKey(0), 3)
    params = init_params(key, [10, 20, 1])
    x = random.normal(x_key, (100, 10))
    y = jnp.sin(x[:, :1]) + 0.1 * random.normal(noise_key, (100, 1))
    devices, local = len(jax.devices()), jax.local_device_count()
    mine = slice(jax.process_index() * local, (jax.process_index() + 1) * local)  # this process's shards
    x_shards, y_shards = x.reshape(devices, -1, 10)[mine], y.reshape(devices, -1, 1)[mine]
    losses = []
    for epoch in range(epochs):
        if epoch % 100 == 0:
            losses.append(float(loss(params, x, y)))
        if data_parallel:  # each device's copy of the new parameters is the same: keep the first
            params = tree_util.tree_map(lambda p: p[0], parallel_step(params, x_shards, y_shards))
        else:
            params = step(params, x, y)
    return losses + [float(loss(params, x, y))]


def main(across_processes=False):
    if across_processes:
        distributed.initialize()
    else:
        jax.config.update("cpu_device_count", 2)
    single, parallel = train(False), train(True)
    if jax.process_index() == 0:
        print(f"devices {jax.devices()} in {jax.process_count()} process(es)")
        for k, (a, b) in enumerate(zip(single, parallel)):
            label = f"epoch {100 * k:4d}" if k < len(single) - 1 else "final     "
            print(f"{label}  single-device loss {a:.17g}  data-parallel loss {b:.17g}")
        print(f"largest difference {max(abs(a - b) for a, b in zip(single, parallel)):.3e}")
    return single, parallel


if __name__ == "__main__":
    main("--mpi" in sys.argv[1:])
