"""Gaussian-process regression with an RBF kernel: the log marginal likelihood through a Cholesky factor
(``jax.scipy.linalg.cholesky`` and ``cho_solve``), gradient ascent on the log length-scale, log signal scale and
log noise with ``jax.value_and_grad``, and the posterior mean at a few test points."""
import numbax as jax
import numbax.numpy as jnp
from numbax import random
from numbax.scipy.linalg import cho_solve, cholesky


def rbf_kernel(x1, x2, log_lengthscale, log_scale):
    sq_dist = (x1[:, None] - x2[None, :]) ** 2
    return jnp.exp(2.0 * log_scale) * jnp.exp(-0.5 * sq_dist / jnp.exp(2.0 * log_lengthscale))


def log_marginal_likelihood(params, x, y):
    n = x.shape[0]
    k = rbf_kernel(x, x, params["log_lengthscale"], params["log_scale"])
    k = k + jnp.exp(2.0 * params["log_noise"]) * jnp.eye(n)
    chol = cholesky(k, lower=True)
    alpha = cho_solve((chol, True), y)
    return -0.5 * jnp.dot(y, alpha) - jnp.sum(jnp.log(jnp.diag(chol))) - 0.5 * n * jnp.log(2.0 * jnp.pi)


@jax.jit
def ascent_step(params, x, y):
    value, grads = jax.value_and_grad(log_marginal_likelihood)(params, x, y)
    new_params = jax.tree_util.tree_map(lambda p, g: p + 0.02 * g, params, grads)
    return new_params, value, grads


@jax.jit
def posterior_mean(params, x, y, x_test):
    k = rbf_kernel(x, x, params["log_lengthscale"], params["log_scale"])
    k = k + jnp.exp(2.0 * params["log_noise"]) * jnp.eye(x.shape[0])
    chol = cholesky(k, lower=True)
    k_star = rbf_kernel(x_test, x, params["log_lengthscale"], params["log_scale"])
    return k_star @ cho_solve((chol, True), y)


def main():
    key = random.PRNGKey(0)
    key_x, key_noise = random.split(key)
    x = jnp.sort(random.uniform(key_x, (20,), minval=0.0, maxval=6.0))
    y = jnp.sin(x) + 0.1 * random.normal(key_noise, (20,))
    params = {"log_lengthscale": jnp.array(0.0), "log_scale": jnp.array(0.0), "log_noise": jnp.array(-1.0)}
    for step in range(30):
        params, value, grads = ascent_step(params, x, y)
        if step % 6 == 0:
            print(f"step {step}  log marginal likelihood {float(value):.10f}  "
                  f"d/dlog_lengthscale {float(grads['log_lengthscale']):.10f}  "
                  f"d/dlog_noise {float(grads['log_noise']):.10f}")
    print(f"lengthscale {float(jnp.exp(params['log_lengthscale'])):.10f}  "
          f"noise {float(jnp.exp(params['log_noise'])):.10f}")
    mean = posterior_mean(params, x, y, jnp.array([0.5, 2.0, 4.5]))
    print(f"posterior mean {float(mean[0]):.10f} {float(mean[1]):.10f} {float(mean[2]):.10f}")


if __name__ == "__main__":
    main()
