"""optimize: the clean-up passes, run until none of them changes anything.

Each pass reports whether it changed the tree; the fixpoint is reached when a
whole round reports no change (never by comparing source text).
"""
from __future__ import annotations

import gast

from numbax.ast_passes.optimizations import common_subexpressions, copy_propagation, dead_arrays, dead_code, \
    dead_tapes, fold_temporaries, hoist_invariants, local_copies, one_hot_products


class _BatchInvariants:
    """The invariants of vmap's loops, hoisted (``hoist_invariants.transform_batch_loops``)."""

    transform = staticmethod(hoist_invariants.transform_batch_loops)


OPTIMIZATIONS = (
    _BatchInvariants,  # what each example of a vmap loop recomputes from unchanging values (a Jacobian's primal)
    common_subexpressions,  # a pure call computed again from the same values (a Jacobian's primal, in both sweeps)
    one_hot_products,  # products by rows of an identity (jacfwd's basis) as selections of rows
    copy_propagation,  # parameter and leaf copies left by specialize and inline
    local_copies,      # copies of names assigned more than once (adjoints updated in loops), within a block
    dead_code,         # values nothing reads, often the other side of a propagated copy
    dead_arrays,       # arrays only written into (the gradient beside its tangent in jvp of grad)
    dead_tapes,        # list tapes whose popped items nothing reads (their shapes known to scalarize)
    fold_temporaries,  # A-normal form's temporaries back into the expressions people wrote
)
# what a pass that leaves values unread (``first_example``'s first example) needs after it
DEAD = (dead_code, dead_arrays)
MAX_ROUNDS = 20


def transform(module: gast.Module, optimizations=OPTIMIZATIONS) -> gast.Module:
    """Optimize every function of ``module`` to a fixpoint (by ``optimizations``, all of them by default)."""
    for fdef in module.body:
        for _ in range(MAX_ROUNDS):
            changed = False
            for opt in optimizations:
                fdef, did = opt.transform(fdef)
                changed |= did
            if not changed:
                break
    return module
