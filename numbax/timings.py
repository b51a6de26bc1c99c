"""Where compile time goes: ``NUMBAX_TIMINGS=1`` prints, for each specialization numbax generates and each
function Numba compiles for it, the seconds each stage took, to standard error::

    numbax timings: jit of update (mlp.py:40)
      numbax passes 0.41 s: specialize 0.12, inline 0.03, anf 0.02, ..., legalize 0.01
    numbax timings: Numba compiling update, 10.9 s
      generated code 7.80 s: typing 2.10, lowering 1.80, LLVM 3.60, other 0.30
      what it calls 3.10 s in 58 functions: numbax.runtime.grad._chooser_weights 1.31, ...

"Generated code" is Numba's work on numbax's output itself; "what it calls" is
what Numba compiled on the way (its own implementations of NumPy functions,
numbax's runtime helpers not yet in their disk cache), each function's own
time, without the functions it compiled in turn. LLVM is the time Numba holds
its LLVM lock (optimizing and emitting machine code) outside typing.

Setting the variable once in a process is enough; it is read when numbax is imported.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from collections import defaultdict
from typing import Dict, Iterator, List, Tuple

ENABLED = bool(os.environ.get("NUMBAX_TIMINGS"))

# Numba's pass names for the stages reported apart; every other pass is "other"
_GENERATED = "numbax_generated_"  # the module name of every generated function
# (``numbax_caller_lowering``: the CPU backend's ``NativeLowering``, ``numbax.backends.numba_cpu.helper_calls``)
_STAGES = {"nopython_type_inference": "typing", "native_lowering": "lowering", "numbax_caller_lowering": "lowering"}


def report_passes(label: str, where: str, seconds: List[Tuple[str, float]]) -> None:
    """Print the time of each of numbax's passes for one specialization."""
    total = sum(s for _, s in seconds)
    parts = ", ".join(f"{name} {s:.3f}" for name, s in seconds)
    print(f"numbax timings: {label} ({where})\n  numbax passes {total:.3f} s: {parts}", file=sys.stderr)


class _Clock:
    """Own time per (function, stage) over nested Numba events: time spent in an inner event counts for it,
    not for the events around it."""

    def __init__(self):
        self.own: Dict[Tuple[str, str], float] = defaultdict(float)
        self.frames: List[list] = []  # [function, stage, start, time spent in inner events]

    def start(self, function: str, stage: str) -> None:
        self.frames.append([function, stage, time.perf_counter(), 0.0])

    def end(self) -> None:
        function, stage, start, inner = self.frames.pop()
        spent = time.perf_counter() - start
        self.own[function, stage] += spent - inner
        if self.frames:
            self.frames[-1][3] += spent


def _listener(clock: _Clock):
    """A Numba event listener that feeds its ``run_pass`` and ``llvm_lock`` events into ``clock``."""
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev) -> None:
            if ev.kind == "numba:run_pass":
                name = ev.data["name"].split(" [")[0]
                clock.start(f"{ev.data['module']}.{ev.data['qualname']}", _STAGES.get(name, "other"))
            else:
                clock.start(clock.frames[-1][0] if clock.frames else "?", "LLVM")

        def on_end(self, ev) -> None:
            if clock.frames:
                clock.end()

    return Listener()


@contextlib.contextmanager
def numba_compile(name: str) -> Iterator[None]:
    """Around a Numba compile of generated function ``name``: report where its time went (nothing when the
    code came from Numba's disk cache and nothing compiled)."""
    if not ENABLED:
        yield
        return
    from numba.core import event

    clock = _Clock()
    listener = _listener(clock)
    start = time.perf_counter()
    event.register("numba:run_pass", listener)
    event.register("numba:llvm_lock", listener)
    try:
        yield
    finally:
        event.unregister("numba:run_pass", listener)
        event.unregister("numba:llvm_lock", listener)
    if clock.own:
        _report_numba(name, time.perf_counter() - start, clock.own)


def _report_numba(name: str, total: float, own: Dict[Tuple[str, str], float]) -> None:
    mine: Dict[str, float] = defaultdict(float)
    others: Dict[str, float] = defaultdict(float)
    for (function, stage), s in own.items():
        if function.startswith(_GENERATED):
            mine[stage] += s
        else:
            others[function.replace(".<locals>", "")] += s
    stages = ", ".join(f"{stage} {mine.get(stage, 0.0):.2f}" for stage in ("typing", "lowering", "LLVM", "other"))
    top = ", ".join(f"{f} {s:.2f}" for f, s in sorted(others.items(), key=lambda kv: -kv[1])[:5])
    print(f"numbax timings: Numba compiling {name}, {total:.2f} s\n"
          f"  generated code {sum(mine.values()):.2f} s: {stages}\n"
          f"  what it calls {sum(others.values()):.2f} s in {len(others)} functions: {top}", file=sys.stderr)
