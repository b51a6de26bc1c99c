"""Tuning the ridge penalty by gradient descent on the validation loss, differentiating through the solve
of the normal equations (``jnp.linalg.solve``) with respect to ``log(lambda)``, run on numbax by its imports
alone."""
import numbax as jax
import numbax.numpy as jnp
from numbax import random


def ridge_weights(log_lam, x, y):
    gram = x.T @ x + jnp.exp(log_lam) * jnp.eye(x.shape[1])
    return jnp.linalg.solve(gram, x.T @ y)


def validation_loss(log_lam, x_train, y_train, x_val, y_val):
    w = ridge_weights(log_lam, x_train, y_train)
    return jnp.mean((x_val @ w - y_val) ** 2)


@jax.jit
def tune_step(log_lam, x_train, y_train, x_val, y_val):
    value, g = jax.value_and_grad(validation_loss)(log_lam, x_train, y_train, x_val, y_val)
    return log_lam - 2.0 * g, value, g


def main():
    kw, kx, kn = random.split(random.PRNGKey(9), 3)
    true_w = random.normal(kw, (8,))
    x = random.normal(kx, (40, 8))
    y = x @ true_w + 1.5 * random.normal(kn, (40,))
    x_train, y_train, x_val, y_val = x[:20], y[:20], x[20:], y[20:]
    log_lam = jnp.array(0.0)
    for i in range(6):
        log_lam, value, g = tune_step(log_lam, x_train, y_train, x_val, y_val)
        print(f"step {i} validation loss {float(value):.10f} gradient {float(g):.10f}")
    print(f"lambda {float(jnp.exp(log_lam)):.10f}")
    curvature = jax.grad(jax.grad(validation_loss))(log_lam, x_train, y_train, x_val, y_val)
    print(f"second derivative {float(curvature):.10f}")


if __name__ == "__main__":
    main()
