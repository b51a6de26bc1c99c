"""The GPU backend's kernels compiled for a real GPU's instruction set, on a machine without one.

The GPU tests run every kernel in Numba's CUDA simulator, which executes a kernel's Python as Python: a kernel
that numba.cuda cannot type or lower (a NumPy function it lacks, a tuple it cannot unify) passes there and
fails on the first real GPU. ``record`` notes each kernel the simulator launches, with the Numba types of its
arguments; ``check`` (``python -m tests.ptx.check DIR``), in a process without the simulator, compiles each
for a GPU's compute capability (PTX through NVVM, machine code through nvJitLink), as numba.cuda does on a
launch. Neither needs a GPU: the CUDA libraries come as the ``cuda-sim`` extra's wheels.
"""
