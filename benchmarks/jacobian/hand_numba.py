"""Forward-mode derivatives, Hessians and Jacobians of ``jacobian_tasks`` derived by hand for ``numba.njit``:
the measure of the limit for each of numbax's columns."""
import numpy as np
from numba import njit


@njit(cache=True)
def ode_loss_jvp(p, u0, dt, n_steps, tp):
    """The loss and its derivative along ``tp`` (forward mode: tangents carried beside the states)."""
    a, b, c, d = p[0], p[1], p[2], p[3]
    ta, tb, tc, td = tp[0], tp[1], tp[2], tp[3]
    h = 0.5 * dt
    x, y = u0[0], u0[1]
    tx, ty = 0.0, 0.0
    for _ in range(n_steps):
        fx = a * x - b * x * y
        fy = d * x * y - c * y
        tfx = ta * x + a * tx - tb * x * y - b * (tx * y + x * ty)
        tfy = td * x * y + d * (tx * y + x * ty) - tc * y - c * ty
        xm, ym = x + h * fx, y + h * fy
        txm, tym = tx + h * tfx, ty + h * tfy
        gx = a * xm - b * xm * ym
        gy = d * xm * ym - c * ym
        tgx = ta * xm + a * txm - tb * xm * ym - b * (txm * ym + xm * tym)
        tgy = td * xm * ym + d * (txm * ym + xm * tym) - tc * ym - c * tym
        x, y = x + dt * gx, y + dt * gy
        tx, ty = tx + dt * tgx, ty + dt * tgy
    return (x - 1.0) ** 2 + (y - 1.0) ** 2, 2.0 * (x - 1.0) * tx + 2.0 * (y - 1.0) * ty


@njit(cache=True)
def logistic_hessian(x, a, y):
    """``a.T diag(s (1 - s) y^2 / m) a + 0.1 I`` with ``s`` the sigmoid of ``-y z``."""
    m, n = a.shape
    z = a @ x
    weights = np.empty(m)
    for i in range(m):
        s = 1.0 / (1.0 + np.exp(y[i] * z[i]))
        weights[i] = s * (1.0 - s) * y[i] * y[i] / m
    h = np.zeros((n, n))
    for i in range(m):
        for j in range(n):
            wa = weights[i] * a[i, j]
            for k in range(n):
                h[j, k] += wa * a[i, k]
    for j in range(n):
        h[j, j] += 0.1
    return h


@njit(cache=True)
def layer_jacobian(x, w, b):
    """``d tanh(x @ w + b)[r, j] / d x[s, i]``: ``(1 - h[r, j]^2) w[i, j]`` where ``r == s``, else zero."""
    batch, n_in = x.shape
    n_out = w.shape[1]
    out = np.tanh(x @ w + b)
    jac = np.zeros((batch, n_out, batch, n_in))
    for r in range(batch):
        for j in range(n_out):
            slope = 1.0 - out[r, j] * out[r, j]
            for i in range(n_in):
                jac[r, j, r, i] = slope * w[i, j]
    return jac


@njit(cache=True)
def rosenbrock_hvp(x, v):
    """The Hessian of Rosenbrock (tridiagonal) times ``v``."""
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(n - 1):
        xi = x[i]
        hii = 1200.0 * xi * xi - 400.0 * x[i + 1] + 2.0
        hij = -400.0 * xi
        out[i] += hii * v[i] + hij * v[i + 1]
        out[i + 1] += hij * v[i] + 200.0 * v[i + 1]
    return out
