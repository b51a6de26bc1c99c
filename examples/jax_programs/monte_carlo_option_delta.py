"""Monte Carlo pricing of a European call under geometric Brownian motion, with the pathwise delta and vega
from ``jax.grad`` through the simulation (``random.normal`` increments, a time-stepped ``lax.fori_loop``
path), next to the Black-Scholes closed form from ``jax.scipy.stats.norm.cdf``."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax, random
import numbax.scipy.stats as stats

NUM_PATHS = 4000
NUM_STEPS = 16


def discounted_payoff(spot, vol, key, strike, rate, maturity):
    dt = maturity / NUM_STEPS
    z = random.normal(key, (NUM_STEPS, NUM_PATHS))

    def step(i, log_s):
        return log_s + (rate - 0.5 * vol ** 2) * dt + vol * jnp.sqrt(dt) * z[i]

    log_s = lax.fori_loop(0, NUM_STEPS, step, jnp.full((NUM_PATHS,), jnp.log(spot)))
    payoff = jnp.maximum(jnp.exp(log_s) - strike, 0.0)
    return jnp.exp(-rate * maturity) * jnp.mean(payoff)


price_and_greeks = jax.jit(jax.value_and_grad(discounted_payoff, argnums=(0, 1)))


def black_scholes(spot, vol, strike, rate, maturity):
    d1 = (jnp.log(spot / strike) + (rate + 0.5 * vol ** 2) * maturity) / (vol * jnp.sqrt(maturity))
    d2 = d1 - vol * jnp.sqrt(maturity)
    return spot * stats.norm.cdf(d1) - strike * jnp.exp(-rate * maturity) * stats.norm.cdf(d2)


def main():
    key = random.PRNGKey(2024)
    for strike in [90.0, 100.0, 110.0]:
        key, subkey = random.split(key)
        price, (delta, vega) = price_and_greeks(100.0, 0.2, subkey, strike, 0.03, 1.0)
        exact_price, (exact_delta, exact_vega) = jax.value_and_grad(black_scholes, argnums=(0, 1))(
            100.0, 0.2, strike, 0.03, 1.0)
        print(f"strike {strike:.0f}  price {float(price):.10f}  delta {float(delta):.10f}  vega {float(vega):.10f}")
        print(f"black-scholes  price {float(exact_price):.10f}  delta {float(exact_delta):.10f}  "
              f"vega {float(exact_vega):.10f}")


if __name__ == "__main__":
    main()
