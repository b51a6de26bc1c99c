"""Bayesian logistic regression: the MAP estimate by Newton's method with ``jax.grad`` and ``jax.hessian``
of the log posterior, and the Laplace approximation's posterior standard deviations from the inverse Hessian."""
import numbax as jax
import numbax.numpy as jnp
from numbax import random


def log_posterior(w, x, y):
    logits = x @ w
    log_likelihood = jnp.sum(y * logits - jnp.logaddexp(0.0, logits))
    log_prior = -0.5 * jnp.sum(w ** 2) / 4.0
    return log_likelihood + log_prior


@jax.jit
def newton_step(w, x, y):
    g = jax.grad(log_posterior)(w, x, y)
    h = jax.hessian(log_posterior)(w, x, y)
    return w - jnp.linalg.solve(h, g), jnp.linalg.norm(g)


def main():
    key_x, key_y = random.split(random.PRNGKey(3))
    features = random.normal(key_x, (60, 2))
    x = jnp.concatenate([jnp.ones((60, 1)), features], axis=1)
    true_w = jnp.array([-0.5, 1.2, -2.0])
    y = random.bernoulli(key_y, jax.nn.sigmoid(x @ true_w)).astype(jnp.float64)
    w = jnp.zeros(3)
    for i in range(5):
        w, grad_norm = newton_step(w, x, y)
        print(f"newton step {i}  gradient norm {float(grad_norm):.8f}  log posterior "
              f"{float(log_posterior(w, x, y)):.10f}")
    covariance = jnp.linalg.inv(-jax.hessian(log_posterior)(w, x, y))
    sd = jnp.sqrt(jnp.diag(covariance))
    print(f"map {float(w[0]):.10f} {float(w[1]):.10f} {float(w[2]):.10f}")
    print(f"laplace sd {float(sd[0]):.10f} {float(sd[1]):.10f} {float(sd[2]):.10f}")


if __name__ == "__main__":
    main()
