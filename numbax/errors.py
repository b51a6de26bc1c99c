"""The exceptions a user of numbax can see, each pointing at the user's own line."""
from __future__ import annotations

from typing import Optional

from numbax.ast_passes.origin import Origin


class NumbaxError(Exception):
    """Base class of every error numbax raises because of the user's program.

    The message names the construct, the user's ``file:line`` (with the line
    itself and a caret under the column) and what to do instead.
    """

    def __init__(self, message: str, origin: Optional[Origin] = None, hint: str = ""):
        self.message = message
        self.origin = origin
        self.hint = hint
        super().__init__(self._format())

    def _format(self) -> str:
        text = self.message
        if self.origin is not None:
            text = f"{self.origin.location()}: {text}\n{self.origin.excerpt()}"
        if self.hint:
            text += f"\n{self.hint}"
        return text


class NumbaxSyntaxError(NumbaxError):
    """A construct outside the Python subset numbax compiles (found by the fence)."""


class NumbaxSourceError(NumbaxError):
    """The function's source code cannot be retrieved, so it cannot be compiled."""


class NumbaxRecursionError(NumbaxError):
    """A user function calls itself, directly or through others."""


class NumbaxSpecializationError(NumbaxError):
    """A value that must be known when compiling (a container index, a loop over a list) is not."""


class NumbaxTypingError(NumbaxError, TypeError):
    """Numba could not type the generated code; reported against the user's line."""


class NumbaxDtypeError(NumbaxError, TypeError):
    """A dtype compiled code cannot represent (float16, object, strings) or an operation it has no rule for
    on a dtype (``>`` on complex numbers)."""


class NumbaxStaticArgumentError(NumbaxError, ValueError):
    """A static argument cannot serve as a compilation cache key (it is not hashable)."""


class NumbaxDifferentiationError(NumbaxError, TypeError):
    """A construct or a call that reverse or forward mode cannot differentiate."""


class NumbaxShapeError(NumbaxError, TypeError):
    """The operands of a contraction (``np.dot``, ``@``, ``np.einsum``, ...) do not fit; JAX raises TypeError."""


class NumbaxInternalError(NumbaxError):
    """A bug in numbax itself: generated code broke an invariant. Please report it."""


class NumbaxBatchingError(NumbaxError, ValueError):
    """``vmap``'s axes do not fit the arguments or the outputs of a call inside compiled code (JAX raises
    ``ValueError`` there)."""


class NumbaxCacheError(NumbaxError):
    """The cache directory could run someone else's code in this process (another user owns it, others may
    write it, or a symbolic link leads out of it), so numbax refuses to use it."""


class NumbaxWarning(UserWarning):
    """Base class of the warnings numbax gives."""


class NumbaxCacheWarning(NumbaxWarning):
    """The cache directory cannot be used (read-only, not a directory, not creatable): compiled code is kept
    in memory for this process only."""
