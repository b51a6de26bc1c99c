"""The notebooks run without errors, and each .ipynb matches the jupytext .py it is generated from.

The .py (jupytext "percent" format) is the source of truth; after editing it,
regenerate the notebook with ``jupytext --to ipynb notebooks/NAME.py``.

The notebook runs in a kernel of *this* interpreter (the venv's), whatever
kernelspecs the machine has: a temporary kernelspec named ``python3`` whose
argv is ``sys.executable`` is put first on ``JUPYTER_PATH``.
"""
import json
import pathlib
import sys

import pytest

import nbformat
import nbclient
import jupytext
import ipykernel  # noqa: F401  (the kernel the notebook runs on)

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
QUICKSTART = NOTEBOOKS / "01_quickstart.ipynb"
PAIRED = sorted(NOTEBOOKS.glob("*.py"))


def cells(nb):
    """(cell type, source) of each non-raw cell."""
    return [(c.cell_type, c.source.strip()) for c in nb.cells if c.cell_type in ("code", "markdown")]


@pytest.mark.parametrize("py", PAIRED, ids=[p.stem for p in PAIRED])
def test_ipynb_in_sync_with_py(py):
    ipynb = py.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} is missing: run jupytext --to ipynb notebooks/{py.name}"
    text = jupytext.read(py)
    notebook = nbformat.read(ipynb, as_version=4)
    hint = f"{ipynb.name} is out of date: run jupytext --to ipynb notebooks/{py.name}"
    assert [s for t, s in cells(notebook) if t == "code"] == [s for t, s in cells(text) if t == "code"], hint
    assert cells(notebook) == cells(text), hint
    formats = text.metadata.get("jupytext", {}).get("formats", "")
    assert "ipynb" in formats and "py:percent" in formats, "the .py needs jupytext's pairing header"


@pytest.fixture
def venv_kernel(tmp_path, monkeypatch):
    """The name of a kernelspec that runs this interpreter. The kernel inherits the suite's environment, so it
    shares the suite's numbax, Numba and JAX caches: a second run loads what the notebook compiled."""
    kernels = tmp_path / "jupyter" / "kernels" / "python3"
    kernels.mkdir(parents=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (numbax tests)", "language": "python"}
    (kernels / "kernel.json").write_text(json.dumps(spec))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return "python3"


def stream_text(cell, name="stdout"):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == name)


def code_cell(nb, fragment):
    """The one code cell whose source contains ``fragment``."""
    found = [c for c in nb.cells if c.cell_type == "code" and fragment in c.source]
    assert len(found) == 1, f"{len(found)} cells contain {fragment!r}"
    return found[0]


def test_quickstart_runs(venv_kernel):
    nb = nbformat.read(QUICKSTART, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name=venv_kernel,
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError, naming the cell, on any error

    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not [o for o in cell.outputs if o.output_type == "error"], cell.source

    # The kernel ran this interpreter.
    nb2 = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import sys; print(sys.executable)")])
    nbclient.NotebookClient(nb2, timeout=60, kernel_name=venv_kernel).execute()
    assert stream_text(nb2.cells[0]).strip() == sys.executable

    # jit agrees with NumPy.
    out = stream_text(code_cell(nb, "fast = numbax.jit"))
    numbax_value = float(out.split("numbax:")[1].split()[0])
    numpy_value = float(out.split("numpy:")[1].split()[0])
    assert numbax_value == pytest.approx(numpy_value)

    # static_argnums: "l2" compiles once, "l1" once more.
    log = stream_text(code_cell(nb, "log_compiles()"), "stderr")
    assert log.count("numbax: compiling normalize") == 2, log
    assert "def normalize(x):" in stream_text(code_cell(nb, "print(normalize_jit.source)"))

    # Newton's while loop converges.
    assert "sqrt(2) = 1.41421356237" in stream_text(code_cell(nb, "newton_jit = numbax.jit"))

    # Pytrees: the treedef, and the MLP matches NumPy.
    assert "PyTreeDef([(*, *), (*, *)])" in stream_text(code_cell(nb, "tree_flatten(params)"))
    assert "matches NumPy: True" in stream_text(code_cell(nb, "mlp_jit = numbax.jit(mlp)"))

    # Generated source: numbax.source, .source, and _repr_html_ of the last expression.
    assert "def weighted_tanh_sum(x, w):" in stream_text(code_cell(nb, "print(numbax.source("))
    assert "def mlp(params_0_0" in stream_text(code_cell(nb, "print(mlp_jit.source)"))
    last = nb.cells[-1]
    assert last.source.strip() == "mlp_jit"
    results = [o for o in last.outputs if o.output_type == "execute_result"]
    assert results and "text/html" in results[0].data
    assert "params_0_0" in results[0].data["text/html"]


def executed(name: str, kernel: str):
    """The notebook ``name`` run from its first cell to its last, every code cell checked free of errors."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name=kernel,
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
    return nb


def test_derivatives_runs(venv_kernel):
    nb = executed("02_derivatives.ipynb", venv_kernel)

    assert "matches central differences: True" in stream_text(code_cell(nb, "grad_energy = numbax.grad"))
    assert "# grad of:" in stream_text(code_cell(nb, "grad_energy = numbax.grad"))
    jvp_out = stream_text(code_cell(nb, "value, slope = numbax.jvp"))
    assert "equals grad . v: True" in jvp_out and "# tangent of:" in jvp_out
    jacobians = stream_text(code_cell(nb, "by_columns = numbax.jacfwd"))
    assert "jacfwd == jacrev == -hessian: True True" in jacobians and "symmetric: True" in jacobians
    modes = code_cell(nb, "np.linalg.eigh")
    assert "squared frequencies match the harmonic chain: True" in stream_text(modes)
    assert [o for o in modes.outputs if o.output_type == "display_data" and "image/png" in o.data]  # the plot
    assert "matches hessian(energy)(x) @ v: True" in stream_text(code_cell(nb, "def stiffness_times"))


def test_porting_from_jax_runs(venv_kernel):
    nb = executed("03_porting_from_jax.ipynb", venv_kernel)

    out = stream_text(code_cell(nb, "on_numbax, on_jax = run("))
    numbax_final, jax_final = (float(out.split(name)[1].split(",")[0].split(";")[0]) for name in ("numbax ", "JAX "))
    assert numbax_final == pytest.approx(jax_final, rel=1e-9) and numbax_final < 0.05
    curves = code_cell(nb, "ax.semilogy")
    assert [o for o in curves.outputs if o.output_type == "display_data" and "image/png" in o.data]  # the plot
    assert "# grad of:" in stream_text(code_cell(nb, "on_numbax.step.source"))


def test_parallel_runs(venv_kernel):
    nb = executed("04_parallel.ipynb", venv_kernel)

    assert "[CpuDevice(id=0), CpuDevice(id=1)]" in stream_text(code_cell(nb, "cpu_device_count"))
    collectives = stream_text(code_cell(nb, "def combine(x):"))
    assert collectives.count("True") == 5 and "axis_index: [0 1]" in collectives
    assert "vmap agrees with pmap: True" in stream_text(code_cell(nb, "batched = numbax.vmap"))
    assert "equals the whole batch's gradient: True" in stream_text(code_cell(nb, "def sharded_grad"))
    assert "rt.mean(" in stream_text(code_cell(nb, "print(numbax.source(parallel"))
    timing = code_cell(nb, "def best_time")
    assert "pmap, 2 devices:" in stream_text(timing)
    assert [o for o in timing.outputs if o.output_type == "display_data" and "image/png" in o.data]  # the plot
