"""The scripts in examples/ run and say what they promise."""
from __future__ import annotations

import os
import subprocess
import sys

import numbax

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(numbax.__file__)))


def run_example(name: str) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name)], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_debug_nans_example_names_the_offending_line():
    out = run_example("debug_nans.py")
    assert "sigma = -0.5, unchecked -> nan" in out
    assert "encountered in np.log at" in out and "debug_nans.py:15: scale = jnp.log(sigma)" in out


def losses(output: str):
    return [float(line.split()[-1]) for line in output.splitlines() if line.startswith(("epoch", "final loss"))]


def test_demo_checks_the_gradient_trains_and_prints_the_generated_step():
    out = run_example("demo.py")
    assert "agrees with central finite differences" in out
    curve = losses(out)
    assert len(curve) == 11 and curve[-1] < 0.05 * curve[0]
    assert "def step(params_0_0, params_0_1, params_1_0, params_1_1, x, y):" in out and "# grad of:" in out


def test_readme_example_is_a_jax_program_with_its_imports_swapped(tmp_path):
    source = open(os.path.join(ROOT, "examples", "mlp.py")).read()
    numbax_imports = "import numbax as jax\nimport numbax.numpy as jnp\nfrom numbax import random\n"
    assert numbax_imports in source
    jax_program = tmp_path / "mlp_on_jax.py"
    jax_program.write_text(source.replace(numbax_imports, "import jax\nimport jax.numpy as jnp\nfrom jax import random\n"
                                          "jax.config.update('jax_enable_x64', True)\n"))
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    jax_out = subprocess.run([sys.executable, str(jax_program)], env=env, capture_output=True, text=True, timeout=600)
    assert jax_out.returncode == 0, jax_out.stderr[-3000:]
    numbax_curve, jax_curve = losses(run_example("mlp.py")), losses(jax_out.stdout)
    assert len(numbax_curve) == len(jax_curve) == 11
    for ours, theirs in zip(numbax_curve, jax_curve):
        assert abs(ours - theirs) <= max(1e-5 * theirs, 1.5e-6), (numbax_curve, jax_curve)  # 6 printed decimals


def test_data_parallel_mlp_matches_the_single_device_losses():
    out = run_example("data_parallel_mlp.py")
    assert "devices [CpuDevice(id=0), CpuDevice(id=1)]" in out
    rows = [line.split() for line in out.splitlines() if "single-device loss" in line]
    assert len(rows) == 11
    for row in rows:
        single, parallel = float(row[-4]), float(row[-1])
        assert abs(single - parallel) <= 1e-12 * max(1.0, single), row
    assert float(rows[-1][-1]) < 0.01 * float(rows[0][-1])
