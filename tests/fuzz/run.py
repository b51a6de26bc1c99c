"""The differential tester on demand: ``python -m tests.fuzz.run --backend python -n 20000 --seed 0``.

Generates ``n`` programs, runs each through numbax's ``jit``, ``grad``, ``vmap``, ``jvp`` and ``jvp`` of
``grad`` (``hvp``, against JAX's) on the chosen backend, and prints the counts of right / refused / unchecked
/ wrong / internal outcomes, in total and by construct. A failure not explained by one already minimized (same
signature, and the minimized program's constructs all present) is shrunk by hypothesis to a minimal program,
written with its arguments and what went wrong to ``--out``/``NN.py``; the raw failing programs go to
``--out``/raw/. Hypothesis stops generating at a failure it shrinks, so the run continues with the next seed
for the programs still to go. ``--extended`` generates with the extended grammar (``extended.py``: composites,
norms, updates through views, closures, ``vmap`` along other axes) and checks ``jacfwd``, ``jacrev`` and
``hessian`` too (``jacobians.py``); the seeds of the default grammar keep their programs. ``--wide`` generates
with the wide grammar (``wide.py``: the extended one over the breadth of NumPy numbax covers: the other ufuncs,
statistics, shape functions, ``einsum`` and the other products, linear algebra, constructors), checked as
``--extended`` is. ``--compositions`` checks, instead of those transforms, their compositions (``compositions.py``:
``grad`` of ``grad``, ``vmap`` of ``grad``, ``grad`` of ``vmap``) on the chosen grammar's programs.

``--backend gpu`` runs the GPU backend (in Numba's CUDA simulator unless ``NUMBA_ENABLE_CUDASIM=0``), and with
``NUMBAX_RECORD_KERNELS=DIR`` records the kernels it launches for ``python -m tests.ptx.check DIR``.

On ``--backend cpu`` Numba compiles three functions a program, and LLVM's optimizations are most of that
time, not what the tester checks: ``NUMBA_OPT=0`` (unless set) cuts a program from 2.7 to 1.75 CPU
seconds with the same outcomes (40 programs of seed 777 both ways). A run compiles into a temporary
``NUMBAX_CACHE_DIR`` (unless set), so it neither reads nor fills the user's cache.

Numba never frees the machine code it compiles, so one process that compiles 2,000 programs grows past 15 GB:
``--per-process K`` (250 by default on cpu) runs the programs in child processes of ``K`` each, chunk ``c``
with seed ``seed * 1000 + c`` and its own folder ``--out``/chunk_c/, and adds up their counts.
"""
from __future__ import annotations

import argparse
import atexit
import collections
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple


