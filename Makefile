# Two commands set everything up from a bare Python 3.11: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export NUMBAX_CACHE_DIR ?= $(CURDIR)/.cache/numbax
# JAX's compiled programs (the tests' oracle), kept between runs like numbax's (see tests/conftest.py).
export JAX_COMPILATION_CACHE_DIR ?= $(CURDIR)/.cache/jax

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python setup.cfg pyproject.toml
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[test,cuda-sim,mpi]'
	touch $@

$(VENV)/.installed-bench: $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[bench]'
	touch $@

demo: $(VENV)/.installed
	$(BIN)/python examples/demo.py

# The GPU backend's tests run in Numba's CUDA simulator; they fail, not skip, if numba-cuda is missing. The MPI
# tests start `mpiexec -n 2` from the venv's bin (the mpi extra's MPICH); they fail, not skip, without it.
# Two pytest sessions, one after the other: a worker keeps every function Numba compiled for it (about 9 GB per
# worker over the whole suite), so each session's workers hold half; Numba's disk cache carries code between them.
# `--dist worksteal` gives each worker half of the files in order (stealing from the other's tail when idle), so a
# module's shared compiled functions and fixtures are made by one worker, not both.
# Every kernel the simulator launched is then compiled for an H100 (sm_90) by numba.cuda, NVVM and nvJitLink,
# without a GPU (tests/ptx/check.py): the simulator runs a kernel's Python as Python, so only this finds one that
# numba.cuda cannot compile.
KERNELS := $(CURDIR)/.cache/kernels
PYTEST := NUMBA_OPT=0 NUMBA_ENABLE_CUDASIM=1 NUMBAX_REQUIRE_CUDASIM=1 NUMBAX_RECORD_KERNELS=$(KERNELS) \
	$(BIN)/python -m pytest -n 2 --dist worksteal -q
FIRST_HALF := tests/test_[a-g]*.py

test: $(VENV)/.installed-test
	rm -rf $(KERNELS)
	$(PYTEST) $(FIRST_HALF); first=$$?; $(PYTEST) --ignore-glob='$(FIRST_HALF)'; second=$$?; \
	$(BIN)/python -m tests.ptx.check $(KERNELS); test $$first -eq 0 -a $$second -eq 0 -a $$? -eq 0

bench: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/run_grad.py
	$(BIN)/python benchmarks/run_lax.py
	$(BIN)/python benchmarks/run_random.py
	$(BIN)/python benchmarks/run_batched.py

clean:
	rm -rf $(VENV) .cache build *.egg-info
