"""The middle end: the passes in order, each with the reason it is there.

``run`` takes a user function and a call signature to generated Python
source. ``NUMBAX_DUMP=specialize,inline`` (or ``all``) prints the code after
each named pass to standard error; ``after_pass`` stops early and returns it.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Union

import gast
import numpy as np

from numbax import timings, tree_util
from numbax.ast_passes import anf, boundary, custom_rules, debug_checks, fence, inline, legalize, optimize, \
    resolve, row_checks, run_time_checks
from numbax.ast_passes.analyses import avals
from numbax.ast_passes.optimizations import first_example, scalarize, vectorize
from numbax.ast_passes.optimizations.fusion import versions
from numbax.ast_passes.parse import ParsedFunction, parse_function
from numbax.ast_passes.specialize import specialize_function
from numbax.ast_passes.specialize.builder import ReturnSpec
from numbax.ast_passes.specialize.values import Dyn
from numbax.ast_passes.tree_copy import copy_tree, walk
from numbax.ast_passes.unparse import unparse_with_origins
from numbax.ast_passes import collectives as collective_stages
from numbax.errors import NumbaxError
from numbax.origin import Origin

# name -> why it is here. Order matters: the fence sees the user's tree before
# anything rewrites it; inlining needs specialized (flat) helpers; transforms
# read A-normal form; optimization cleans up after all of them and folds the
# temporaries of A-normal form back into expressions people read.
PASSES = (
    ("parse", "read the function's source into a tree tagged with the user's lines"),
    ("fence", "reject unsupported constructs at the user's line before any rewriting"),
    ("specialize", "fold static values, flatten pytrees, unroll loops over containers; vmap and lax calls "
                   "become loops"),
    ("inline", "replace calls of user functions by their specialized bodies"),
    ("anf", "one operation per statement, the form every transformation reads and writes"),
    ("collectives", "vmap's loops over axes with collectives cut into stages at them, each collective array code "
                    "over the stacked examples; before the checks and the transformations, which see plain code"),
    ("checks", "check the user's indices, Python divisors and array shapes at run time (NumPy's errors at the "
               "user's line); before the transformations, so that nothing they generate is checked"),
    ("row_checks", "vmap's and lax.scan's checks that every example's output has the first one's shape dropped "
                   "where symbolic shapes prove it, before the transformations copy them"),
    ("transform", "grad and the other transformations, reading and writing A-normal form"),
    ("rules", "the helpers that users' custom rules call (a custom_vjp's bwd) inlined into the transformed code, "
              "in A-normal form with their run-time checks; custom_vjp markers dropped, their inputs marked seen"),
    ("debug_checks", "with debug_nans/debug_infs on: raise FloatingPointError after an operation that makes one"),
    ("optimize", "common subexpressions, products by rows of an identity as selections of rows, copy propagation, "
                 "dead code, folding temporaries; to a fixpoint"),
    ("markers", "custom_jvp markers dropped; after optimize, where the code of a transformation inside another "
                "one stops: the outer transformation reads the marker's rules again"),
    ("vectorize", "vmap's loops that make a matrix product per example as array code over blocks of examples, "
                  "where every statement has a batching rule; after optimize has hoisted their invariants"),
    ("first_example", "the first example that vmap computes before its loop to size the outputs folded into the "
                      "loop, which sizes them on its first iteration: one copy of the body to compile; after "
                      "vectorize, which makes its first block there, and after the last transformation"),
    ("scalarize", "small arrays of a length the code shows (an ODE's state of two numbers) as one number per "
                  "element, in float64 code on the CPU; after the last transformation and before fusion, which "
                  "would make their operations loops"),
    ("fuse", "a transformation's runs of elementwise array statements over one shape into one loop nest"),
    ("versions", "each fused loop that reads at clamped indices (dims that broadcast) written a second time for "
                 "when no clamp is needed, which LLVM vectorizes; on the CPU, after vectorize has made its rows, "
                 "and after the last A-normal form (an inner transformation's fused code is inlined first)"),
    ("legalize", "reductions Numba lacks (axis=, keepdims=) and exp, tanh to numbax.runtime helpers, custom rules' "
                 "input markers dropped; last, on the final code. Another backend's last pass instead (the GPU's: "
                 "kernels and their host driver, or a refusal at the user's line)"),
)
PASS_NAMES = tuple(name for name, _ in PASSES)


@dataclasses.dataclass
class Generated:
    """Generated source for one specialization and what calling it needs."""

    source: str
    name: str
    line_origins: Dict[int, Any]
    constants: Dict[str, Any]
    returns: Optional[ReturnSpec]
    label: str
    reads_avals: bool = False
    # the code starts with a check of dims it takes as equal; where it fails, ``general`` code must run
    assumes_shapes: bool = False
    # the tree ``source`` was written from, origins kept (for a gradient generated inside another function)
    module: Optional[gast.Module] = dataclasses.field(default=None, compare=False, repr=False)
    imports: List[str] = dataclasses.field(default_factory=list)
    header: str = ""  # the docstring that opens ``source``

    def __getstate__(self) -> Dict[str, Any]:
        """Pickled (the disk cache) without the tree: the source is what a later process needs."""
        return {**self.__dict__, "module": None}


def _dump_requested(name: str) -> bool:
    wanted = os.environ.get("NUMBAX_DUMP", "")
    return bool(wanted) and (wanted == "all" or name in wanted.split(","))


def _render(module: gast.Module, imports: List[str], header: str):
    body = [gast.Expr(value=gast.Constant(value=header, kind=None))]
    body += gast.parse("\n".join(imports)).body if imports else []
    return unparse_with_origins(gast.Module(body=body + module.body, type_ignores=[]))


def _each(transform: Callable[[gast.FunctionDef], gast.FunctionDef]) -> Callable[[gast.Module], gast.Module]:
    def apply(module: gast.Module) -> gast.Module:
        module.body = [transform(f) for f in module.body]
        return module

    return apply


def _inline_rules(spec) -> Callable[[gast.Module], gast.Module]:
    def apply(module: gast.Module) -> gast.Module:
        main = module.body[-1]
        helpers = spec.module.body[:-1] + custom_rules.rule_helpers(main)  # as specialized: inlining copied them
        names = {h.name for h in helpers}
        if any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in names
               for n in walk(main)):
            prepared = [run_time_checks.transform(anf.transform(copy_tree(h))) for h in helpers]
            module = inline.transform(gast.Module(body=prepared + [main], type_ignores=[]))
        module.body[-1] = custom_rules.after_transform(module.body[-1])
        return module

    return apply


def _main_only(transform, spec) -> Callable[[gast.Module], gast.Module]:
    def apply(module: gast.Module) -> gast.Module:
        if transform is not None:
            module.body[-1] = transform(module.body[-1], spec)
            if _RUNTIME_IMPORT not in spec.imports:
                spec.imports.append(_RUNTIME_IMPORT)
        return module

    return apply


_RUNTIME_IMPORT = "from numbax import runtime as rt"


def _debug_checks(spec) -> Callable[[gast.Module], gast.Module]:
    def apply(module: gast.Module) -> gast.Module:
        from numbax import config

        nans, infs = config.state.debug_nans, config.state.debug_infs
        if nans or infs:
            module.body[-1] = debug_checks.transform(module.body[-1], nans, infs)
            if _RUNTIME_IMPORT not in spec.imports:
                spec.imports.append(_RUNTIME_IMPORT)
        return module

    return apply


def _fuse(shapes: Callable[[], Optional[tuple]]) -> Callable[[gast.Module], gast.Module]:
    def apply(module: gast.Module) -> gast.Module:
        given = shapes()
        if given is not None:
            from numbax.ast_passes.optimizations import fusion  # it reads reverse mode's analyses

            param_avals, same, *varying = given  # (the names that change from call to call: ``fusion``)
            module.body[-1], changed = fusion.transform(module.body[-1], param_avals, same, *varying)
            if changed:
                module = optimize.transform(module)
        return module

    return apply


def _main_versions(module: gast.Module) -> gast.Module:
    """The main function's fused loops with clamped reads, versioned (``fusion.versions``)."""
    versions.version(module.body[-1].body)
    return module


