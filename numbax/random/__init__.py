"""numbax.random: JAX's functional random numbers (Threefry-2x32 keys), bit-identical with ``jax.random``.

A key is a ``uint32`` NumPy array of shape ``(2,)``, the raw key data of ``jax.random.PRNGKey``;
``key(seed)`` returns the same array, since NumPy has no key dtype and numbax has one PRNG.
Functions take a key and never change it: ``split`` and ``fold_in`` make new ones. Samples equal
JAX's bit for bit (JAX 0.10.2 on the CPU, ``jax_threefry_partitionable`` on, its default) for
float32 and float64; where JAX's default depends on ``jax_enable_x64`` (``float``, ``int``, the
width of ``bits``, large and negative seeds) numbax takes the 64-bit choice, as NumPy would, and
the default float dtype is float64. float32 samples equal JAX's in its 32-bit mode as well.
XLA's CPU code fuses multiply-adds, and numbax does the same (x86-64 with FMA), so this holds on
every such CPU, except for ``gamma``: it starts from the CPU's ``rsqrt`` estimate, as numbax does,
so its samples equal JAX's on the machine JAX runs on and are within a few ulp on others (the
README's "Random numbers and JAX" states the bounds).

Design: every sampler is a Python function that checks its arguments and calls a Numba kernel
``*_kernel(key, shape, dtype, ...)`` (``numbax.runtime.random``, which generated code calls too)
with a static shape tuple and a NumPy scalar type. Kernels compile lazily on first use
(``njit(cache=True)``), so importing numbax compiles nothing.
``permutation``, ``choice`` and ``categorical`` draw random indices with kernels and gather with
them in plain NumPy (``selection.py``), functions that numbax also compiles from their source.

Inside ``jit`` and ``grad`` every sampler is lowered (``lowering.py``) to the same kernels and
gathers, so samples are the same bits in both places (keys made from run-time seeds too); dtypes,
axes and ``replace`` must be known at compile time, shapes too except the run-time dims that
``normal``, ``uniform``, ``exponential``, ``gumbel``, ``bernoulli`` (of a number ``p``) and ``choice``
(of an int or a 1-D array) take
(``x.shape``), and ``truncated_normal``'s bounds, ``gamma``'s ``a`` and the arrays
drawn from may be run-time values. Keys are integer data and carry no derivative; ``uniform``'s
bounds act only through the arithmetic after the draw, ``truncated_normal``'s bounds and
``gamma``'s ``a`` have JAX's derivatives, ``poisson``'s counts none (``derivatives.py``), and a permuted or chosen array has
the derivative its indexing has.
"""
from numbax.random.arguments import NumbaxRandomArgumentError
from numbax.random.continuous import exponential, gamma, gumbel, normal, truncated_normal, uniform
from numbax.random.discrete import bernoulli, bits, poisson, randint
from numbax.random.keys import PRNGKey, fold_in, key, key_data, split
from numbax.random.multivariate import multivariate_normal
from numbax.random.selection import categorical, choice, permutation

__all__ = ["PRNGKey", "key", "key_data", "split", "fold_in", "bits", "uniform", "normal", "exponential", "gumbel",
           "truncated_normal", "multivariate_normal", "gamma", "randint", "bernoulli", "choice", "permutation", "categorical",
           "poisson", "NumbaxRandomArgumentError"]

from numbax.random import lowering as _lowering  # noqa: E402

_lowering.attach()
