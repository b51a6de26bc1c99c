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
# # Porting a JAX program to numbax
#
# A JAX program runs on numbax when its imports change: `import numbax as jax`, `import numbax.numpy as jnp`,
# `from numbax import random`. This notebook takes one such program, a small neural network that learns a
# wave from noisy samples (parameters from `random` keys, a loss, `jax.value_and_grad`, a `jax.jit`-compiled
# step that updates a pytree of parameters with `jax.tree_util.tree_map`), runs it on numbax and on JAX side
# by side, plots both loss curves, and lists what differs between the two.
# (The source of truth is `03_porting_from_jax.py`, paired with this notebook by jupytext.)

# %%
import textwrap

PROGRAM = textwrap.dedent('''
    def init_params(key, sizes):
        params = []
        for m, n in zip(sizes[:-1], sizes[1:]):
            key, subkey = random.split(key)
            params.append({"w": random.normal(subkey, (m, n)) / jnp.sqrt(m), "b": jnp.zeros(n)})
        return params


    def predict(params, x):
        for layer in params[:-1]:
            x = jnp.tanh(x @ layer["w"] + layer["b"])
        return x @ params[-1]["w"] + params[-1]["b"]


    def loss(params, x, y):
        return jnp.mean((predict(params, x) - y) ** 2)


    @jax.jit
    def step(params, x, y, learning_rate):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        params = jax.tree_util.tree_map(lambda p, g: p - learning_rate * g, params, grads)
        return params, value


    def train(steps=300):
        key, x_key, noise_key = random.split(random.PRNGKey(0), 3)
        x = random.uniform(x_key, (128, 1), minval=-3.0, maxval=3.0)
        y = jnp.sin(x) + 0.05 * random.normal(noise_key, (128, 1))
        params = init_params(key, [1, 16, 16, 1])
        losses = []
        for _ in range(steps):
            params, value = step(params, x, y, 0.05)
            losses.append(float(value))
        return losses
''')

# %% [markdown]
# ## The same text, two sets of imports
#
# The program above is run twice: once after `import numbax as jax` (and numbax's `numpy` and `random`), once
# after `import jax` with 64-bit mode on (numbax computes in float64, as NumPy does). Nothing else changes.

# %%
import jax as real_jax

real_jax.config.update("jax_enable_x64", True)

NUMBAX_IMPORTS = "import numbax as jax\nimport numbax.numpy as jnp\nfrom numbax import random\n"
JAX_IMPORTS = "import jax\nimport jax.numpy as jnp\nfrom jax import random\n"


def run(name, imports):
    """The program with ``imports`` as a module of its own (numbax reads a function's source from its file)."""
    import importlib.util
    import pathlib
    import tempfile

    path = pathlib.Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(imports + PROGRAM)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


on_numbax, on_jax = run("wave_on_numbax", NUMBAX_IMPORTS), run("wave_on_jax", JAX_IMPORTS)
numbax_losses, jax_losses = on_numbax.train(), on_jax.train()
gap = max(abs(a - b) / b for a, b in zip(numbax_losses, jax_losses))
print(f"final loss: numbax {numbax_losses[-1]:.8f}, JAX {jax_losses[-1]:.8f}; largest relative gap {gap:.1e}")
assert gap < 1e-9, gap

# %% [markdown]
# In a project the program is a file of its own, as in `examples/jax_programs/`: the test suite runs each of
# those files on numbax and on JAX and compares every number they print.
#
# ## The loss curves

# %%
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogy(numbax_losses, label="numbax", linewidth=3, alpha=0.6)
ax.semilogy(jax_losses, "--", label="JAX", color="black")
ax.set_xlabel("step")
ax.set_ylabel("mean squared error")
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## What numbax compiled
#
# `step` is one Numba function: the forward pass, the adjoint code of `value_and_grad` (`# grad of:` comments
# point at the lines it differentiates) and the update, the parameters' dicts flattened into arguments.

# %%
print(on_numbax.step.source[:1500])

# %% [markdown]
# ## What differs from JAX
#
# - **Arrays are NumPy's.** numbax returns `numpy.ndarray`s, and everything NumPy does to them outside
#   compiled code is NumPy (in place updates included). `jnp` is NumPy itself.
# - **`x.at[i].set(v)` only inside transformed code.** NumPy arrays have no `.at`; inside `jit`, `grad` and
#   the other transformations numbax rewrites it to a functional update, as JAX computes it.
# - **float64 by default**, as NumPy: JAX programs that rely on float32 by default compute in float64 on numbax
#   unless they ask for float32.
# - **Globals are read when a specialization compiles**, as with `jax.jit`: a module-level value bound anew
#   is read by a transformation made afresh (`jax.grad(loss)(...)` written in the loop), while a kept one runs
#   the value it compiled with.
# - **Python control flow compiles**: `if` and `while` on run-time values work inside `jit`, and reverse mode
#   goes through `while` loops, where JAX needs `lax.cond`/`lax.while_loop` and cannot reverse the latter.
#
# What numbax cannot compile it refuses at your line with what to write instead; it never returns a number it
# has not derived.