def _run_time_leaves(bound: Dict[str, Any]) -> List[Dyn]:
    """The leaves of the bound arguments known only at run time, in the order the main function takes them."""
    return [leaf for value in bound.values() for leaf in tree_util.tree_leaves(value) if isinstance(leaf, Dyn)]


def _param_avals(spec, bound: Dict[str, Any], main: gast.FunctionDef) -> Optional[Dict[str, tuple]]:
    """The abstract values (kind, ndim) of the main function's parameters, the run-time leaves' and the
    constants'; None where they cannot be matched to its parameters."""
    leaves = _run_time_leaves(bound)
    names = [a.id for a in main.args.args]
    if len(names) != len(leaves) + len(spec.constants):
        return None
    param_avals = {n: avals.of_value(np.zeros((1,) * leaf.aval.ndim, leaf.aval.dtype))
                   for n, leaf in zip(names, leaves)}
    param_avals.update({n: avals.of_value(v) for n, v in spec.constants.items()})
    return {n: a for n, a in param_avals.items() if a is not None}


def _row_checks(spec, bound: Dict[str, Any]) -> Callable[[gast.Module], gast.Module]:
    def apply(module: gast.Module) -> gast.Module:
        param_avals = _param_avals(spec, bound, module.body[-1])
        if param_avals is not None:
            module.body[-1] = row_checks.transform(module.body[-1], param_avals)
        return module

    return apply


