"""``pmap`` across MPI processes: ``mpiexec -n 2`` runs tests/fixtures/mpi_pmap_program.py, each process
passing its shard, and what each got back must equal its row of the single-process ``pmap`` on 2 CPU devices
over every shard (exactly: the same sums in the same order); ``examples/data_parallel_mlp.py --mpi`` must
give the single-device losses; and what is not built is refused."""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

import numbax
from numbax.primitives.transports import TRANSPORTS
from numbax.transforms.pmap import mpi_shards

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures import mpi_pmap_program  # noqa: E402
from test_distributed_mpi import MPIEXEC, ROOT, _run  # noqa: E402

PROGRAM = os.path.join(ROOT, "tests", "fixtures", "mpi_pmap_program.py")
EXAMPLE = os.path.join(ROOT, "examples", "data_parallel_mlp.py")


def _mpiexec(tmp_path, *command):
    assert os.path.exists(MPIEXEC), f"no mpiexec beside {sys.executable}: pip install 'numbax[mpi]'"
    return _run([MPIEXEC, "-n", "2", sys.executable, *command], tmp_path)


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    out = tmp_path_factory.mktemp("pmap_mpi")
    _mpiexec(out, PROGRAM, str(out))
    return [json.loads((out / f"rank{rank}.json").read_text()) for rank in range(2)]


@pytest.fixture(scope="module")
def one_process():
    """The same pmapped functions in this process, on 2 CPU devices, over both shards."""
    numbax.config.update("cpu_device_count", 2)
    try:
        return mpi_pmap_program.results(mpi_pmap_program.data(2))
    finally:
        numbax.config.update("cpu_device_count", 1)


@pytest.mark.parametrize("name", ["psum", "pmean", "pmax", "pmin", "all_gather", "all_gather_tiled", "ppermute",
                                  "axis_index", "psum_scatter", "axis_size", "stages", "named_mpi",
                                  "gradient"])
def test_each_process_gets_its_row_of_the_single_process_pmap(reports, one_process, name):
    for rank, report in enumerate(reports):
        got, want = report["results"][name], one_process[name]
        assert len(got) == len(want), name
        for got_output, want_output in zip(got, want):
            got_output = np.asarray(got_output)
            assert got_output.shape[0] == 1, name  # this process's one shard
            np.testing.assert_array_equal(got_output[0], np.asarray(want_output)[rank], err_msg=f"{name} {rank}")


def test_the_values_are_the_collectives(reports):
    x = mpi_pmap_program.data(2)["x"]
    for rank, report in enumerate(reports):
        values = {name: np.asarray(v[0])[0] for name, v in report["results"].items()}
        np.testing.assert_array_equal(values["psum"], x[0] + x[1])
        np.testing.assert_array_equal(values["all_gather"], x)
        np.testing.assert_array_equal(values["ppermute"], x[1 - rank])
        np.testing.assert_array_equal(values["axis_index"], x[rank] + rank)
        np.testing.assert_array_equal(values["psum_scatter"], (x[0] + x[1])[3 * rank:3 * rank + 3])
        np.testing.assert_array_equal(values["axis_size"], x[rank] * 2)
        np.testing.assert_array_equal(values["named_mpi"], (x[0] + x[1]) * 2)
        assert report["results"]["stages"][1] == [rank]


def test_what_is_not_built_is_refused(reports):
    for rank, report in enumerate(reports):
        refused = report["refused"]
        assert refused["two_local_shards"].startswith(
            "NumbaxShapeError: Leading axis size of input to pmapped function must equal the number of local "
            "devices passed to pmap. Got axis_size=2, num_local_devices=1.")
        assert refused["two_devices"].startswith("NumbaxDeviceError: pmap across 2 processes runs one shard per "
                                                 "process, but this process has 2 CPU devices")
        assert refused["own_device_only"].startswith("NumbaxDeviceError: pmap across processes maps over every "
                                                     f"process's devices, not [CpuDevice(id={rank})]")
        assert refused["grad_of_pmap"].startswith("NumbaxDifferentiationError: ")
        assert "mpi_pmap_program.py" in refused["grad_of_pmap"] and \
            "numbax.lax.psum or psum_scatter across processes" in refused["grad_of_pmap"]
        assert refused["pmap_of_pmap"].startswith("NumbaxSpecializationError: ") and "pmap inside a function " \
            "pmapped across processes is not supported" in refused["pmap_of_pmap"]
        assert refused["two_axes"].startswith("NumbaxBatchingError: ") and "mpi_pmap_program.py" in \
            refused["two_axes"] and "numbax.lax.psum over a pmap's axis across processes and another axis at once " \
            "is not supported" in refused["two_axes"]


def test_data_parallel_mlp_across_two_processes_gives_the_single_device_losses(tmp_path):
    out = _mpiexec(tmp_path, EXAMPLE, "--mpi").stdout
    assert "devices [CpuDevice(id=0), CpuDevice(id=1)] in 2 process(es)" in out
    rows = [line.split() for line in out.splitlines() if "single-device loss" in line]
    assert len(rows) == 11  # process 0 prints, once
    for row in rows:
        single, parallel = float(row[-4]), float(row[-1])
        assert abs(single - parallel) <= 1e-12 * max(1.0, single), row
    assert float(rows[-1][-1]) < 0.01 * float(rows[0][-1])


def test_one_process_keeps_the_batch_transport():
    assert mpi_shards.transport() == "batch"
    mpi = TRANSPORTS["mpi"]
    assert mpi["psum"].shared() == "{out} = mpi.allreduce_sum({xs}[0])"
    assert mpi["ppermute"].shared((0, 1), (1, 0)) == "{out} = mpi.permute({xs}[0], ((0, 1), (1, 0)))"
    assert mpi["all_gather"].shared(0, False, 1) == "{out}_gathered = mpi.allgather({xs}[0])\n{out} = {out}_gathered"
