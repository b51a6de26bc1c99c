"""kernels: the ``rt.`` names that generated code calls ``numbax.random``'s kernels by."""
from __future__ import annotations

from numbax.runtime.random import continuous, discrete, numbers
from numbax.runtime.random.derivatives import gamma_vjp_kernel, truncated_normal_vjp_kernel
from numbax.runtime.random.indices import choice_kernel, permutation_kernel, shuffle_kernel, weighted_choice_kernel
from numbax.runtime.random.threefry import bits_kernel, fold_in_kernel, key_kernel, split_kernel

# the ``rt.`` name generated code calls -> the kernel. Draws from a key alone, and random integers (Poisson
# counts too, whose derivative in their rate JAX gives as zero), carry no derivative; the arrays that ``permutation`` and ``choice`` gather from keep theirs through indexing.
DRAWS = {"random_key": key_kernel, "random_split": split_kernel, "random_fold_in": fold_in_kernel, "random_bits": bits_kernel,
         "random_uniform": continuous.uniform_kernel, "random_normal": continuous.normal_kernel,
         "random_exponential": continuous.exponential_kernel, "random_gumbel": continuous.gumbel_kernel,
         "random_randint": discrete.randint_kernel, "random_bernoulli": discrete.bernoulli_kernel,
         "random_poisson": discrete.poisson_kernel,
         "random_permutation": permutation_kernel, "random_shuffle": shuffle_kernel,
         "random_choice": choice_kernel, "random_weighted_choice": weighted_choice_kernel}
# samples that depend on run-time parameters (their rules: numbax.random.derivatives), and the kernels of those rules
KERNELS = {**DRAWS, "random_truncated_normal": continuous.truncated_normal_kernel,
           "random_gamma": continuous.gamma_kernel, "random_truncated_normal_vjp": truncated_normal_vjp_kernel,
           "random_gamma_vjp": gamma_vjp_kernel}
# what one GPU thread calls instead, for one example's keys and numbers (``numbers``, ``backends.cuda.lower.keys``)
NUMBERS = {"random_key_at": numbers.key_at, "random_folded_key": numbers.folded_key,
           "random_seed_key": numbers.seed_key, "random_normal_number": numbers.normal_number,
           "random_uniform_number": numbers.uniform_number, "random_exponential_number": numbers.exponential_number,
           "random_gumbel_number": numbers.gumbel_number, "random_bernoulli_number": numbers.bernoulli_number,
           "random_bits_number": numbers.bits_number}
KERNELS.update(NUMBERS)
