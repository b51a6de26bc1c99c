"""The primitive registry: one entry per primitive, with every rule numbax has for it (``registry``).

The families of primitives are written one per module, and importing this package registers them all:
``elementwise`` (operators, ufuncs, ``math``, comparisons, casts), ``reductions``, ``shape_ops``,
``linalg``, ``polynomials`` (``polyval``, ``convolve``), ``interpolation``, ``cumulative``
(``lax.cummax``, ``cummin``), ``pooling`` (``stax.MaxPool``), ``constructors``, ``special`` (``scipy.special``),
``composites`` (``np.diff``, ``np.kron``, ...: Python written in other primitives), ``array_api`` (NumPy 2's
``np.vecdot``, ``np.linalg.vector_norm``, ...), ``shape_composites`` (``np.rot90``, ``np.append``, ...) and
``statistics`` (``np.nanmean``, ``np.cov``, ...), composites too, ``masked_reductions`` (``np.sum(x, where=m)``:
keyword composites) and ``runtime_helpers`` (what generated code calls);
``cuda`` adds the GPU backend's lowerings. Rules are written in ``templates``
(reverse mode), ``kinds`` (abstract values) and ``symbolic`` (shapes). ``numbax.random`` registers its
samplers' rules itself, when it is first used.
"""
from numbax.primitives import registry  # noqa: F401  (first: the families register into it)
from numbax.primitives import elementwise, reductions, shape_ops, linalg, constructors, special  # noqa: F401
from numbax.primitives import polynomials, interpolation, cumulative, pooling, composites, array_api  # noqa: F401
from numbax.primitives import shape_composites, statistics, masked_reductions  # noqa: F401
from numbax.primitives import runtime_helpers, collectives  # noqa: F401
from numbax.primitives import cuda  # noqa: F401  (last: it adds the GPU backend's lowering to entries above)
