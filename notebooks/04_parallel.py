# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Parallel programs: `pmap`, collectives and named axes
#
# numbax follows JAX's SPMD model: `pmap` runs one copy of a function per device, each on its slice of the
# inputs, and collectives (`lax.psum`, `pmean`, `all_gather`, ...) combine the copies over a named axis. The same
# collectives work under `vmap(..., axis_name=...)`, where the "devices" are the examples of a batch. This
# notebook asks for two CPU devices, runs the seed program, checks each collective against NumPy, trains
# data-parallel, prints the code numbax generates for a shard, and times one training step on 1 and 2 devices.
# (The source of truth is `04_parallel.py`, paired with this notebook by jupytext.)

# %%
import time

import numpy as np

import numbax
from numbax import lax

numbax.config.update("cpu_device_count", 2)  # JAX's default is 1 device; ask for 2 before the first pmap
devices = numbax.devices()
print(devices)
print(numbax.pmap(lambda x: x ** 2, devices=devices)(np.arange(len(devices))))

# %% [markdown]
# ## Collectives
#
# Inside a `pmap`ped function, `axis_name` names the axis over devices. Each collective below is checked
# against what NumPy computes from the whole array: the sum over devices, the mean, the maximum, every
# device's value gathered, the values passed one device along a ring, and each device's index.

# %%
def combine(x):
    ring = [(i, (i + 1) % 2) for i in range(2)]
    return (lax.psum(x, "i"), lax.pmean(x, "i"), lax.pmax(x, "i"), lax.all_gather(x, "i"),
            lax.ppermute(x, "i", ring), lax.axis_index("i"))


x = np.array([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]])
total, mean, largest, gathered, passed, index = numbax.pmap(combine, axis_name="i")(x)
print("psum:", np.allclose(total, [x.sum(0)] * 2), " pmean:", np.allclose(mean, [x.mean(0)] * 2),
      " pmax:", np.array_equal(largest, [x.max(0)] * 2))
print("all_gather:", np.array_equal(gathered, [x, x]), " ppermute:", np.array_equal(passed, x[::-1]),
      " axis_index:", index)

# %% [markdown]
# The same function under `vmap` with an axis name gives the same values: the examples of the batch play
# the devices' part.

# %%
batched = numbax.vmap(combine, axis_name="i")(x)
print("vmap agrees with pmap:", all(np.allclose(a, b) for a, b in zip(batched, (total, mean, largest, gathered,
                                                                                 passed, index))))

# %% [markdown]
# ## Data-parallel training
#
# Each device computes the gradient of the loss on its half of the batch; `pmean` averages the two, so both
# devices apply the gradient of the whole batch. The check: that average equals `grad` of the loss on the
# whole batch.

# %%
def loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def sharded_grad(w, x, y):
    return lax.pmean(numbax.grad(loss)(w, x, y), "batch")


rng = np.random.default_rng(0)
w, xs, ys = rng.normal(size=3), rng.normal(size=(64, 3)), rng.normal(size=64)
parallel = numbax.pmap(sharded_grad, axis_name="batch", in_axes=(None, 0, 0))
per_device = parallel(w, xs.reshape(2, 32, 3), ys.reshape(2, 32))
print("pmean of the shards' gradients equals the whole batch's gradient:",
      np.allclose(per_device, [numbax.grad(loss)(w, xs, ys)] * 2, rtol=1e-13))

# %% [markdown]
# ## The code of one shard
#
# A `pmap`ped function is compiled into one loop over the shards, cut at each collective: the shards run up to
# the collective, which is then array code over their rows (here `np.mean` over them), and go on from there.

# %%
print(numbax.source(parallel, w, xs.reshape(2, 32, 3), ys.reshape(2, 32)))

# %% [markdown]
# ## Time per step on 1 and 2 devices
#
# One training step of a wider model, the batch split over 1 or 2 devices, against `jit` of the same step
# on the whole batch. The shards of a `pmap` run one after another today (README, "Parallel and distributed"),
# so 2 devices take about as long as one; the plot shows what this machine measures.

# %%
import matplotlib.pyplot as plt

wide_w = rng.normal(size=(64, 32)) * 0.1
wide_x, wide_y = rng.normal(size=(512, 64)), rng.normal(size=(512, 32))


def wide_loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def step(w, x, y):
    return w - 0.1 * numbax.grad(wide_loss)(w, x, y)


def sharded_step(w, x, y):
    return w - 0.1 * lax.pmean(numbax.grad(wide_loss)(w, x, y), "batch")


def best_time(fn, *args):
    fn(*args)
    runs = []
    for _ in range(20):
        start = time.perf_counter()
        fn(*args)
        runs.append(time.perf_counter() - start)
    return min(runs)


times = {"jit, whole batch": best_time(numbax.jit(step), wide_w, wide_x, wide_y)}
for count in (1, 2):
    stepper = numbax.pmap(sharded_step, axis_name="batch", in_axes=(None, 0, 0), devices=devices[:count])
    times[f"pmap, {count} device{'s' if count > 1 else ''}"] = best_time(
        stepper, wide_w, wide_x.reshape(count, -1, 64), wide_y.reshape(count, -1, 32))
for label, seconds in times.items():
    print(f"{label}: {seconds * 1e3:.2f} ms")
plt.bar(list(times), [t * 1e3 for t in times.values()])
plt.ylabel("ms per step")
plt.title("one training step, batch 512")
plt.show()
