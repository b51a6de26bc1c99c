"""Fit the damping and stiffness of a damped oscillator to noisy observations: an RK4 integrator written with
``lax.scan``, a least-squares loss, and gradient descent with ``jax.value_and_grad`` in a jit'ed step."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax
from numbax import random

DT = 0.05
STEPS = 60


def rhs(state, params):
    x, v = state[0], state[1]
    damping, stiffness = params[0], params[1]
    return jnp.array([v, -damping * v - stiffness * x])


def rk4_step(state, params):
    k1 = rhs(state, params)
    k2 = rhs(state + 0.5 * DT * k1, params)
    k3 = rhs(state + 0.5 * DT * k2, params)
    k4 = rhs(state + DT * k3, params)
    return state + DT / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def trajectory(params, state0):
    def body(state, _):
        new = rk4_step(state, params)
        return new, new[0]

    _, xs = lax.scan(body, state0, None, length=STEPS)
    return xs


def loss(params, state0, observed):
    return jnp.mean((trajectory(params, state0) - observed) ** 2)


@jax.jit
def step(params, state0, observed):
    value, g = jax.value_and_grad(loss)(params, state0, observed)
    return params - 0.5 * g, value


def main():
    state0 = jnp.array([1.0, 0.0])
    true_params = jnp.array([0.3, 4.0])
    key = random.PRNGKey(0)
    key, noise_key = random.split(key)
    observed = trajectory(true_params, state0) + 0.01 * random.normal(noise_key, (STEPS,))
    params = jnp.array([0.1, 3.5])
    for i in range(200):
        params, value = step(params, state0, observed)
        if i % 40 == 0:
            print(f"step {i:3d}  loss {float(value):.10e}")
    print(f"damping {float(params[0]):.10f}  stiffness {float(params[1]):.10f}")
    print(f"final loss {float(loss(params, state0, observed)):.10e}")


if __name__ == "__main__":
    main()
