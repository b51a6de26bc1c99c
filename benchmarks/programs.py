"""The programs that ``benchmarks/run.py`` measures: plain NumPy code, as a user would write it.

Each program comes with ``*_args()``, which builds example arguments, so that a
fresh process can import this module and call it without anything else.
"""
import numpy as np

# --------------------------------------------------------------------------
# Per-call overhead: a tiny function where dispatch dominates.


def dot_plus_one(x, y):
    return np.sum(x * y + 1.0)


def dot_plus_one_args():
    rng = np.random.default_rng(0)
    return rng.normal(size=10), rng.normal(size=10)


# --------------------------------------------------------------------------
# ~30 lines: an RK4 integrator for a damped, driven pendulum, with branches
# (angle wrap-around, running maximum) inside a loop over a runtime step count.


def pendulum_rhs(theta, omega, t, damping, drive):
    return omega, -damping * omega - np.sin(theta) + drive * np.cos(0.667 * t)


def rk4_pendulum(theta0, omega0, dt, n_steps, damping, drive):
    theta = theta0
    omega = omega0
    t = 0.0
    energy_max = 0.0
    turns = 0
    for i in range(n_steps):
        omega_prev = omega
        k1t, k1w = pendulum_rhs(theta, omega, t, damping, drive)
        k2t, k2w = pendulum_rhs(theta + 0.5 * dt * k1t, omega + 0.5 * dt * k1w, t + 0.5 * dt, damping, drive)
        k3t, k3w = pendulum_rhs(theta + 0.5 * dt * k2t, omega + 0.5 * dt * k2w, t + 0.5 * dt, damping, drive)
        k4t, k4w = pendulum_rhs(theta + dt * k3t, omega + dt * k3w, t + dt, damping, drive)
        theta = theta + dt / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t)
        omega = omega + dt / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w)
        if theta > np.pi:
            theta = theta - 2.0 * np.pi
        elif theta < -np.pi:
            theta = theta + 2.0 * np.pi
        energy = 0.5 * omega * omega + 1.0 - np.cos(theta)
        if energy > energy_max:
            energy_max = energy
        if omega_prev * omega < 0.0:
            turns = turns + 1
        t = t + dt
    return theta, omega, energy_max, turns


def rk4_pendulum_args():
    return 0.2, 0.0, 0.01, 1000, 0.5, 1.2


# --------------------------------------------------------------------------
# ~50 lines: an MLP classifier's loss (with its helpers) over a pytree of parameters
# [(w1, b1), (w2, b2), (w3, b3)], with a numerically stable log-softmax, an
# accuracy count, label smoothing and L2 regularisation, written with explicit loops.


def relu(x):
    return np.maximum(x, 0.0)


def dense(w, b, x):
    return x @ w + b


def standardize(h, eps):
    mu = np.mean(h)
    var = np.mean((h - mu) ** 2)
    return (h - mu) / np.sqrt(var + eps)


def clip(row, bound):
    out = np.empty_like(row)
    for j in range(row.shape[0]):
        v = row[j]
        if v > bound:
            v = bound
        elif v < -bound:
            v = -bound
        out[j] = v
    return out


def row_logsumexp(row):
    m = row[0]
    for j in range(1, row.shape[0]):
        if row[j] > m:
            m = row[j]
    return m + np.log(np.sum(np.exp(row - m)))


def row_argmax(row):
    best = 0
    for j in range(1, row.shape[0]):
        if row[j] > row[best]:
            best = j
    return best


def mlp_classifier_loss(params, x, labels, l2, smoothing):
    h = x
    for w, b in params[:-1]:
        h = relu(standardize(dense(w, b, h), 1e-5))
    w, b = params[-1]
    logits = dense(w, b, h)
    n = logits.shape[0]
    nll = 0.0
    correct = 0
    for i in range(n):
        row = clip(logits[i], 30.0)
        lse = row_logsumexp(row)
        if smoothing > 0.0:
            target = (1.0 - smoothing) * row[labels[i]] + smoothing * np.mean(row)
        else:
            target = row[labels[i]]
        nll = nll + (lse - target)
        if row_argmax(row) == labels[i]:
            correct = correct + 1
    reg = 0.0
    for w, b in params:
        reg = reg + np.sum(w * w)
    return nll / n + l2 * reg, correct / n


def init_mlp(layers, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n)) for m, n in zip(layers[:-1], layers[1:])]


def mlp_classifier_loss_args():
    rng = np.random.default_rng(1)
    params = init_mlp([16, 32, 32, 4])
    x = rng.normal(size=(64, 16))
    labels = rng.integers(0, 4, size=64)
    return params, x, labels, 1e-3, 0.1
