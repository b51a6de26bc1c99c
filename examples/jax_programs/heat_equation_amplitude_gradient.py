"""The 1-D heat equation by explicit finite differences in ``lax.fori_loop``, and the gradient of the final
temperature at a point with respect to the amplitude of the initial profile, by ``jax.grad`` and ``jax.jvp``."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax

N = 41
DX = 1.0 / (N - 1)
ALPHA = 0.1
DT = 0.4 * DX * DX / ALPHA
STEPS = 200


def initial_profile(amplitude, width):
    x = jnp.linspace(0.0, 1.0, N)
    return amplitude * jnp.exp(-((x - 0.5) ** 2) / (2.0 * width ** 2))


def heat_step(u):
    laplacian = (u[2:] - 2.0 * u[1:-1] + u[:-2]) / (DX * DX)
    interior = u[1:-1] + DT * ALPHA * laplacian
    return jnp.concatenate([jnp.zeros(1), interior, jnp.zeros(1)])


def final_temperature(amplitude, width):
    u = lax.fori_loop(0, STEPS, lambda i, u: heat_step(u), initial_profile(amplitude, width))
    return u[N // 4]


@jax.jit
def sensitivities(amplitude, width):
    return jax.value_and_grad(final_temperature, argnums=(0, 1))(amplitude, width)


def main():
    value, (d_amplitude, d_width) = sensitivities(2.0, 0.1)
    print(f"temperature at x=0.25 {float(value):.12f}")
    print(f"d/d amplitude {float(d_amplitude):.12f}  d/d width {float(d_width):.12f}")
    _, tangent = jax.jvp(final_temperature, (2.0, 0.1), (1.0, 0.0))
    print(f"jvp d/d amplitude {float(tangent):.12f}")


if __name__ == "__main__":
    main()
