#!/bin/sh
# Issue 15's check on a real GPU, for a machine that reaches no package registry (the device machines lent to
# sessions: Python 3.12 with numba, numba-cuda, CuPy, JAX, pytest, pytest-xdist and hypothesis, but no gast).
# Before: in the repository root of a machine that reaches PyPI,
#     echo /.whl/ >> .git/info/exclude; python3 -m pip download --no-deps -d .whl gast==0.7.0
# then, carrying .whl, on the GPU machine from the repository root:
#     sh benchmarks/on_a_gpu.sh [tests|bench|all]
# `tests` runs the GPU backend's tests on the GPU (not the simulator), `bench` benchmarks/run_gpu.py; each
# stops within its own timeout. Logs and gpu_results.md go to $OUT (or /tmp/numbax-gpu).
set -u
what=${1:-all}
out=${OUT:-/tmp/numbax-gpu}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 NUMBA_ENABLE_CUDASIM=0 NUMBAX_REQUIRE_CUDASIM=1 \
    NUMBAX_CACHE_DIR=/tmp/numbax-cache
nvidia-smi -L
status=0
if [ "$what" != bench ]; then
    timeout 270 python3 -m pytest -n 8 -q -p no:cacheprovider tests/test_gpu_*.py >"$out/tests.log" 2>&1
    status=$?
    tail -n 60 "$out/tests.log"
fi
if [ "$what" != tests ]; then
    timeout 290 python3 benchmarks/run_gpu.py >"$out/bench.log" 2>&1 || status=1
    cat "$out/bench.log"
    cp benchmarks/gpu_results.md "$out/" 2>/dev/null
fi
exit $status
