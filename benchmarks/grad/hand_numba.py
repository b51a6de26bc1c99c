"""Gradients of the ``grad_tasks`` programs derived by hand, written for ``numba.njit``: the measure of the limit.

Plain functions here; ``compiled(name, cache)`` applies ``numba.njit`` so that a benchmark can time the
compilation itself (and Numba's disk cache). Each ``<task>_grad`` takes the task's arguments (a list of
``(w, b)`` pairs as a tuple of tuples, since Numba reflects lists) and returns the gradient with respect to
the task's ``argnums``, shaped like those arguments.
"""
import math

import numpy as np


def mlp_loss_grad(params, x, y):
    """d/d(params) of mean((tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2), for two layers."""
    (w1, b1), (w2, b2) = params
    n = x.shape[0]
    h = x @ w1
    hidden = h.shape[1]
    for i in range(n):
        for j in range(hidden):
            h[i, j] = math.tanh(h[i, j] + b1[j])
    r = h @ w2
    m = r.shape[1]
    scale = 2.0 / (n * m)
    db2 = np.zeros(m)
    for i in range(n):
        for k in range(m):
            d = (r[i, k] + b2[k] - y[i, k]) * scale
            r[i, k] = d
            db2[k] += d
    dw2 = h.T @ r
    dz = r @ w2.T
    db1 = np.zeros(hidden)
    for i in range(n):
        for j in range(hidden):
            d = dz[i, j] * (1.0 - h[i, j] * h[i, j])
            dz[i, j] = d
            db1[j] += d
    dw1 = x.T @ dz
    return ((dw1, db1), (dw2, db2))


def rosenbrock_grad(x):
    n = x.shape[0]
    g = np.zeros(n)
    for i in range(n - 1):
        xi = x[i]
        t = x[i + 1] - xi * xi
        g[i] += -400.0 * xi * t - 2.0 * (1.0 - xi)
        g[i + 1] += 200.0 * t
    return g


def ode_loss_grad(p, u0, dt, n_steps):
    """d/d(p, u0) by an adjoint sweep over a preallocated tape of the states (the midpoints are recomputed)."""
    a, b, c, d = p[0], p[1], p[2], p[3]
    h = 0.5 * dt
    xs = np.empty(n_steps)
    ys = np.empty(n_steps)
    x = u0[0]
    y = u0[1]
    for i in range(n_steps):
        xs[i] = x
        ys[i] = y
        xm = x + h * (a * x - b * x * y)
        ym = y + h * (d * x * y - c * y)
        x = x + dt * (a * xm - b * xm * ym)
        y = y + dt * (d * xm * ym - c * ym)
    bx = 2.0 * (x - 1.0)
    by = 2.0 * (y - 1.0)
    ba = bb = bc = bd = 0.0
    for i in range(n_steps - 1, -1, -1):
        x = xs[i]
        y = ys[i]
        xm = x + h * (a * x - b * x * y)
        ym = y + h * (d * x * y - c * y)
        # x' = x + dt * gx, y' = y + dt * gy, with gx = a xm - b xm ym, gy = d xm ym - c ym
        gx = dt * bx
        gy = dt * by
        ba += gx * xm
        bb -= gx * xm * ym
        bc -= gy * ym
        bd += gy * xm * ym
        bxm = gx * (a - b * ym) + gy * d * ym
        bym = gy * (d * xm - c) - gx * b * xm
        # xm = x + h * fx, ym = y + h * fy, with fx = a x - b x y, fy = d x y - c y
        fx = h * bxm
        fy = h * bym
        ba += fx * x
        bb -= fx * x * y
        bc -= fy * y
        bd += fy * x * y
        bx = bx + bxm + fx * (a - b * y) + fy * d * y
        by = by + bym + fy * (d * x - c) - fx * b * x
    return np.array([ba, bb, bc, bd]), np.array([bx, by])


def kepler_grad(e, M):
    """dE/de by the implicit function theorem at the converged root: sin(E) / (1 - e cos(E))."""
    E = M
    delta = 1.0
    while abs(delta) > 1e-12:
        delta = (E - e * math.sin(E) - M) / (1.0 - e * math.cos(E))
        E = E - delta
    return math.sin(E) / (1.0 - e * math.cos(E))


def softmax_cross_entropy_grad(logits, labels):
    n, k = logits.shape
    g = np.empty((n, k))
    inv_n = 1.0 / n
    for i in range(n):
        m = logits[i, 0]
        for j in range(1, k):
            m = max(m, logits[i, j])
        s = 0.0
        for j in range(k):
            e = math.exp(logits[i, j] - m)
            g[i, j] = e
            s += e
        scale = inv_n / s
        for j in range(k):
            g[i, j] *= scale
        g[i, labels[i]] -= inv_n
    return g


GRADS = {
    "mlp_small": mlp_loss_grad,
    "mlp_large": mlp_loss_grad,
    "rosenbrock": rosenbrock_grad,
    "ode": ode_loss_grad,
    "newton": kepler_grad,
    "softmax_xent": softmax_cross_entropy_grad,
}


def compiled(task: str, cache: bool = False):
    import numba

    return numba.njit(cache=cache)(GRADS[task])


def args(task_args):
    """Numba takes the list of (w, b) pairs as a tuple of tuples (a list would be a reflected list)."""
    return tuple(tuple(a) if isinstance(a, list) else a for a in task_args)