def _environment_for(argv: List[str]) -> None:
    """Numba reads ``NUMBA_OPT`` when numbax is imported (below): set it first, for ``--backend cpu``."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--backend", default="python")
    backend = early.parse_known_args(argv)[0].backend
    if backend in ("cpu", "gpu"):
        os.environ.setdefault("NUMBA_OPT", "0")
    if backend == "gpu":  # Numba's CUDA simulator where no GPU is set up (NUMBA_ENABLE_CUDASIM=0 for a real one)
        os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    os.environ.setdefault("NUMBAX_CACHE_DIR", tempfile.mkdtemp(prefix="numbax_fuzz_cache_"))


if __name__ == "__main__":
    _environment_for(sys.argv[1:])

from hypothesis import HealthCheck, Phase, given, seed, settings

from .classify import FAILURES, INTERNAL, KINDS, TRANSFORMS, Outcome
from .compositions import COMPOSITIONS
from .extended import extended_programs
from .grammar import Program, programs
from .jacobians import EXTENDED_TRANSFORMS, check_all
from .known import excused
from .wide import wide_programs

GRAMMARS = {"default": programs, "extended": extended_programs, "wide": wide_programs}


PER_SIGNATURE = 3  # failures minimized per signature at most (a wrong value's signature is just "value")


class _Found(Exception):
    """Raised inside the hypothesis test to make it shrink the failure being minimized."""


@dataclass
class Tally:
    """Counts of outcomes by transform and kind, in total and per construct tag."""

    transforms: tuple = TRANSFORMS  # the columns of the table
    programs: int = 0
    known: int = 0  # failures that known.KNOWN_FAILURES excuses: counted, not minimized again
    total: collections.Counter = field(default_factory=collections.Counter)
    by_tag: Dict[str, collections.Counter] = field(default_factory=lambda: collections.defaultdict(collections.Counter))

    def add(self, program: Program, outcomes: List[Outcome]) -> None:
        self.programs += 1
        for outcome in outcomes:
            self.total[outcome.transform, outcome.kind] += 1
            for tag in program.tags:
                self.by_tag[tag][outcome.transform, outcome.kind] += 1

    def dump(self, path: str) -> None:
        """Write the counts to ``path`` as JSON (a child process's, for ``merge``)."""
        rows = {"ALL": self.total, **self.by_tag}
        with open(path, "w") as f:
            json.dump({"programs": self.programs, "known": self.known,
                       "counts": {tag: [[t, k, n] for (t, k), n in c.items()] for tag, c in rows.items()}}, f)

    def merge(self, path: str) -> None:
        """Add the counts ``dump`` wrote to ``path``."""
        with open(path) as f:
            data = json.load(f)
        self.programs += data["programs"]
        self.known += data["known"]
        for tag, entries in data["counts"].items():
            counter = self.total if tag == "ALL" else self.by_tag[tag]
            for t, k, n in entries:
                counter[t, k] += n

    def table(self) -> str:
        """The counts as a text table: one row per construct, one column group per transform."""
        short = {"right": "ok", "refused": "ref", "unchecked": "unch", "wrong": "WRONG", "internal": "INTERNAL"}
        header = f"{'construct':18s}" + "".join(
            f" | {t:4s} " + " ".join(f"{short[k]:>5s}" for k in KINDS) for t in self.transforms)
        rows = [header, "-" * len(header)]
        for name, counts in [("ALL", self.total)] + sorted(self.by_tag.items()):
            rows.append(f"{name:18s}" + "".join(
                " |      " + " ".join(f"{counts[t, k]:5d}" for k in KINDS) for t in self.transforms))
        return "\n".join(rows)


@dataclass
class Minimized:
    """A failure hypothesis shrank: the outcome and the minimal program."""

    outcome: Outcome
    program: Program


class Session:
    """One run: counts everything generated, and shrinks failures that no minimized one explains."""

    def __init__(self, backend: str, out: str, max_shrinks: int, timeout: int, report_every: int = 100,
                 grammar: str = "default", compositions: bool = False):
        self.backend, self.out, self.max_shrinks, self.timeout = backend, out, max_shrinks, timeout
        self.report_every, self.grammar = report_every, grammar
        self.transforms = COMPOSITIONS if compositions else TRANSFORMS if grammar == "default" else \
            EXTENDED_TRANSFORMS
        self.tally = Tally(self.transforms)
        self.minimized: List[Minimized] = []
        self.raw_written: collections.Counter = collections.Counter()
        self.target: Optional[Tuple[str, Outcome]] = None
        self.shrink_backend = backend  # the backend the target is shrunk on
        self.last: Optional[Minimized] = None
        os.makedirs(os.path.join(out, "raw"), exist_ok=True)

    def checked(self, program: Program, transforms=None, backend: Optional[str] = None) -> List[Outcome]:
        """``check`` (on ``backend``, the session's if None) under an alarm: a compile or a run that hangs is
        an internal error."""
        def alarm(signum, frame):
            raise TimeoutError(f"no result after {self.timeout} s")

        transforms = transforms or self.transforms
        previous = signal.signal(signal.SIGALRM, alarm)
        signal.alarm(self.timeout)
        try:
            return check_all(program, backend or self.backend, transforms)
        except TimeoutError as error:
            return [Outcome(t, INTERNAL, f"TimeoutError: {error}") for t in transforms]
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)

    def explained(self, program: Program, outcome: Outcome) -> bool:
        """Whether minimized failures explain this one: one with this signature and only constructs this
        program uses too (the arguments' dtypes aside: one cause shows through many of them), or already
        ``PER_SIGNATURE`` with this signature."""
        constructs = lambda tags: {t for t in tags if not t.startswith(("dtype_", "scalar_"))}  # noqa: E731
        same = [m for m in self.minimized if m.outcome.signature() == outcome.signature()]
        return len(same) >= PER_SIGNATURE or any(constructs(m.program.tags) <= program.tags for m in same)

    def body(self, program: Program) -> None:
        """The hypothesis test body: count (while generating), or match the target (while shrinking)."""
        if self.target is not None:
            signature, transform = self.target[0], self.target[1].transform
            for outcome in self.checked(program, (transform,), self.shrink_backend):
                same = outcome.kind in FAILURES and outcome.signature() == signature
                if same and not excused(program, outcome, self.shrink_backend):
                    self.stop(Minimized(outcome, program))
            return
        outcomes = self.checked(program)
        self.tally.add(program, outcomes)
        if self.tally.programs % self.report_every == 0:
            with open(os.path.join(self.out, "counts.txt"), "w") as f:
                f.write(f"{self.tally.programs} programs so far\n{self.tally.table()}\n")
        for outcome in outcomes:
            if outcome.kind not in FAILURES:
                continue
            if excused(program, outcome, self.backend):
                self.tally.known += 1
                continue
            self.write_raw(program, outcome)
            if not self.explained(program, outcome) and len(self.minimized) < self.max_shrinks:
                self.target = (outcome.signature(), outcome)
                self.shrink_backend = self.backend_to_shrink_on(program, outcome)
                self.stop(Minimized(outcome, program))

    def backend_to_shrink_on(self, program: Program, outcome: Outcome) -> str:
        """``python`` where a cpu failure fails alike there (shrinking compiles each step: seconds on cpu,
        milliseconds on python), else the session's backend."""
        if self.backend == "python":
            return self.backend
        again = self.checked(program, (outcome.transform,), "python")[0]
        return "python" if again.kind in FAILURES and again.signature() == outcome.signature() else self.backend

    def stop(self, found: Minimized) -> None:
        """Record ``found`` and fail the hypothesis test (from this one line, so that hypothesis sees the
        same failure while it shrinks)."""
        self.last = found
        raise _Found(found.outcome.signature())

    def write_raw(self, program: Program, outcome: Outcome) -> None:
        signature = outcome.signature()
        self.raw_written[signature] += 1
        if self.raw_written[signature] > 3:
            return
        name = f"{abs(hash(signature)) % 10 ** 8:08d}_{self.raw_written[signature]}.py"
        with open(os.path.join(self.out, "raw", name), "w") as f:
            f.write(describe(program, outcome))

    def run(self, n: int, base_seed: int) -> None:
        restart = 0
        while self.tally.programs < n:
            before = self.tally.programs
            self.target, self.last = None, None
            phases = [Phase.generate, Phase.shrink] if len(self.minimized) < self.max_shrinks else [Phase.generate]

            @seed(base_seed * 1000 + restart)
            @settings(max_examples=n - before, database=None, deadline=None, derandomize=False, phases=phases,
                      suppress_health_check=list(HealthCheck), report_multiple_bugs=False, print_blob=False)
            @given(GRAMMARS[self.grammar]())
            def test(program):
                self.body(program)

            try:
                test()
            except Exception:  # noqa: BLE001 - _Found, or hypothesis's FlakyFailure when a replay differed
                if self.last is None:
                    raise
                self.minimized.append(self.last)
                self.write_minimized(self.last)
                print(f"[{self.tally.programs}] minimized: {self.last.outcome.signature()}", flush=True)
            restart += 1
            if self.tally.programs == before:
                break  # hypothesis generated nothing new: stop rather than loop

    def write_minimized(self, found: Minimized) -> None:
        path = os.path.join(self.out, f"{len(self.minimized):02d}.py")
        with open(path, "w") as f:
            f.write(f"# found on backend={self.backend!r}, shrunk on backend={self.shrink_backend!r}\n")
            f.write(describe(found.program, found.outcome))


