"""Shared test configuration: caches that outlive a run, hypothesis settings that make property tests
deterministic and keep their example database out of the repository, the CUDA simulator for the GPU
backend's tests, and the garbage collector's threshold.

numbax's cache (generated source, Numba's machine code) is a per-machine directory unless the Makefile set
one. JAX, the oracle of most tests, compiles each program it runs with XLA (seconds for ``jax.random.gamma``,
tens of milliseconds per primitive of an un-jitted ``jax.grad``); its persistent compilation cache, next to
numbax's, keeps every compiled program, however fast it compiled, so a second run and the other xdist worker
load them instead. The environment carries both to subprocesses (examples, notebooks) too.
"""
import gc
import importlib.util
import os
import tempfile

import pytest
from hypothesis import settings

# The GPU backend's tests (tests/test_gpu_*.py) run in Numba's CUDA simulator. numba.cuda reads this setting
# when it is first imported, which is after this file; nothing else reads it, so the CPU backend compiles and
# runs as it would without it. On a machine with a GPU, NUMBA_ENABLE_CUDASIM=0 runs them there.
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
# `make test` installs numba-cuda and sets this: then the GPU tests may not be skipped for want of it.
REQUIRE_CUDA = os.environ.get("NUMBAX_REQUIRE_CUDASIM") == "1"
if REQUIRE_CUDA and importlib.util.find_spec("numba_cuda") is None:
    raise RuntimeError("NUMBAX_REQUIRE_CUDASIM=1 but numba-cuda is not installed, so the GPU backend's tests "
                       "cannot run: pip install 'numbax[cuda-sim]' (make test does)")

# LLVM's optimization level 0 compiles a small gradient a third faster than level 1 (which compiles numbax's
# loop nests up to four times faster than Numba's default 3), and computes the same bits (no fast-math flags)
# but for fused loops' sums, which it adds in order where level 3 vectorizes them; tests/test_optimization_level.py
# checks that against level 3, what users run. Numba reads it when it is
# first imported, which is after this file.
os.environ.setdefault("NUMBA_OPT", "0")


def _level_zero_passes() -> None:
    """At level 0, LLVM's dead-code passes on each library's final module, as every higher level runs them, and
    SROA and instruction combining on each function.

    A function naming another compiled function as a global (``hash_index(key, i)`` in the random kernels,
    ``_around_jit`` in the gradients of joins) loads the callee's address from a "dynamic global" it never
    uses (Numba's ``lower_constant(types.Dispatcher)``). From level 1, LLVM deletes the load; at level 0 it
    stays, Numba refuses to put the function, and every function linking it, in its disk cache ("Cannot cache
    ... dynamic globals"), and each test process compiled the random runtime again (16 s). Deleting an unused
    load changes no value.

    Numba's IR keeps every variable in a stack slot, which level 0 leaves there: SROA (promoting the slots to
    registers) and instruction combining shrink what LLVM emits machine code for, the largest part of a test
    process's LLVM time (``tests/test_grad_corpus.py`` and ``tests/test_lax_elementwise.py``, three runs each,
    empty caches: 150 s -> 144 s). Neither changes a floating-point result without fast-math flags, which numbax
    never sets.
    """
    from llvmlite import binding as llvm
    from numba.core import codegen, config

    if config.OPT != 0:
        return
    optimize = codegen.CPUCodeLibrary._optimize_final_module
    function_passes = codegen.CPUCodegen._function_pass_manager

    def _optimize_final_module(library):
        optimize(library)
        passes = llvm.create_new_module_pass_manager()
        passes.add_dead_code_elimination_pass()
        passes.add_global_dead_code_eliminate_pass()
        passes.add_sroa_pass()
        tuning = llvm.create_pipeline_tuning_options(speed_level=0)
        passes.run(library._final_module, llvm.create_pass_builder(library._codegen._tm, tuning))

    def _function_pass_manager(self, **kwargs):
        passes, builder = function_passes(self, **kwargs)
        passes.add_sroa_pass()
        passes.add_instruction_combine_pass()
        return passes, builder

    codegen.CPUCodeLibrary._optimize_final_module = _optimize_final_module
    codegen.CPUCodegen._function_pass_manager = _function_pass_manager


_level_zero_passes()
if not os.environ.get("NUMBAX_CACHE_DIR"):
    os.environ["NUMBAX_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), "numbax-test-cache")
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.environ["NUMBAX_CACHE_DIR"] + "-jax")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
# Hypothesis caches what it learns (constants found in the source) in .hypothesis/ of the working
# directory even without an example database: keep it out of the checkout.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "numbax-hypothesis"))

settings.register_profile("numbax", database=None, derandomize=True, deadline=None)
settings.load_profile("numbax")

# Compiling allocates millions of short-lived objects (syntax trees, Numba's IR, llvmlite's). At Python's
# default threshold (700) so many of them live through a young collection that full collections, each walking
# every object the worker holds, take a tenth of its time. Collecting the youngest generation every 10,000
# allocations cuts that by half or more (tests/test_lax_elementwise.py: 9.0 s of 84.7 s of CPU in the collector,
# then 3.5 s of 75.9 s; four larger files in one process: 18.4 s of 166 s, then 9.8 s of 160 s), peak memory
# within 1%.
gc.set_threshold(10_000, *gc.get_threshold()[1:])


@pytest.fixture(scope="session")
def gpu():
    """The GPU the GPU backend's tests run on (the simulator's); they are skipped, with the reason, where
    numba.cuda has none, unless NUMBAX_REQUIRE_CUDASIM=1 (then they fail)."""
    import numbax

    try:
        return numbax.devices("gpu")[0]
    except numbax.NumbaxDeviceError as exc:
        if REQUIRE_CUDA:
            raise
        pytest.skip(f"no GPU for the GPU backend's tests: {exc.message}")


@pytest.fixture(autouse=True)
def _cpu_fast_paths(request, monkeypatch):
    """Outside the GPU backend's tests, jit's C fast path as in a process that never put arrays on a GPU
    (``numbax.api.note_arrays_on_gpu``): the GPU tests an xdist worker ran before leave no device arrays."""
    if not request.node.path.name.startswith("test_gpu_"):
        from numbax import api

        monkeypatch.setattr(api, "_arrays_on_gpu", False)



# NUMBAX_RECORD_KERNELS=DIR: note every kernel the simulator launches, for tests/ptx/check.py to compile for a GPU.
if os.environ.get("NUMBAX_RECORD_KERNELS"):
    from ptx import record as _kernel_record

    _kernel_record.install(os.environ["NUMBAX_RECORD_KERNELS"])

    def pytest_sessionfinish(session):
        _kernel_record.flush()
