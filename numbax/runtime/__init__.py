"""Helpers that generated code calls (``from numbax import runtime as rt``): NumPy from Python, loops in Numba."""
from numbax.runtime.reductions import *  # noqa: F401,F403
from numbax.runtime.grad import *  # noqa: F401,F403
from numbax.runtime.norm_grads import *  # noqa: F401,F403
from numbax.runtime.special import *  # noqa: F401,F403
from numbax.runtime.arrays import *  # noqa: F401,F403
from numbax.runtime.contractions import *  # noqa: F401,F403
from numbax.runtime.identity import *  # noqa: F401,F403
from numbax.runtime.scan import *  # noqa: F401,F403
from numbax.runtime.batching import *  # noqa: F401,F403
from numbax.runtime.one_hot import *  # noqa: F401,F403
from numbax.runtime.debug import *  # noqa: F401,F403
from numbax.runtime.checks import *  # noqa: F401,F403
from numbax.runtime.eig import *  # noqa: F401,F403
from numbax.runtime.vector_math import *  # noqa: F401,F403
from numbax.runtime.extrema import *  # noqa: F401,F403
from numbax.runtime.sorting import *  # noqa: F401,F403
from numbax.runtime.running_extrema import *  # noqa: F401,F403
from numbax.runtime.pooling import *  # noqa: F401,F403
from numbax.runtime.constructors import *  # noqa: F401,F403
from numbax.runtime.complex_parts import *  # noqa: F401,F403
from numbax.runtime.products import *  # noqa: F401,F403
from numbax.runtime.overlap import *  # noqa: F401,F403
from numbax.runtime.polynomials import *  # noqa: F401,F403
from numbax.runtime.interpolation import *  # noqa: F401,F403
from numbax.runtime.convolution import *  # noqa: F401,F403
from numbax.runtime.remainders import *  # noqa: F401,F403
from numbax.runtime.scalar_where import *  # noqa: F401,F403
from numbax.runtime.numpy_once import *  # noqa: F401,F403
from numbax.runtime.boundary import *  # noqa: F401,F403
from numbax.runtime.collectives import *  # noqa: F401,F403
from numbax.runtime.shards import *  # noqa: F401,F403
from numbax.runtime.gpu_shards import *  # noqa: F401,F403


def __getattr__(name: str):
    """``rt.random_normal`` and the other ``numbax.random`` kernels, imported on first use."""
    if name.startswith("random_"):
        from numbax.runtime.random.kernels import KERNELS

        if name in KERNELS:
            return KERNELS[name]
    raise AttributeError(f"module 'numbax.runtime' has no attribute {name!r}")