def _vectorize(spec, bound: Dict[str, Any]) -> Callable[[gast.Module], gast.Module]:
    def apply(module: gast.Module) -> gast.Module:
        param_avals = _param_avals(spec, bound, module.body[-1])
        if param_avals is None:
            return module
        module.body[-1], changed = vectorize.transform(module.body[-1], param_avals)
        if changed:
            module = optimize.transform(module)
        return module

    return apply


def _first_example(spec, bound: Dict[str, Any], lower: Optional[Callable]) \
        -> Callable[[gast.Module], gast.Module]:
    def apply(module: gast.Module) -> gast.Module:
        param_avals = _param_avals(spec, bound, module.body[-1])
        if lower is not None or param_avals is None:  # the GPU's kernels run examples on threads (``vmap.threads``)
            return module
        module.body[-1], changed = first_example.transform(module.body[-1], param_avals)
        return optimize.transform(module, optimize.DEAD) if changed else module  # the first example's

    return apply


def _scalarize(spec, bound: Dict[str, Any], lower: Optional[Callable], fuse: Callable[[], Optional[tuple]]) \
        -> Callable[[gast.Module], gast.Module]:
    def apply(module: gast.Module) -> gast.Module:
        given = fuse()  # a transformation's parameters (its tangents, say) where it is float64 code
        param_avals = given[0] if given is not None else _param_avals(spec, bound, module.body[-1])
        if lower is not None or param_avals is None:  # (the GPU's kernels keep their arrays)
            return module
        leaves = _run_time_leaves(bound)
        dtypes = [np.dtype(leaf.aval.dtype) for leaf in leaves] + \
            [np.asarray(v).dtype for v in spec.constants.values() if isinstance(v, (np.ndarray, np.generic))]
        if not scalarize.float64_only(module, dtypes):
            return module
        module.body[-1], changed = scalarize.transform(module.body[-1], param_avals)
        return optimize.transform(module) if changed else module

    return apply


