"""The programs that ``benchmarks/run_grad.py`` differentiates: plain NumPy, as a user would write them.

numbax reads these functions' source (``numbax.jit`` for the primal column,
``numbax.grad`` for the gradient column), so they use Python loops, ``while``,
lists of ``(w, b)`` tuples and whatever NumPy a Numba user may call. The other
columns (hand-written Numba, JAX, autograd, torch) live in ``benchmarks/grad/``.

Each task is described by a ``Task`` in ``TASKS``: the function, how to build
its arguments, which arguments the gradient is taken with respect to, and the
static (non-differentiated, compile-time) ones.
"""
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

# --------------------------------------------------------------------------
# 1, 2. An MLP's mean squared error over a list of (w, b) tuples (the README's example).


def forward(params, x):
    for w, b in params[:-1]:
        x = np.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def mlp_loss(params, x, y):
    return np.mean((forward(params, x) - y) ** 2)


def mlp_args(sizes, batch, seed=0):
    rng = np.random.default_rng(seed)
    params = [(rng.normal(size=(m, n)) / np.sqrt(m), 0.1 * rng.normal(size=n))
              for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.normal(size=(batch, sizes[0]))
    y = rng.normal(size=(batch, sizes[-1]))
    return params, x, y


# --------------------------------------------------------------------------
# 3. The Rosenbrock function in n dimensions.


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_args(n=1000, seed=0):
    return (np.random.default_rng(seed).uniform(-1.5, 1.5, size=n),)


# --------------------------------------------------------------------------
# 4. Lotka-Volterra predator-prey equations, integrated with the explicit midpoint
# rule (RK2) in a Python loop; the loss is the final state's distance to a target.
# p = (prey growth, predation, predator death, predator growth), u0 = (prey, predators).


def lotka_volterra(x, y, p):
    return p[0] * x - p[1] * x * y, p[3] * x * y - p[2] * y


def ode_loss(p, u0, dt, n_steps):
    x = u0[0]
    y = u0[1]
    for i in range(n_steps):
        fx, fy = lotka_volterra(x, y, p)
        gx, gy = lotka_volterra(x + 0.5 * dt * fx, y + 0.5 * dt * fy, p)
        x = x + dt * gx
        y = y + dt * gy
    return (x - 1.0) ** 2 + (y - 1.0) ** 2


def ode_args(n_steps=2000):
    return np.array([1.5, 1.0, 3.0, 1.0]), np.array([1.0, 1.2]), 10.0 / 2000, n_steps


# --------------------------------------------------------------------------
# 5. Kepler's equation E - e sin(E) = M for the eccentric anomaly E, solved by Newton's
# method to a tolerance in a `while` loop; the gradient is dE/de.


def kepler(e, M):
    E = M
    delta = 1.0
    while abs(delta) > 1e-12:
        delta = (E - e * np.sin(E) - M) / (1.0 - e * np.cos(E))
        E = E - delta
    return E


def kepler_args():
    return 0.7, 1.3


# --------------------------------------------------------------------------
# 6. Softmax cross-entropy of a batch of logits against integer labels, row by row
# with the maximum subtracted for stability.


def softmax_cross_entropy(logits, labels):
    n = logits.shape[0]
    total = 0.0
    for i in range(n):
        z = logits[i] - np.max(logits[i])
        total = total + np.log(np.sum(np.exp(z))) - z[labels[i]]
    return total / n


def softmax_cross_entropy_args(n=256, k=100, seed=0):
    rng = np.random.default_rng(seed)
    return 3.0 * rng.normal(size=(n, k)), rng.integers(0, k, size=n)


# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    name: str
    title: str  # for the tables
    fn: Callable
    make_args: Callable[[], tuple]
    argnums: object = 0  # as in numbax.grad / jax.grad: an int, or a tuple of ints
    jax_static: tuple = ()  # argnums that jax.jit must take as static (a trip count that reverse mode needs)
    helpers: tuple = field(default=())  # user functions fn calls, for the line count

    def args(self):
        return tuple(self.make_args())


TASKS = (
    Task("mlp_small", "MLP [10, 20, 1], batch 100, MSE", mlp_loss, lambda: mlp_args([10, 20, 1], 100),
         helpers=(forward,)),
    Task("mlp_large", "MLP [784, 256, 10], batch 128, MSE", mlp_loss, lambda: mlp_args([784, 256, 10], 128),
         helpers=(forward,)),
    Task("rosenbrock", "Rosenbrock, n = 1000", rosenbrock, rosenbrock_args),
    Task("ode", "Lotka-Volterra RK2, 2000 steps, d/d(p, u0)", ode_loss, ode_args, argnums=(0, 1),
         jax_static=(3,), helpers=(lotka_volterra,)),
    Task("newton", "Kepler's equation by Newton (`while`), dE/de", kepler, kepler_args),
    Task("softmax_xent", "softmax cross-entropy, logits 256 x 100", softmax_cross_entropy,
         softmax_cross_entropy_args),
)
TASKS_BY_NAME = {t.name: t for t in TASKS}

# The memory measurement: the ODE's loop run for a million steps (the tape grows with the trip count).
LONG_STEPS = 10 ** 6
