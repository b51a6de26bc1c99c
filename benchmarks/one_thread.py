"""Imported first by a benchmark script, before NumPy: one thread for BLAS, XLA and Numba, the CPU for JAX.

Setting these after NumPy or JAX is imported has no effect, so each script imports this module before them;
values already in the environment win.
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
