"""specialize: a user function and a call signature -> flat functions over array leaves.

Expects the parsed, fenced user function and, for each parameter, either its
static value or a pytree whose leaves are ``Dyn`` placeholders carrying abstract
values. Guarantees a module of plain functions whose parameters are array or
scalar leaves: containers are gone (indexed, unpacked and looped over at
compile time), static values are folded, branches on compile-time values are
pruned, and every call of a user function is a call of a specialized helper
(``inline`` removes those next). Loops over run-time ranges stay loops.

    >>> import gast, numpy as np
    >>> from numbax.ast_passes.unparse import unparse
    >>> from numbax.ast_passes.specialize.values import AVal, Dyn
    >>> src = '''
    ... def forward(params, x):
    ...     for w, b in params[:-1]:
    ...         x = np.tanh(x @ w + b)
    ...     w, b = params[-1]
    ...     return x @ w + b
    ... '''
    >>> fdef = gast.parse(src).body[0]
    >>> leaf = lambda: Dyn(None, AVal(np.dtype("float64"), 2))
    >>> params = [(leaf(), leaf()), (leaf(), leaf())]
    >>> out = specialize_function(fdef, {"np": np}, {"params": params, "x": leaf()})
    >>> print(unparse(out.module.body[-1]))
    def forward(params_0_0, params_0_1, params_1_0, params_1_1, x):
        w, b = (params_0_0, params_0_1)
        x = np.tanh(x @ w + b)
        w, b = (params_1_0, params_1_1)
        return x @ w + b
"""
from __future__ import annotations

from typing import Any, Dict

import gast
import numpy as np

from numbax.ast_passes import resolve
from numbax.ast_passes.specialize.builder import ModuleBuilder, Specialized
from numbax.ast_passes.specialize.specializer import Specializer


def specialize_function(fdef: gast.FunctionDef, globals_: Dict[str, Any], bound: Dict[str, Any],
                        closure: Dict[str, Any] = None, key: Any = None, differentiated: bool = False,
                        examples_per_thread: bool = False) -> Specialized:
    """Specialize ``fdef`` to ``bound`` (parameter -> static value or pytree of ``Dyn`` placeholders).

    ``differentiated``: a transformation will rewrite the result (a gradient generated at a call inside
    it is then left unfused, for that transformation to read). ``examples_per_thread``: for the GPU
    backend, each ``vmap`` call becomes a loop over all examples that the backend runs as one kernel
    (``numbax.transforms.vmap.threads``), not the CPU's loop after the first example.
    """
    builder = ModuleBuilder()
    builder.differentiated = differentiated
    builder.examples_per_thread = examples_per_thread
    spec = Specializer(builder, fdef, resolve.Namespace(closure or {}, globals_), key=key)
    spec.materialize_outputs = True
    spec.is_entry = True
    for name, value in bound.items():
        if isinstance(value, np.ndarray):  # bound by a functools.partial: a constant named for its parameter
            builder.materializer.constant_array(value, name)
        spec.bind_parameter(name, value)
    spec.run_body()
    builder.function_names.reserve([fdef.name])
    main = spec.function_def(fdef.name)
    constants = builder.materializer.constants
    for name in constants:
        main.args.args.append(gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None))
    module = gast.Module(body=builder.helpers + [main], type_ignores=[])
    return Specialized(module=module, name=fdef.name, imports=sorted(builder.imports),
                       constants=dict(constants), returns=spec.returns, reads_avals=builder.reads_avals)
