"""Mean-field ADVI for Bayesian linear regression: a Gaussian variational posterior over the weights, the ELBO
estimated by the reparameterization trick with ``random.normal`` and ``jax.scipy.stats.norm.logpdf``, a fresh
key split off at every step, and stochastic gradient ascent in a jit'ed step."""
import numbax as jax
import numbax.numpy as jnp
from numbax import random
import numbax.scipy.stats as stats

NUM_SAMPLES = 16


def log_joint(w, x, y):
    log_prior = jnp.sum(stats.norm.logpdf(w, 0.0, 1.0))
    log_likelihood = jnp.sum(stats.norm.logpdf(y, x @ w, 0.5))
    return log_prior + log_likelihood


def elbo(variational, key, x, y):
    mu, log_sigma = variational
    eps = random.normal(key, (NUM_SAMPLES, mu.shape[0]))
    w = mu + jnp.exp(log_sigma) * eps
    expected_log_joint = jnp.mean(jax.vmap(log_joint, in_axes=(0, None, None))(w, x, y))
    entropy = jnp.sum(log_sigma) + 0.5 * mu.shape[0] * (1.0 + jnp.log(2.0 * jnp.pi))
    return expected_log_joint + entropy


@jax.jit
def advi_step(variational, key, x, y):
    value, grads = jax.value_and_grad(elbo)(variational, key, x, y)
    mu, log_sigma = variational
    d_mu, d_log_sigma = grads
    return (mu + 0.002 * d_mu, log_sigma + 0.002 * d_log_sigma), value


def main():
    key = random.PRNGKey(42)
    key, key_x, key_y = random.split(key, 3)
    true_w = jnp.array([1.5, -0.7, 0.3])
    x = random.normal(key_x, (40, 3))
    y = x @ true_w + 0.5 * random.normal(key_y, (40,))
    variational = (jnp.zeros(3), jnp.full((3,), -1.0))
    for step in range(200):
        key, subkey = random.split(key)
        variational, value = advi_step(variational, subkey, x, y)
        if step % 50 == 0:
            print(f"step {step}  elbo {float(value):.10f}")
    mu, log_sigma = variational
    sigma = jnp.exp(log_sigma)
    print(f"posterior mean {float(mu[0]):.10f} {float(mu[1]):.10f} {float(mu[2]):.10f}")
    print(f"posterior sd {float(sigma[0]):.10f} {float(sigma[1]):.10f} {float(sigma[2]):.10f}")


if __name__ == "__main__":
    main()
