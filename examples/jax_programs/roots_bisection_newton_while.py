"""Root finding two ways with ``lax.while_loop``: bisection on a bracketing interval, and Newton's method with the
derivative from ``jax.grad``; the root of ``cos(x) - x`` and of a cubic, and the iteration counts."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax


def f(x):
    return jnp.cos(x) - x


def cubic(x):
    return x ** 3 - 2.0 * x - 5.0


@jax.jit
def bisect_f(lo, hi):
    def cond(state):
        lo, hi, i = state
        return (hi - lo > 1e-13) & (i < 200)

    def body(state):
        lo, hi, i = state
        mid = 0.5 * (lo + hi)
        same_sign = jnp.sign(f(mid)) == jnp.sign(f(lo))
        return jnp.where(same_sign, mid, lo), jnp.where(same_sign, hi, mid), i + 1

    lo, hi, i = lax.while_loop(cond, body, (lo, hi, 0))
    return 0.5 * (lo + hi), i


def newton(g, x0):
    dg = jax.grad(g)

    def cond(state):
        x, step, i = state
        return (jnp.abs(step) > 1e-14) & (i < 50)

    def body(state):
        x, _, i = state
        step = g(x) / dg(x)
        return x - step, step, i + 1

    x, _, i = lax.while_loop(cond, body, (x0, 1.0, 0))
    return x, i


@jax.jit
def newton_f(x0):
    return newton(f, x0)


@jax.jit
def newton_cubic(x0):
    return newton(cubic, x0)


def main():
    root, iterations = bisect_f(0.0, 1.0)
    print(f"bisection root {float(root):.12f} after {int(iterations)} halvings, f {float(f(root)):.3e}")
    root, iterations = newton_f(1.0)
    print(f"newton root {float(root):.12f} after {int(iterations)} steps")
    root, iterations = newton_cubic(2.0)
    print(f"cubic root {float(root):.12f} after {int(iterations)} steps, residual {float(cubic(root)):.3e}")


if __name__ == "__main__":
    main()
