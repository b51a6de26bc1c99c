"""The bootstrap standard error of a sample's median and 10%-trimmed mean: resamples drawn with
``random.choice`` under ``vmap`` over keys from ``random.split``, inside a jit'ed function."""
import numbax as jax
import numbax.numpy as jnp
from numbax import random


def trimmed_mean(x):
    s = jnp.sort(x)
    cut = x.shape[0] // 10
    return jnp.mean(s[cut:x.shape[0] - cut])


def resampled_statistics(key, data):
    sample = random.choice(key, data, shape=(data.shape[0],), replace=True)
    return jnp.array([jnp.median(sample), trimmed_mean(sample)])


@jax.jit
def bootstrap(key, data):
    keys = random.split(key, 400)
    stats = jax.vmap(resampled_statistics, in_axes=(0, None))(keys, data)
    return jnp.mean(stats, axis=0), jnp.std(stats, axis=0, ddof=1)


def main():
    key_data, key_boot = random.split(random.PRNGKey(5))
    data = random.exponential(key_data, (50,)) * 2.0
    print(f"median {float(jnp.median(data)):.10f}  trimmed mean {float(trimmed_mean(data)):.10f}")
    means, standard_errors = bootstrap(key_boot, data)
    print(f"bootstrap mean of median {float(means[0]):.10f}  standard error {float(standard_errors[0]):.10f}")
    print(f"bootstrap mean of trimmed mean {float(means[1]):.10f}  standard error {float(standard_errors[1]):.10f}")


if __name__ == "__main__":
    main()
