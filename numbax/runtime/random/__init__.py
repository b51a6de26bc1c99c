"""The Numba kernels of ``numbax.random``, which generated code calls as ``rt.random_normal`` and the others
(``kernels.KERNELS``); the samplers that check arguments are ``numbax.random``'s, the lowering is the compiler's."""
