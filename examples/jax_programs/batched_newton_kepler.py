"""Kepler's equation ``E - e sin E = M`` solved for many mean anomalies at once: a fixed number of Newton steps
with the derivative from ``jax.grad``, mapped over the anomalies with ``jax.vmap``, and the sensitivity
``dE/de`` of every solution by ``jax.vmap(jax.grad(...))``; run on numbax by its imports."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax


def kepler_residual(E, M, e):
    return E - e * jnp.sin(E) - M


def solve(M, e):
    def newton(i, E):
        return E - kepler_residual(E, M, e) / jax.grad(kepler_residual)(E, M, e)

    return lax.fori_loop(0, 12, newton, M + e * jnp.sin(M))


solve_all = jax.jit(jax.vmap(solve, in_axes=(0, None)))
sensitivity = jax.jit(jax.vmap(jax.grad(solve, argnums=1), in_axes=(0, None)))


def main():
    M = jnp.linspace(0.1, 3.0, 7)
    for e in (0.1, 0.5, 0.9):
        E = solve_all(M, e)
        residual = jnp.max(jnp.abs(kepler_residual(E, M, e)))
        print(f"e {e:.1f}  max residual {float(residual):.2e}")
        print("  E    ", " ".join(f"{float(v):.12f}" for v in E))
        print("  dE/de", " ".join(f"{float(v):.12f}" for v in sensitivity(M, e)))


if __name__ == "__main__":
    main()
