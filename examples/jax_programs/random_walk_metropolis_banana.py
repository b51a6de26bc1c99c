"""Random-walk Metropolis for a two-dimensional banana-shaped target: the chain runs in ``lax.fori_loop``
inside a jit'ed function, a key split at every step for the proposal and the accept test; prints the
acceptance rate and the sample means."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax, random


def log_density(z):
    x, y = z[0], z[1]
    return -0.5 * (x ** 2 / 4.0 + (y - 0.5 * x ** 2 + 1.0) ** 2)


@jax.jit
def run_chain(key, z0, step_size):
    def body(i, state):
        key, z, logp, accepted, total, total_sq = state
        key, key_prop, key_acc = random.split(key, 3)
        proposal = z + step_size * random.normal(key_prop, (2,))
        logp_prop = log_density(proposal)
        accept = jnp.log(random.uniform(key_acc)) < logp_prop - logp
        z = jnp.where(accept, proposal, z)
        logp = jnp.where(accept, logp_prop, logp)
        return key, z, logp, accepted + accept, total + z, total_sq + z * z

    init = (key, z0, log_density(z0), 0, jnp.zeros(2), jnp.zeros(2))
    _, z, _, accepted, total, total_sq = lax.fori_loop(0, 2000, body, init)
    return z, accepted, total, total_sq


def main():
    z0 = jnp.array([0.0, 0.0])
    for seed, step_size in [(0, 0.5), (1, 1.0), (2, 2.0)]:
        z, accepted, total, total_sq = run_chain(random.PRNGKey(seed), z0, step_size)
        mean = total / 2000
        var = total_sq / 2000 - mean * mean
        print(f"step size {step_size:.1f}  acceptance {int(accepted) / 2000:.4f}  "
              f"mean {float(mean[0]):.10f} {float(mean[1]):.10f}  var {float(var[0]):.10f} {float(var[1]):.10f}")
        print(f"last state {float(z[0]):.10f} {float(z[1]):.10f}")


if __name__ == "__main__":
    main()