def summary(tally: Tally, backend: str, base_seed: int, seconds: float) -> str:
    """One line to quote: programs, seconds, and right/refused/unchecked/wrong/internal per transform."""
    per = "; ".join(f"{t} " + "/".join(str(tally.total[t, k]) for k in KINDS) for t in tally.transforms)
    return (f"SUMMARY backend={backend} seed={base_seed}: {tally.programs} programs in {seconds:.0f} s "
            f"({seconds / max(tally.programs, 1):.2f} s each); right/refused/unchecked/wrong/internal: {per}")


def describe(program: Program, outcome: Outcome) -> str:
    """A failing program as a file: what went wrong, the source, the arguments and the constructs."""
    comment = "\n".join("# " + line for line in f"{outcome.signature()}\n{outcome.detail}".splitlines())
    return f"{comment}\n\nimport numpy as np\n\n\n{program!r}\n"


def _run_in_chunks(session: Session, args, per_process: int) -> None:
    """Run ``args.n`` programs in child processes of ``per_process`` each and add their counts to ``session``."""
    chunk = 0
    while session.tally.programs < args.n:
        count = min(per_process, args.n - session.tally.programs)
        out = os.path.join(args.out, f"chunk_{chunk}")
        os.makedirs(out, exist_ok=True)
        tally = os.path.join(out, "tally.json")
        subprocess.run([sys.executable, "-m", "tests.fuzz.run", "--backend", args.backend, "-n", str(count),
                        "--seed", str(args.seed * 1000 + chunk), "--out", out, "--max-shrinks", str(args.max_shrinks),
                        "--timeout", str(args.timeout), "--report-every", str(args.report_every), "--tally", tally]
                       + ([f"--{args.grammar}"] if args.grammar != "default" else [])
                       + (["--compositions"] if args.compositions else []),
                       check=False)
        if not os.path.exists(tally):
            raise SystemExit(f"chunk {chunk} wrote no counts ({out}): see its output above")
        before = session.tally.programs
        session.tally.merge(tally)
        if session.tally.programs == before:
            break
        with open(os.path.join(args.out, "counts.txt"), "w") as f:
            f.write(f"{session.tally.programs} programs so far\n{session.tally.table()}\n")
        chunk += 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="python", choices=("python", "cpu", "gpu"))
    parser.add_argument("-n", type=int, default=1000, help="programs to generate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=".cache/fuzz-failures", help="folder for the failing programs")
    parser.add_argument("--max-shrinks", type=int, default=25, help="failures to minimize at most")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per program before it counts as internal")
    parser.add_argument("--report-every", type=int, default=100, help="write counts.txt every so many programs")
    parser.add_argument("--per-process", type=int, default=None,
                        help="programs per child process (default: 250 on cpu and gpu, all in one on python)")
    parser.add_argument("--tally", default=None, help="write the counts to this JSON file (a child's)")
    grammar = parser.add_mutually_exclusive_group()
    grammar.add_argument("--extended", action="store_const", dest="grammar", const="extended", default="default",
                         help="the extended grammar (tests/fuzz/extended.py) and jacfwd, jacrev and hessian too")
    grammar.add_argument("--wide", action="store_const", dest="grammar", const="wide",
                         help="the wide grammar (tests/fuzz/wide.py), checked as --extended is")
    parser.add_argument("--compositions", action="store_true",
                        help="check compositions instead (tests/fuzz/compositions.py: grad of grad, vmap of grad, "
                             "grad of vmap)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "numbax-hypothesis"))
    per_process = args.per_process if args.per_process is not None else 250 if args.backend != "python" else 0
    if args.backend == "gpu" and os.environ.get("NUMBAX_RECORD_KERNELS"):  # for tests/ptx/check.py
        from tests.ptx import record

        record.install(os.environ["NUMBAX_RECORD_KERNELS"])
        atexit.register(record.flush)
    session = Session(args.backend, args.out, args.max_shrinks, args.timeout, args.report_every, args.grammar,
                      args.compositions)
    start = time.time()
    if 0 < per_process < args.n and args.tally is None:
        _run_in_chunks(session, args, per_process)
    else:
        session.run(args.n, args.seed)
    if args.tally is not None:
        session.tally.dump(args.tally)
    print(f"\n{session.tally.programs} programs on backend={args.backend!r}, seed={args.seed}, "
          f"{time.time() - start:.0f} s; outcomes per transform: ok = right, ref = refused clearly, "
          f"unch = no oracle decides (a kink without JAX)\n")
    print(session.tally.table())
    print("\n" + summary(session.tally, args.backend, args.seed, time.time() - start))
    failures = sum(session.tally.total[t, k] for t in session.transforms for k in FAILURES)
    minimized = [f"{k:02d}.py  {found.outcome.signature()}" for k, found in enumerate(session.minimized, 1)]
    chunks = glob.glob(os.path.join(args.out, "chunk_*", "[0-9]*.py"))
    minimized += sorted(os.path.relpath(path, args.out) for path in chunks)
    print(f"\n{failures} wrong or internal outcomes ({session.tally.known} of them known: tests/fuzz/known.py); "
          f"{len(minimized)} new ones minimized in {args.out}/")
    for line in minimized:
        print(f"  {line}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
