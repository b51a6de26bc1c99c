"""The reference columns of ``benchmarks/run_grad.py``: each task of ``grad_tasks.py`` for another system.

- ``hand_numba``: the gradient derived by hand and written for ``numba.njit``, as the measure of the limit;
- ``jax_versions``: ``jax.numpy`` versions (``lax.fori_loop``/``lax.while_loop`` where JAX needs them);
- ``autograd_versions``: ``autograd.numpy`` versions;
- ``torch_versions``: torch (float64, CPU) versions, differentiated with ``torch.func.grad``.

Where a task's NumPy source runs unchanged on another array module, that system runs the very same source
with ``np`` bound to its module (``same_source``); each module is imported only when its column is measured.
"""
import types


def same_source(xp, names) -> dict:
    """The ``grad_tasks`` functions ``names``, with ``np`` bound to the array module ``xp`` (and their calls of
    each other bound to the rebound versions)."""
    import grad_tasks

    namespace = dict(vars(grad_tasks), np=xp)
    for name in names:
        fn = getattr(grad_tasks, name)
        namespace[name] = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    return {name: namespace[name] for name in names}


def ode_loss_eager(p, u0, dt, n_steps):
    """``grad_tasks.ode_loss`` for systems that record every operation (autograd, torch): the same steps, with the
    parameters read out of ``p`` once rather than in every step, as a user of those systems would write it."""
    a, b, c, d = p[0], p[1], p[2], p[3]
    x = u0[0]
    y = u0[1]
    for i in range(n_steps):
        xm = x + 0.5 * dt * (a * x - b * x * y)
        ym = y + 0.5 * dt * (d * x * y - c * y)
        x = x + dt * (a * xm - b * xm * ym)
        y = y + dt * (d * xm * ym - c * ym)
    return (x - 1.0) ** 2 + (y - 1.0) ** 2
