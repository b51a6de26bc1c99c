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
# # numbax quickstart
#
# numbax compiles plain NumPy functions with Numba by rewriting their source:
# it reads your function, specializes it to the arguments you call it with,
# and hands readable Python to `numba.njit`. Nothing is traced, so Python
# control flow on runtime values stays control flow.
#
# This notebook shows `numbax.jit`, static arguments, loops and branches on
# runtime values, pytrees of parameters, and how to read the code numbax
# generates. (The source of truth is `01_quickstart.py`, paired with this
# notebook by jupytext.)

# %%
import numpy as np

import numbax

# %% [markdown]
# ## `numbax.jit` on a simple function
#
# Write NumPy, wrap it with `numbax.jit` (or use it as a decorator). The first
# call compiles; later calls with arguments of the same structure, dtypes and
# number of dimensions reuse the compiled code.

# %%
def weighted_tanh_sum(x, w):
    return np.sum(np.tanh(x) * w)


fast = numbax.jit(weighted_tanh_sum)

x = np.linspace(-2.0, 2.0, 5)
w = np.arange(5.0)
print("numbax:", fast(x, w))
print("numpy: ", weighted_tanh_sum(x, w))

# %% [markdown]
# ## Static arguments
#
# Arguments listed in `static_argnums` are compile-time constants: numbax
# folds them into the generated code (here the branch on `norm` disappears).
# A new static value compiles again; the same value reuses the compiled code.
# `numbax.config.log_compiles()` reports each compilation.

# %%
def normalize(x, norm):
    if norm == "l1":
        scale = np.sum(np.abs(x))
    elif norm == "l2":
        scale = np.sqrt(np.sum(x * x))
    else:
        scale = np.max(np.abs(x))
    return x / scale


normalize_jit = numbax.jit(normalize, static_argnums=1)

with numbax.config.log_compiles():
    print(normalize_jit(x, "l2"))  # compiles for norm="l2"
    print(normalize_jit(x, "l2"))  # same static value: no compilation
    print(normalize_jit(x, "l1"))  # new static value: compiles again

# %%
print(normalize_jit.source)  # the last specialization, norm="l1": only that branch is left

# %% [markdown]
# ## Control flow on runtime values
#
# A `while` loop whose trip count depends on the data is compiled as a native
# loop. Here is Newton's method for the square root, run to a tolerance.

# %%
def newton_sqrt(a, tol):
    x = a if a > 1.0 else 1.0
    steps = 0
    while abs(x * x - a) > tol:
        x = 0.5 * (x + a / x)
        steps = steps + 1
    return x, steps


newton_jit = numbax.jit(newton_sqrt)

for a in [2.0, 10.0, 1e6]:
    root, steps = newton_jit(a, 1e-10)
    print(f"sqrt({a:g}) = {root:.12g} after {steps} steps (np.sqrt: {np.sqrt(a):.12g})")

# %% [markdown]
# ## Pytrees: a small MLP
#
# Arguments can be nested lists, tuples and dicts of arrays (pytrees, as in
# JAX). `numbax.tree_util` flattens them; `numbax.jit` specializes to the
# structure, so a loop over the layers is unrolled at compile time.

# %%
def init_mlp(layers, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n)) for m, n in zip(layers[:-1], layers[1:])]


params = init_mlp([3, 8, 1])
leaves, treedef = numbax.tree_util.tree_flatten(params)
print(treedef)
print([leaf.shape for leaf in leaves])

# %%
def mlp(params, x):
    for w, b in params[:-1]:
        x = np.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


mlp_jit = numbax.jit(mlp)

batch = np.random.default_rng(1).normal(size=(4, 3))
out = mlp_jit(params, batch)
print(out.ravel())
print("matches NumPy:", np.allclose(out, mlp(params, batch)))

# %% [markdown]
# ## Reading the generated code
#
# `numbax.source(f, *args)` shows the code numbax would hand to Numba for these
# arguments, without compiling anything. Every block is annotated with the
# line of your source it comes from.

# %%
print(numbax.source(weighted_tanh_sum, x, w))

# %% [markdown]
# A jitted function's `.source` is the code of its last specialization: for
# the MLP, the pytree argument has become one argument per leaf and the loop
# over layers is unrolled.

# %%
print(mlp_jit.source)

# %% [markdown]
# In Jupyter, a jitted function displays as its generated code, highlighted.

# %%
mlp_jit