def _legalize(spec, bound: Dict[str, Any], lower: Optional[Callable], where: Origin) -> \
        Callable[[gast.Module], gast.Module]:
    def apply(module: gast.Module) -> gast.Module:
        module.body[-1] = custom_rules.drop_inputs(module.body[-1])
        if lower is not None:  # another backend's last pass, given the parameters' abstract values
            leaves = _run_time_leaves(bound)
            avals = {a.id: leaf.aval for a, leaf in zip(module.body[-1].args.args, leaves)}
            try:
                module, spec.imports[:] = lower(module, avals, spec.constants)
            except NumbaxError as error:
                if error.origin is None:  # no line of the user's is left (all of it constants): the def line
                    raise error.moved(where, error.message) from None
                raise
            return module
        module = legalize.transform(module)
        spec.imports.extend(line for line in legalize.imports(module) if line not in spec.imports)
        return module

    return apply


def _def_line(parsed: ParsedFunction) -> Origin:
    """The ``def`` line of the user's function."""
    return Origin.of_line(parsed.filename, parsed.node.lineno, parsed.fn.__qualname__)


def _user_source(parsed, label: str) -> Generated:
    text, origins = unparse_with_origins(gast.Module(body=[parsed.node], type_ignores=[]))
    return Generated(source=text + "\n", name=parsed.name, line_origins=origins, constants={}, returns=None,
                     label=label)


def _without_partial(fn: Callable, bound: Dict[str, Any]):
    """``functools.partial(f, *args, **kwargs)``: ``f``, with ``args`` bound to its first parameters.

    The partial's positional arguments are compile-time values (arrays become
    constants); its keyword arguments are parameters of its signature with
    defaults, static where hashable (``call_signature.normalize_static``), so a
    call passes them like any other argument.
    """
    positional: List[Any] = []
    while isinstance(fn, functools.partial):
        positional = list(fn.args) + positional
        fn = fn.func
    params = list(inspect.signature(fn).parameters)
    return fn, {**dict(zip(params, positional)), **bound}


