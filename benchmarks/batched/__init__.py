"""Reference columns of ``benchmarks/run_batched.py``: derivatives written by hand for ``numba.njit``."""
