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
# # Derivatives with numbax: a chain of springs
#
# Eight masses on a line, held between two walls by nine springs that stiffen when stretched
# (a quadratic and a quartic term). The potential energy is plain NumPy. From it numbax derives
#
# - the forces, `-grad(energy)` (reverse mode);
# - a directional derivative, `jvp` (forward mode);
# - the stiffness matrix, as the Jacobian of the forces by `jacfwd` and by `jacrev`, and as `hessian`;
# - the normal modes of the chain, the eigenvectors of the stiffness matrix at rest (plotted);
# - a Hessian-vector product by forward over reverse, `jvp(grad(energy))`, without forming the matrix.
#
# Each is one compiled function, and each cell prints the code numbax generated for it.
# (The source of truth is `02_derivatives.py`, paired with this notebook by jupytext.)

# %%
import numpy as np

import numbax

N = 8  # masses; the walls stand at 0 and N + 1, every spring's rest length is 1


def energy(x):
    """The potential energy of the chain with the masses at positions ``x``."""
    stretch = x[1:] - x[:-1] - 1.0
    left = x[0] - 1.0
    right = N - x[-1]
    springs = np.sum(0.5 * stretch ** 2 + 0.125 * stretch ** 4)
    return springs + 0.5 * left ** 2 + 0.125 * left ** 4 + 0.5 * right ** 2 + 0.125 * right ** 4


rest = np.arange(1.0, N + 1.0)  # every spring at its rest length
x = rest + 0.3 * np.sin(np.arange(N))  # a displaced configuration
print("energy at rest:", energy(rest), " displaced:", round(float(energy(x)), 6))

# %% [markdown]
# ## Forces: `grad`
#
# The force on each mass is minus the gradient of the energy. `numbax.grad` generates the adjoint code
# (`# grad of:` comments point at the lines of `energy` each block differentiates); we check it against
# central differences.

# %%
grad_energy = numbax.grad(energy)
forces = -grad_energy(x)
eps = 1e-6
central = np.array([(energy(x + eps * e) - energy(x - eps * e)) / (2 * eps) for e in np.eye(N)])
print("forces:", np.round(forces, 6))
print("matches central differences:", np.allclose(-forces, central, rtol=1e-6, atol=1e-8))
print(numbax.source(grad_energy, x))

# %% [markdown]
# ## A directional derivative: `jvp`
#
# How fast does the energy change if every mass moves along `v`? Forward mode computes the value and its
# derivative along `v` in one pass: each statement is followed by its tangent (`# tangent of:`).

# %%
v = np.linspace(-1.0, 1.0, N)
value, slope = numbax.jvp(energy, (x,), (v,))
print("energy:", round(float(value), 6), " slope along v:", round(float(slope), 6))
print("equals grad . v:", np.isclose(slope, grad_energy(x) @ v))
from numbax.generated_source import source_for  # noqa: E402

print(source_for(energy, (x,), transform="jvp"))

# %% [markdown]
# ## The stiffness matrix: `jacfwd`, `jacrev` and `hessian`
#
# The Jacobian of the forces is minus the Hessian of the energy. `jacfwd` sweeps one tangent per mass,
# `jacrev` one cotangent per force; both run the sweep as one loop inside one compiled function.
# `hessian` is `jacfwd(jacrev(energy))`: forward mode over the reverse mode's generated code.

# %%
def force(x):
    return -grad_energy(x)


by_columns = numbax.jacfwd(force)(x)
by_rows = numbax.jacrev(force)(x)
stiffness = numbax.hessian(energy)(x)
print("shape:", stiffness.shape)
print("jacfwd == jacrev == -hessian:", np.allclose(by_columns, by_rows), np.allclose(by_columns, -stiffness))
print("symmetric:", np.allclose(stiffness, stiffness.T))
hessian_code = numbax.source(numbax.hessian(energy), x)
print(f"the hessian's generated code: {hessian_code.count(chr(10))} lines in one function; its start:")
print("\n".join(hessian_code.splitlines()[:30]))

# %% [markdown]
# ## Normal modes
#
# At rest the quartic terms vanish to second order, so the stiffness matrix is the tridiagonal `[-1, 2, -1]`
# of a harmonic chain: its eigenvectors are the standing waves `sin(k pi i / (N + 1))`, with frequencies
# `2 sin(k pi / (2 (N + 1)))`. The plot shows the three slowest.

# %%
import matplotlib.pyplot as plt  # noqa: E402

at_rest = numbax.hessian(energy)(rest)
frequencies2, modes = np.linalg.eigh(at_rest)
expected = (2 * np.sin(np.arange(1, N + 1) * np.pi / (2 * (N + 1)))) ** 2
print("squared frequencies match the harmonic chain:", np.allclose(frequencies2, expected))

fig, ax = plt.subplots(figsize=(7, 3))
for k in range(3):
    ax.plot(np.arange(1, N + 1), modes[:, k] * np.sign(modes[0, k]), marker="o",
            label=f"mode {k + 1}, ω = {np.sqrt(frequencies2[k]):.3f}")
ax.axhline(0.0, color="gray", lw=0.5)
ax.set_xlabel("mass")
ax.set_ylabel("displacement")
ax.set_title("The slowest normal modes, from numbax.hessian")
ax.legend()
plt.show()

# %% [markdown]
# ## A Hessian-vector product without the Hessian
#
# `jvp(grad(energy))` is the stiffness matrix applied to `v`, at the cost of a few gradients: forward mode
# over reverse mode, as Newton-Krylov solvers want it. Inside `numbax.jit` it is one compiled function.

# %%
@numbax.jit
def stiffness_times(x, v):
    return numbax.jvp(grad_energy, (x,), (v,))[1]


hvp = stiffness_times(x, v)
print("H @ v:", np.round(hvp, 6))
print("matches hessian(energy)(x) @ v:", np.allclose(hvp, stiffness @ v))
print(stiffness_times.source)
