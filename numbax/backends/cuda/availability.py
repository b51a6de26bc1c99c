"""Whether this process can run the GPU backend: ``numba.cuda`` importable, with a GPU or its simulator.

Every GPU request (``devices("gpu")``, ``device_put`` to a GPU, a ``jit`` call on the GPU backend) asks here,
so a machine without one gets the same error from all of them.
"""
from __future__ import annotations

import functools
from types import ModuleType

from numbax.errors import NumbaxDeviceError

_HINT = ("install the `cuda` extra (pip install 'numbax[cuda]') on a machine with a CUDA driver, or set "
         "NUMBA_ENABLE_CUDASIM=1 before numba is imported to run in Numba's CUDA simulator; or compute on the "
         "CPU (backend='cpu', and numbax.device_get for device arrays).")


@functools.lru_cache(maxsize=None)
def _cuda_or_reason():
    try:
        from numba import cuda
    except ImportError as exc:
        return None, f"numba.cuda cannot be imported ({exc})"
    try:
        if cuda.is_available():
            return cuda, ""
    except Exception as exc:  # noqa: BLE001 - a driver that fails to initialise means no usable GPU
        return None, f"the CUDA driver failed to initialise ({exc})"
    return None, "numba.cuda found no CUDA GPU"


def cuda() -> ModuleType:
    """``numba.cuda``, ready to run kernels.

    Raises:
        NumbaxDeviceError: numba.cuda is missing, or finds neither a GPU nor its simulator.
    """
    module, reason = _cuda_or_reason()
    if module is None:
        raise NumbaxDeviceError(f"no CUDA GPU is available: {reason}", hint=_HINT)
    return module


def simulated() -> bool:
    """Whether kernels run in Numba's CUDA simulator (where small launches keep tests fast)."""
    return type(cuda().gpus).__module__.startswith("numba.cuda.simulator")
