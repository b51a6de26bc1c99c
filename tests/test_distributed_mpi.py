"""numbax.distributed and the compiled collectives across processes: ``mpiexec -n 2`` (and 3) runs
tests/fixtures/mpi_program.py, and its reports are checked here against NumPy on each process's known data;
the errors without MPI, for arguments numbax cannot honour, and for a launcher MPI does not match."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import numbax
from numbax.distributed import launcher

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures import mpi_program  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(numbax.__file__)))  # the numbax under test
PROGRAM = os.path.join(ROOT, "tests", "fixtures", "mpi_program.py")
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")  # the MPI extra installs it beside python
TIMEOUT = 240  # seconds: each process compiles the collectives, on a loaded machine


def _run(command, tmp_path, **env):
    environ = dict(os.environ, PYTHONPATH=ROOT, **env)
    out = subprocess.run(command, env=environ, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out


def _mpiexec(count, tmp_path, mode="all"):
    assert os.path.exists(MPIEXEC), f"no mpiexec beside {sys.executable}: pip install 'numbax[mpi]'"
    _run([MPIEXEC, "-n", str(count), sys.executable, PROGRAM, str(tmp_path), mode], tmp_path, NUMBA_ENABLE_CUDASIM="1")
    return [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in range(count)]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return _mpiexec(2, tmp_path_factory.mktemp("mpi2"))


def _expected(count):
    values = {}
    for dtype in mpi_program.DTYPES:
        xs = [mpi_program.data(rank, dtype) for rank in range(count)]
        with np.errstate(invalid="ignore"):  # inf + -inf is nan, as MPI's sum gives
            values[f"sum_{dtype}"] = sum(xs[1:], xs[0])
        values[f"max_{dtype}"] = np.max(xs, axis=0)
        values[f"min_{dtype}"] = np.min(xs, axis=0)
        values[f"gather_{dtype}"] = np.stack([x[:, 1] for x in xs])
    return values


def test_processes_and_devices(reports):
    assert [r["rank"] for r in reports] == [0, 1] and [r["pmi_rank"] for r in reports] == ["0", "1"]
    for rank, report in enumerate(reports):
        assert report["count"] == 2 and report["local_device_count"] == 1
        assert report["devices"] == [[0, 0, "CpuDevice(id=0)"], [1, 1, "CpuDevice(id=1)"]]
        assert report["local_devices"] == [[rank, rank]]
        assert report["local_gpus"] == [["gpu", 0, rank]] and report["put_on_local_gpu"] == "no error"
        assert report["early_import"].startswith("NumbaxDistributedError: numbax.distributed.collectives was "
                                                 "imported before numbax.distributed.initialize()")
        errors = report["errors"]
        assert errors["twice"].startswith("NumbaxDistributedError: numbax.distributed.initialize() was called twice")
        assert errors["put_elsewhere"].startswith(f"NumbaxDeviceError: device_put to CpuDevice(id={1 - rank}) of "
                                                  f"process {1 - rank}, from process {rank}")
        assert errors["gpus_of_all"].startswith("NumbaxDeviceError: devices('gpu') of 2 processes")


@pytest.mark.parametrize("dtype", mpi_program.DTYPES)
def test_allreduce_and_allgather_agree_with_numpy(reports, dtype):
    expected = _expected(2)
    for report in reports:
        for op in ("sum", "max", "min", "gather"):
            name = f"{op}_{dtype}"
            assert report["dtypes"][name] == dtype, name
            np.testing.assert_array_equal(np.array(report["values"][name], dtype), expected[name], err_msg=name)


def test_the_data_holds_nan_infinities_and_negative_zero():
    x0, x1 = mpi_program.data(0, "float64"), mpi_program.data(1, "float64")
    assert np.isnan(x1[0, 0]) and np.signbit(x0[0, 0]) and x0[2, 1] == np.inf and x1[2, 1] == -np.inf


def test_permute_scalars_and_collectives_inside_user_njit_code(reports):
    xs = [mpi_program.data(rank, "float64") for rank in range(2)]
    for rank, report in enumerate(reports):
        values = report["values"]
        np.testing.assert_array_equal(values["ring"], xs[1 - rank])
        np.testing.assert_array_equal(values["partial"], np.zeros((3, 2)) if rank == 0 else xs[0])
        assert values["sum_scalar"] == 2.0 and report["dtypes"]["sum_scalar"] == "float64"
        assert values["sum_0d"] == 1.5 and values["sum_float32_scalar"] == 2.0
        np.testing.assert_array_equal(values["min_strided"], np.minimum(*[x.ravel()[::2] for x in xs]))
        assert values["max_int_scalar"] == 10 and report["dtypes"]["max_int_scalar"] == "int64"
        assert values["gather_scalar"] == [0.0, 1.0]
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(values["user_step"], (xs[0] * 2.0 + xs[1] * 2.0) / 2)
        assert values["rank_size"] == [rank, 2]


def test_every_process_gets_the_same_bits(reports):
    for name in reports[0]["values"]:
        if name not in ("ring", "partial", "rank_size"):
            assert json.dumps(reports[0]["values"][name]) == json.dumps(reports[1]["values"][name]), name


def test_collective_errors_are_numbax_errors(reports):
    # process 1 receives process 0's 3 elements into 1 (MPI_ERR_TRUNCATE); process 0 receives 1 into 3
    assert reports[0]["collective_errors"]["longer_message"] == "no error"
    assert reports[1]["collective_errors"]["longer_message"].startswith(
        "NumbaxCollectiveError: MPI_Sendrecv failed with MPI error code ")
    for report in reports:
        errors = report["collective_errors"]
        assert errors["check_dtype"].startswith("NumbaxDtypeError: collectives across processes take float32, "
                                                "float64, int32 or int64 arrays and numbers, not float16")
        assert errors["bad_perm"].startswith("NumbaxCollectiveError: permute's pairs (0, 1) and (1, 1) share")
        assert errors["outside_perm"].startswith("NumbaxCollectiveError: permute's pair (0, 2) names a process "
                                                 "outside range(2)")
        assert errors["dtype"].startswith("NumbaxDtypeError: collectives across processes take float32, float64, "
                                          "int32 or int64 arrays and numbers, not int16")


def test_after_shutdown(reports):
    for report in reports:
        after = report["after_shutdown"]
        assert after["count"] == 1 and after["initialized"] is False
        assert after["again"].startswith("NumbaxDistributedError: numbax.distributed.initialize() was called after "
                                         "shutdown()")
        assert after["collective"].startswith("NumbaxCollectiveError: a collective was called after "
                                              "numbax.distributed.shutdown()")


def test_three_processes_sum_to_the_same_bits_everywhere(tmp_path):
    reports = _mpiexec(3, tmp_path, "sum-bits")
    assert [r["count"] for r in reports] == [3, 3, 3]
    bits = [r["sum_bits"] for r in reports]
    assert bits[0] == bits[1] == bits[2]
    xs = [np.array([1e16, 1.0, -1e16, 3.0]) * (rank + 1) ** 3 + 1e-3 * rank for rank in range(3)]
    np.testing.assert_allclose(np.array(bits[0], np.int64).view(np.float64), sum(xs), rtol=0, atol=4.0)


def test_one_process_without_mpiexec_and_a_launcher_mpi_does_not_match(tmp_path):
    script = ("import numbax; from numbax import distributed\n"
              "distributed.initialize(num_processes=1, process_id=0, coordinator_address='ignored:1234')\n"
              "print(numbax.process_index(), numbax.process_count(), numbax.devices())\n")
    assert _run([sys.executable, "-c", script], tmp_path).stdout.split() == ["0", "1", "[CpuDevice(id=0)]"]
    mismatch = "from numbax import distributed\ntry:\n    distributed.initialize({})\nexcept RuntimeError as e:\n" \
               "    print(f'{{type(e).__name__}}: {{e}}')\n"
    out = _run([sys.executable, "-c", mismatch.format("")], tmp_path, SLURM_STEP_NUM_TASKS="2", SLURM_PROCID="1")
    assert out.stdout.startswith("NumbaxDistributedError: srun started this program as process 1 of 2, but MPI "
                                 "sees process 0 of 1"), out.stdout
    out = _run([sys.executable, "-c", mismatch.format("num_processes=2")], tmp_path)
    assert out.stdout.startswith("NumbaxDistributedError: initialize(num_processes=2) but MPI has num_processes 1")


_FAULTS = ("import resource, numpy as np\nfrom numbax import distributed\nfrom numbax.distributed import memory\n"
           "distributed.initialize()\nnp.ones(1 << 20).sum()\n"
           "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
           "for _ in range(20):\n    np.ones(1 << 20).sum()\n"
           "print(memory.keep_freed_memory(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n")


def test_initialize_keeps_freed_results_in_the_process(tmp_path):
    """20 new results of 8 MB, as a collective returns them: no page faults after initialize. Where the
    environment sets glibc's allocator itself, numbax leaves it: each result is a fresh mapping, faulted in
    once at least (2048 times with 4 KiB pages, fewer where the kernel backs it with huge pages)."""
    kept, faults = _run([sys.executable, "-c", _FAULTS], tmp_path).stdout.split()
    assert kept == "True" and int(faults) < 100
    tuned = _run([sys.executable, "-c", _FAULTS], tmp_path, GLIBC_TUNABLES="glibc.malloc.mmap_threshold=131072")
    kept, faults = tuned.stdout.split()
    assert kept == "False" and int(faults) >= 20


def test_launcher_variables_innermost_first():
    assert launcher.launched({}) is None
    assert launcher.launched({"SLURM_STEP_NUM_TASKS": "4", "SLURM_PROCID": "3"}) == ("srun", 4, 3)
    both = {"SLURM_STEP_NUM_TASKS": "1", "SLURM_PROCID": "0", "PMI_SIZE": "2", "PMI_RANK": "1"}
    assert launcher.launched(both) == ("mpiexec (PMI)", 2, 1)
    launcher.check(1, 2, both)
    with pytest.raises(numbax.NumbaxDistributedError, match="mpiexec \\(PMI\\) started this program as process 1"):
        launcher.check(0, 1, both)


def test_importing_numbax_imports_no_mpi(tmp_path):
    script = ("import sys, numbax, numbax.distributed\n"
              "assert (numbax.process_index(), numbax.process_count()) == (0, 1)\n"
              "assert numbax.devices() == numbax.local_devices() and not numbax.distributed.is_initialized()\n"
              "numbax.distributed.shutdown()\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mpi4py', 'numba_mpi')))\n")
    assert _run([sys.executable, "-c", script], tmp_path).stdout.strip() == "[]"


@pytest.fixture
def no_mpi(monkeypatch):
    """mpi4py and numba-mpi not importable, as where the MPI extra is not installed."""
    for name in ("mpi4py", "mpi4py.MPI", "numba_mpi"):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "numbax.distributed.collectives", raising=False)


def test_without_mpi_installed_the_error_names_the_extra(no_mpi):
    with pytest.raises(numbax.NumbaxDistributedError, match=r"needs mpi4py.MPI.*\n.*pip install 'numbax\[mpi\]'"):
        numbax.distributed.initialize()
    assert not numbax.distributed.is_initialized()
    with pytest.raises(numbax.NumbaxDistributedError, match=r"pip install 'numbax\[mpi\]'"):
        importlib.import_module("numbax.distributed.collectives")


@pytest.mark.parametrize("arguments, refused", [
    ({"local_device_ids": [0]}, "local_device_ids"),
    ({"slice_index": 0}, "slice_index"),
    ({"cluster_detection_method": "gke"}, "cluster_detection_method='gke'"),
])
def test_arguments_numbax_cannot_honour_are_refused(no_mpi, arguments, refused):
    with pytest.raises(numbax.NumbaxDistributedError, match=f"initialize\\({refused}"):
        numbax.distributed.initialize(**arguments)


def test_local_devices_of_a_process_that_is_not_there():
    assert numbax.local_devices(0) == numbax.devices()
    with pytest.raises(ValueError, match="Process index 1 is not in range"):
        numbax.local_devices(1)
