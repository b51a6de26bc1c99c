"""Reference columns of ``benchmarks/run_jacobian.py``: derivatives written by hand for ``numba.njit``."""
