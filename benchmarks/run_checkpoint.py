"""The memory ``numbax.checkpoint`` saves: peak resident memory of ``numbax.grad`` of a long loop, with and
without the loop body checkpointed, each in a fresh process (``benchmarks/checkpoint_tasks.py``).

Each child compiles the gradient for one value (the memory before the loop's gradient), runs it on the full
state twice and reports the peak resident set size (``ru_maxrss``) and the time of one gradient. Both gradients are checked
against each other first. Reported, never asserted; Markdown on stdout and in
``benchmarks/checkpoint_results.md``.

Usage: ``python benchmarks/run_checkpoint.py [--output PATH]``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)


def _child(name: str) -> None:
    import numpy as np

    import checkpoint_tasks as tasks
    import numbax

    gradient = numbax.grad(getattr(tasks, name), (0, 1))
    x, p = tasks.args()
    small = numbax.grad(getattr(tasks, name), (0, 1))(x[:1], p)  # compiled for one value: no tape to speak of
    del small
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    first = gradient(x, p)
    start = time.perf_counter()
    second = gradient(x, p)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert np.array_equal(first[0], second[0])
    print(json.dumps({"peak_kb": peak, "base_kb": base, "seconds": seconds,
                      "grad": [float(v) for v in np.ravel(first[0])[:5]] + [float(first[1])]}))


def _run(name: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    """Measure both loops in fresh processes; print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=os.path.join(HERE, "checkpoint_results.md"))
    parser.add_argument("--child")
    ns = parser.parse_args(argv)
    if ns.child:
        _child(ns.child)
        return 0
    import checkpoint_tasks as tasks

    plain, checkpointed = _run("plain_loss"), _run("checkpointed_loss")
    same = all(abs(a - b) <= 1e-9 * max(1.0, abs(a)) for a, b in zip(plain["grad"], checkpointed["grad"]))
    rows = [f"| {label} | {r['peak_kb'] / 1024:.0f} MiB | {r['base_kb'] / 1024:.0f} MiB | "
            f"{(r['peak_kb'] - r['base_kb']) / 1024:.0f} MiB | {r['seconds'] * 1e3:.1f} ms |"
            for label, r in (("numbax.grad", plain), ("numbax.grad, body checkpointed", checkpointed))]
    tape = (plain["peak_kb"] - checkpointed["peak_kb"]) / 1024
    ratio = (plain["peak_kb"] - plain["base_kb"]) / max(checkpointed["peak_kb"] - checkpointed["base_kb"], 1)
    text = "\n".join([
        "# numbax.checkpoint: peak memory of a gradient through a long loop", "",
        f"{tasks.STEPS} steps of a state of {tasks.SIZE} float64 values; fresh process each; gradients "
        f"{'agree' if same else '**DISAGREE**'}.", "",
        "| gradient | peak RSS | before the loop's gradient (imports, compiling) | the gradient's own | "
        "time of one gradient |",
        "|---|---|---|---|---|", *rows, "",
        f"Checkpointing the body saves {tape:.0f} MiB of peak memory (the gradient's own memory {ratio:.1f}x "
        f"smaller: one saved state per step instead of the body's intermediates), and costs "
        f"{checkpointed['seconds'] / plain['seconds']:.2f}x the time (the body runs twice).", ""])
    print(text)
    with open(ns.output, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
