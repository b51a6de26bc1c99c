"""A Kesten process X_{t+1} = A_t X_t + B_t with lognormal A_t and exponential B_t: many paths simulated with
``vmap`` over keys from ``random.split``, each path a ``lax.scan`` over time; prints moments of X_T."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax, random

NUM_STEPS = 100


def simulate_path(key, x0):
    key_a, key_b = random.split(key)
    log_a = -0.1 + 0.3 * random.normal(key_a, (NUM_STEPS,))
    b = random.exponential(key_b, (NUM_STEPS,))

    def step(x, shocks):
        a_t, b_t = shocks
        x_next = a_t * x + b_t
        return x_next, x_next

    x_final, path = lax.scan(step, x0, (jnp.exp(log_a), b))
    return x_final, jnp.max(path)


@jax.jit
def simulate(key, x0):
    keys = random.split(key, 500)
    return jax.vmap(simulate_path, in_axes=(0, None))(keys, x0)


def main():
    finals, maxima = simulate(random.PRNGKey(7), 1.0)
    print(f"mean {float(jnp.mean(finals)):.10f}  std {float(jnp.std(finals)):.10f}")
    print(f"third moment {float(jnp.mean(finals ** 3)):.10f}")
    print(f"fraction above 20 {float(jnp.mean(finals > 20.0)):.6f}")
    print(f"largest path maximum {float(jnp.max(maxima)):.10f}  mean path maximum {float(jnp.mean(maxima)):.10f}")


if __name__ == "__main__":
    main()
