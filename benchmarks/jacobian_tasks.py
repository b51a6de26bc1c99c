"""The programs of ``benchmarks/run_jacobian.py``: plain NumPy that numbax reads, float64.

1. ``jvp`` of the Lotka-Volterra ODE loss (``grad_tasks.ode_loss``, 2000 RK2 steps in a Python loop) along a
   direction in parameter space;
2. ``hessian`` of a 20-dimensional regularized logistic loss;
3. ``jacrev`` of an MLP layer ``tanh(x @ w + b)`` with respect to its input, a batch of 128 rows of 10;
4. a Hessian-vector product of Rosenbrock (``grad_tasks.rosenbrock``, n = 1000) by forward over reverse,
   beside the gradient it differentiates.
"""
import numpy as np

from grad_tasks import ode_args, ode_loss, rosenbrock, rosenbrock_args  # noqa: F401


def logistic_loss(x, a, y):
    """Mean log-loss of a linear model with weights ``x`` on rows ``a`` and labels ``y``, plus a ridge term."""
    z = a @ x
    return np.mean(np.log1p(np.exp(-y * z))) + 0.05 * np.sum(x * x)


def logistic_args(n=20, m=60, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n) * 0.3, rng.normal(size=(m, n)), np.sign(rng.normal(size=m))


def layer(x, w, b):
    """One MLP layer over a batch of rows."""
    return np.tanh(x @ w + b)


def layer_args(batch=128, n_in=10, n_out=20, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(batch, n_in)), rng.normal(size=(n_in, n_out)) * 0.3, rng.normal(size=n_out) * 0.1


def ode_direction():
    return np.array([0.1, -0.2, 0.3, 0.05])


def rosenbrock_direction(n=1000):
    return np.linspace(-1.0, 1.0, n)
