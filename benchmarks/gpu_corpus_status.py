"""Run the whole jit, grad, jvp and vmap corpora on the GPU backend and compare each case with the CPU backend.

The proof that issue 15 asks for: every case either agrees with the CPU backend (structure, shapes, dtype
kinds, values at rtol 1e-12, 1e-5 where float32 is involved) or is refused with a ``NumbaxDeviceError`` at the
user's line. Each case's outcome is one of ``agree``, ``refused`` (grouped by the construct the refusal names),
``WRONG`` (a result that differs: a bug), ``error`` (any other exception: a bug) or ``cpu-error``. Run from the
repository root, in Numba's CUDA simulator where there is no GPU::

    NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=$PWD python benchmarks/gpu_corpus_status.py [jit grad jvp vmap] [--json F]

It prints one line per case that does not agree, a table of refusals by construct, and the counts per corpus.
"""
import argparse
import collections
import copy
import json
import os
import re
import sys
import time
import traceback

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

import numpy as np  # noqa: E402

import numbax  # noqa: E402
from numbax import tree_util  # noqa: E402

REFUSED = "not supported by the GPU backend yet"


def _jit_corpus():
    from corpus import all_cases
    for case in all_cases():
        def run(backend, case=case):
            fn = numbax.jit(case.fn, static_argnums=case.static_argnums, static_argnames=case.static_argnames,
                            backend=backend)
            return fn(*case.args_factory(), **copy.deepcopy(case.kwargs or {}))
        yield case.id, run


def _grad_corpus():
    from grad_corpus import all_cases
    for case in all_cases():
        def run(backend, case=case):
            options = {"argnums": case.argnums, "has_aux": case.has_aux, "backend": backend}
            if case.static_argnums:
                options["static_argnums"] = case.static_argnums
            return numbax.grad(case.fn, **options)(*case.args_factory())
        yield case.id, run


def _jvp_corpus():
    import test_jvp
    for case in test_jvp.CASES:
        def run(backend, case=case):
            args = case.args_factory()
            return numbax.jvp(case.fn, copy.deepcopy(args), test_jvp._tangents(case, args), has_aux=case.has_aux,
                              backend=backend)
        yield case.id, run


def _vmap_corpus():
    import test_vmap
    for case in test_vmap.CASES:
        def run(backend, case=case):
            return numbax.vmap(case.fn, case.in_axes, case.out_axes, backend=backend)(*case.args)
        yield case.id, run


CORPORA = {"jit": _jit_corpus, "grad": _grad_corpus, "jvp": _jvp_corpus, "vmap": _vmap_corpus}


def difference(expected, got):
    """How ``got`` (the GPU's result) differs from ``expected`` (the CPU's), or None where they agree."""
    if tree_util.tree_structure(got) != tree_util.tree_structure(expected):
        return "structure"
    for e, g in zip(tree_util.tree_leaves(expected), tree_util.tree_leaves(got)):
        e, g = np.asarray(e), np.asarray(g)
        if e.shape != g.shape or e.dtype.kind != g.dtype.kind:
            return f"shape/dtype {e.shape} {e.dtype} vs {g.shape} {g.dtype}"
        if e.dtype.kind == "V":  # random keys
            if not np.array_equal(e.view(np.uint32), g.view(np.uint32)):
                return "key bits"
            continue
        rtol = 1e-5 if np.float32 in (e.dtype, g.dtype) else 1e-12
        try:
            np.testing.assert_allclose(g, e, rtol=rtol, atol=0)
        except AssertionError as exc:
            return "values " + " ".join(str(exc).split())[:200]
    return None


def outcome(run):
    """One case's record: its kind and message."""
    try:
        got = run("gpu")
    except numbax.NumbaxDeviceError as exc:
        kind = "refused" if REFUSED in str(exc) else "error"
        return {"kind": kind, "msg": exc.message, "user_line": exc.origin is not None}
    except Exception as exc:  # a bug to report: it must be a numbax error at the user's line, or agree
        return {"kind": "error", "msg": f"{type(exc).__name__}: {exc}"[:300], "tb": traceback.format_exc()[-800:]}
    try:
        got = numbax.device_get(got)
        expected = run("cpu")
    except Exception as exc:
        return {"kind": "cpu-error", "msg": f"{type(exc).__name__}: {exc}"[:300]}
    bad = difference(expected, got)
    return {"kind": "agree"} if bad is None else {"kind": "WRONG", "msg": bad}


def group(message: str) -> str:
    """The construct a refusal names, for the table."""
    for pattern, name in ((r"by `None`|more indices than", "newaxis (None) index"), (r"by `\.\.\.`", "ellipsis"),
                          (r"indexing `[^`]*` by `", "gather/mask index"), (r"\.append\(", "list append"),
                          (r"a loop over|`for .* in (?!range)", "loop over an array"),
                          (r"per example|one thread", "vmap: per-example arrays")):
        if re.search(pattern, message):
            return name
    for pattern in (r"`(np\.[\w.]+)", r"(rt\.\w+)\(", r"`[\w.]+\.(\w+)\(", r"`\w+\.(\w+)\("):
        found = re.search(pattern, message)
        if found:
            return found.group(1)
    return message[:70]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="*", help=f"some of {', '.join(CORPORA)} (all by default)")
    parser.add_argument("--only", default="", help="comma-separated case ids")
    parser.add_argument("--json", help="write every case's record here, one JSON object a line")
    options = parser.parse_args(argv)
    options.corpora = options.corpora or list(CORPORA)
    for corpus in set(options.corpora) - set(CORPORA):
        parser.error(f"no corpus {corpus!r}")
    only = set(filter(None, options.only.split(",")))
    records = []
    for corpus in options.corpora:
        for case_id, run in CORPORA[corpus]():
            if only and case_id not in only:
                continue
            start = time.perf_counter()
            record = {"corpus": corpus, "id": case_id, **outcome(run)}
            record["s"] = round(time.perf_counter() - start, 1)
            records.append(record)
            if record["kind"] != "agree":
                print(f"{record['kind']:9} {corpus}:{case_id}  {record.get('msg', '')[:150]}", flush=True)
    if options.json:
        with open(options.json, "w") as out:
            out.writelines(json.dumps(record) + "\n" for record in records)
    groups = collections.defaultdict(collections.Counter)
    for record in records:
        if record["kind"] == "refused":
            groups[group(record["msg"])][record["corpus"]] += 1
    print("\nrefusals by construct:")
    for name, counts in sorted(groups.items(), key=lambda item: -sum(item[1].values())):
        print(f"{sum(counts.values()):4d}  {name}  {dict(counts)}")
    print("\ncorpus   agree  refused  WRONG  error  cpu-error  total")
    for corpus in options.corpora:
        kinds = collections.Counter(r["kind"] for r in records if r["corpus"] == corpus)
        print(f"{corpus:7} {kinds['agree']:6d} {kinds['refused']:8d} {kinds['WRONG']:6d} {kinds['error']:6d} "
              f"{kinds['cpu-error']:10d} {sum(kinds.values()):6d}")
    return int(any(r["kind"] in ("WRONG", "error") for r in records))


if __name__ == "__main__":
    sys.exit(main())