def run(fn: Union[Callable, ParsedFunction], bound: Dict[str, Any], *, label: str = "jit",
        after_pass: Optional[str] = None,
        transform: Optional[Callable[[gast.FunctionDef, Any], gast.FunctionDef]] = None,
        fuse: Callable[[], Optional[tuple]] = lambda: None, lower: Optional[Callable] = None) -> Generated:
    """Generate source for ``fn`` called with ``bound`` (parameter -> static value or Dyn pytree).

    ``fn`` is a user function, or a ``ParsedFunction`` that numbax wrote itself
    (``vmap``'s wrapper around the user's function). ``transform`` (grad, ...)
    rewrites the main function after A-normal form; it receives the function
    and the specialization (``Specialized``). ``fuse``, asked after optimization,
    gives the parameters' (kind, ndim) and the dims the transformation took as
    equal (``shapes.assumed_equal``), and optionally the parameters whose
    statements alone are to be fused (``fusion.transform``'s ``varying``), when
    the transformed function's elementwise runs should be fused. ``lower``, a backend's last pass in place of
    Numba's legalization (the GPU's kernels and driver), takes the module, the
    parameters' abstract values and the constants, and gives the module and its imports; with it, ``vmap``
    calls are specialized one example per thread (the GPU's kernels).
    """
    if after_pass is not None and after_pass not in PASS_NAMES:
        raise ValueError(f"unknown pass {after_pass!r}; passes: {', '.join(PASS_NAMES)}")
    started = time.perf_counter()
    if isinstance(fn, ParsedFunction):
        parsed, key = fn, id(fn.node)  # not the user function's code: the wrapper calls it
    else:
        fn, bound = _without_partial(fn, bound)
        parsed, key = parse_function(fn), resolve.function_key(fn)
    if after_pass == "parse":
        return _user_source(parsed, label)
    fence.check(parsed.node)
    if after_pass == "fence":
        return _user_source(parsed, label)
    spec = specialize_function(parsed.node, parsed.globals, bound, parsed.closure, key=key,
                               differentiated=transform is not None, examples_per_thread=lower is not None)
    specialized = time.perf_counter()
    module = spec.module
    header = f"numbax.{label} of {parsed.fn.__qualname__} ({parsed.filename}:{parsed.node.lineno})."
    stages = (("specialize", lambda m: m), ("inline", inline.transform), ("anf", _each(anf.transform)),
              ("collectives", _each(collective_stages.transform)),
              ("checks", _each(run_time_checks.transform)), ("row_checks", _row_checks(spec, bound)),
              ("transform", _main_only(transform, spec)), ("rules", _inline_rules(spec)),
              ("debug_checks", _debug_checks(spec)),
              ("optimize", optimize.transform), ("markers", _each(custom_rules.drop_markers)),
              ("vectorize", _vectorize(spec, bound)), ("first_example", _first_example(spec, bound, lower)),
              ("scalarize", _scalarize(spec, bound, lower, fuse)), ("fuse", _fuse(fuse)),
              ("versions", _main_versions if lower is None else lambda m: m),
              ("legalize", _legalize(spec, bound, lower, _def_line(parsed))))
    seconds = []
    for name, stage in stages:
        start = time.perf_counter()
        module = stage(module)
        seconds.append((name, time.perf_counter() - start))
        if _dump_requested(name):
            print(f"# ---- numbax: after {name} ----\n{_render(module, spec.imports, header)[0]}",
                  file=sys.stderr)
        if name == after_pass:
            break
    if timings.ENABLED:
        timings.report_passes(f"{label} of {parsed.fn.__qualname__}", f"{parsed.filename}:{parsed.node.lineno}",
                              [("parse+specialize", specialized - started)] + seconds[1:])
    used = {n.id for n in walk(module.body[-1]) if isinstance(n, gast.Name)}
    constants = {k: v for k, v in spec.constants.items() if k in used}
    main = module.body[-1]
    main.args.args = [a for a in main.args.args if a.id not in spec.constants or a.id in constants]
    source, origins = _render(module, spec.imports, header)
    return Generated(source=source + "\n", name=spec.name, line_origins=origins, constants=constants,
                     returns=spec.returns, label=label, reads_avals=spec.reads_avals, module=module,
                     imports=list(spec.imports), header=header)


def at_boundary(generated: Generated, leaves: List[Any]) -> Generated:
    """The code the caller calls, its 0-d arrays numbers inside and 0-d arrays outside (``boundary``), from the
    final ``generated`` (its ``returns`` what the transformation returns) and the call's leaves (what the
    generated function's parameters receive, in order, before its constants)."""
    if generated.module is None or not generated.header:
        return generated
    main = generated.module.body[-1]
    names = [a.id for a in main.args.args if a.id not in generated.constants]
    zero_d = [n for n, leaf in zip(names, leaves) if isinstance(leaf, np.ndarray) and leaf.ndim == 0]
    returns = generated.returns
    numbers = returns is not None and returns.num_dynamic > 0 and (
        len(returns.avals) != returns.num_dynamic or any(a is None or a.ndim == 0 for a in returns.avals))
    if not zero_d and not numbers:
        return generated
    dtypes = [a.dtype.name if a is not None and a.ndim == 0 and a.dtype is not None else None
              for a in returns.avals] if returns is not None and len(returns.avals) == returns.num_dynamic else []
    generated.module.body[-1] = boundary.transform(main, zero_d, numbers, dtypes)
    needed = [_RUNTIME_IMPORT, "import numpy as np"]
    imports = generated.imports + [line for line in needed if line not in generated.imports]
    source, origins = _render(generated.module, imports, generated.header)
    return dataclasses.replace(generated, source=source + "\n", line_origins=origins, imports=imports)

# edited under a running process
