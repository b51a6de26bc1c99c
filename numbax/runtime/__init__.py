"""Helpers that generated code calls (``from numbax import runtime as rt``): NumPy from Python, loops in Numba."""
from numbax.runtime.reductions import *  # noqa: F401,F403
from numbax.runtime.grad import *  # noqa: F401,F403
from numbax.runtime.special import *  # noqa: F401,F403
from numbax.runtime.arrays import *  # noqa: F401,F403
from numbax.runtime.contractions import *  # noqa: F401,F403
