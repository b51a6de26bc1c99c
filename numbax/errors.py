"""The exceptions a user of numbax can see, each pointing at the user's own line."""
from __future__ import annotations

import linecache
from typing import Optional

from numbax.error_text import fill
from numbax.origin import Origin


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

    def moved(self, origin: Optional[Origin], message: str) -> "NumbaxError":
        """This error, of its class, reported at ``origin`` with ``message`` (raised in numbax's own Python that a
        line of the user's called, where the user can change what it was given)."""
        self.origin, self.message = origin, message
        self.args = (self._format(),)
        return self

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


class NumbaxInternalError(NumbaxError):
    """A bug in numbax itself: generated code broke an invariant. Please report it."""


class NumbaxBatchingError(NumbaxError, ValueError):
    """``vmap``'s axes do not fit the arguments or the outputs of a call inside compiled code (JAX raises
    ``ValueError`` there)."""


class NumbaxCacheError(NumbaxError):
    """The cache directory could run someone else's code in this process (another user owns it, others may
    write it, or a symbolic link leads out of it), so numbax refuses to use it."""


class NumbaxDeviceError(NumbaxError, RuntimeError):
    """A request for a device numbax cannot serve: no GPU (or no numba-cuda) here, arrays on different devices
    in one call, or a program or transformation the GPU backend does not compile yet."""


class NumbaxDistributedError(NumbaxError, RuntimeError):
    """A multi-process program numbax cannot run as asked: MPI not installed, ``numbax.distributed.initialize``
    called twice or with arguments it cannot honour, or processes that the launcher and MPI count differently."""


class NumbaxWarning(UserWarning):
    """Base class of the warnings numbax gives."""


class NumbaxCacheWarning(NumbaxWarning):
    """The cache directory cannot be used (read-only, not a directory, not creatable): compiled code is kept
    in memory for this process only."""


def origin_at(where: str) -> Optional[Origin]:
    """The ``Origin`` of a position ``file:line:column`` that generated code passes (None if it is none)."""
    parts = where.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        filename, line = parts[0], int(parts[1])
        return Origin(filename, line, int(parts[2]), linecache.getline(filename, line))
    return None


class NumbaxRunTimeError(NumbaxError):
    """Base class of the errors compiled code raises where NumPy or Python would (``numbax.runtime.checks``).

    Compiled code raises it with a constant message ``template``, ``where`` (the user's
    ``file:line:column``) and the numbers the message needs (ints, tuples of ints for shapes): the text
    is written here, in Python (``numbax.error_text.fill``), as writing it in nopython mode costs seconds
    of compilation on the first call.
    """

    HINT = ""

    def __init__(self, template: str, where: str = "", *values):
        self.template, self.where, self.values = template, where, values
        super().__init__(fill(template, *values), origin_at(where), hint=self.HINT)

    def __reduce__(self):
        return type(self), (self.template, self.where, *self.values)


class NumbaxIndexError(NumbaxRunTimeError, IndexError):
    """An integer index the user wrote is out of bounds (NumPy raises ``IndexError``)."""

    HINT = "index from -size to size - 1 along that axis (check the size with x.shape first, or clip the index)."


class NumbaxMaskShapeError(NumbaxIndexError):
    """A boolean index whose shape is not that of the axes it indexes (NumPy raises ``IndexError``)."""

    HINT = "make the mask from the array it indexes, or from one of the same shape (x[x > 0])."


class NumbaxZeroDivisionError(NumbaxRunTimeError, ZeroDivisionError):
    """A Python number divided by zero (Python raises ``ZeroDivisionError``; arrays give inf or nan, as in
    NumPy)."""

    HINT = "test the divisor first; or divide NumPy values (np.float64(x) / 0.0 is inf, as in NumPy)."


class NumbaxDomainError(NumbaxRunTimeError, ValueError):
    """A result NumPy would give in a dtype that compiled code cannot (``np.linalg.eig`` of a real matrix
    with complex eigenvalues)."""

    HINT = "pass a complex matrix (np.linalg.eig(a.astype(np.complex128))), whose results are complex always."


class NumbaxIntegerPowerError(NumbaxRunTimeError, ValueError):
    """An integer raised to a negative integer power: NumPy raises ``ValueError``, and Python's ints give a
    float, which compiled code, typing the result as an int, cannot."""

    HINT = "raise a float instead (2.0 ** k, x.astype(np.float64) ** k, float(n) ** k)."


class NumbaxEmptyListError(NumbaxRunTimeError, ValueError):
    """A list made at run time (a comprehension over a run-time range, ``append`` in a loop of run-time
    length) got no item: compiled code holds it as the array of its items, whose shape its first item sets."""

    HINT = ("make sure the loop runs at least once (n >= 1), or build the result in a preallocated array "
            "(out = np.zeros((n,) + shape); out[i] = ...), which may be empty.")


class NumbaxUnimplementedValueError(NumbaxRunTimeError, NotImplementedError):
    """A value for which numbax has no verified implementation of what the user called, found when the code
    runs (a shift by a count outside the integers' bits, which NumPy defines and LLVM leaves undefined)."""

    HINT = "keep the values in the range the message names (np.where(k < 64, x << k, 0) for a shift)."


class NumbaxUnboundLocalError(NumbaxRunTimeError, UnboundLocalError):
    """A variable read on a path that did not assign it (``if c: a = ...`` then ``a`` where ``c`` was false):
    Python raises ``UnboundLocalError``; compiled code would read a zeroed value."""

    HINT = "assign the variable on every path before it is read (a = np.zeros_like(x) before the `if`)."


class NumbaxOverflowError(NumbaxRunTimeError, OverflowError):
    """A Python int outside the range of the integer dtype that NumPy 2 computes it in (``uint8_array - k`` for
    ``k = -1``): NumPy raises ``OverflowError``; compiled code would wrap it around."""

    HINT = "cast the array first (x.astype(np.int64) - k), or keep the number in the array's dtype's range."


class NumbaxComplexDerivativeError(NumbaxRunTimeError, TypeError):
    """A value that a derivative rule checked against JAX for real numbers only meets turned out complex when
    the code ran (its dtype was not known when compiling): numbax refuses it, as it does where the dtype is."""

    HINT = ("differentiate the real and imaginary parts (np.real(z), np.imag(z)) separately, or compute this value "
            "outside the differentiated function.")


class NumbaxShapeError(NumbaxRunTimeError, ValueError, TypeError):
    """Arrays whose shapes do not fit the operation the user wrote: NumPy raises ``ValueError`` (broadcasting,
    reshapes), JAX ``TypeError`` (contractions such as ``np.dot`` under ``grad``), so it is both."""

    HINT = "make the shapes agree (x.shape shows them), or reshape or index an operand first."


class NumbaxAxisNameError(NumbaxError, NameError):
    """A collective names an axis that no enclosing ``vmap`` or ``pmap`` binds (JAX raises ``NameError``)."""


class NumbaxCollectiveError(NumbaxRunTimeError, RuntimeError):
    """A collective across processes (``numbax.distributed.collectives``) that compiled code cannot complete: MPI
    reported an error, MPI is shut down, or a permutation is not one."""

    HINT = "call collectives between numbax.distributed.initialize() and shutdown(), with the same arguments on " \
           "every process."
