"""``pmap``: JAX's single-program multiple-data map over devices, on numbax's CPU devices and on GPUs.

``pmap(f, axis_name='i')(x)`` runs ``f`` once per slice of ``x``'s mapped axis, one shard per device, and
stacks the results, as JAX does; the collectives in ``f`` (``numbax.lax.psum``...) run over the shards.
The calling convention and the checks are JAX's: the mapped axis must have at most as many entries as there
are devices (exactly as many as ``devices`` passed), ``static_broadcasted_argnums`` are compile-time
constants given to every shard, ``donate_argnums`` is a hint (numbax never reuses an argument's memory).

The shards are the examples of ``vmap``'s loop over the axis (``transforms.vmap.loop``), so that ``pmap``
composes with ``grad``, ``jvp``, ``vmap`` and ``jit`` exactly as ``vmap`` does. Called from Python with a
mapped axis of several entries, ``pmap`` runs each shard on a thread of its own, in compiled code that
releases the GIL, its collectives on the ``threads`` transport (``thread_shards``). Inside another
transformation (``grad(pmap(f))``, ``jit`` of a function that calls it), with one entry, or on the python
backend, its collectives run on the ``batch`` transport (``primitives.transports``): in one thread, one
shard after the other, between the stages that each collective cuts; the results are the same bits. After
``numbax.distributed.initialize()`` in several processes (``mpiexec -n N``), ``pmap`` maps over every
process's devices and each process runs its own shard, its collectives on the ``mpi`` transport
(``mpi_shards``), as JAX's multi-process ``pmap``. Over GPUs (``backend="gpu"``, GPU ``devices``, or device
arrays among the arguments and no ``devices``), each GPU runs its shard's program, compiled by the GPU backend,
on a thread of its own, its collectives exchanged between the threads through the host, and the results come
back as device arrays (``gpu_shards``).
"""
from __future__ import annotations

import contextlib
import inspect
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from numbax.devices import Device, devices as all_devices
from numbax.errors import NumbaxDeviceError
from numbax.transform_cache import reused
from numbax import tree_util
from numbax.transforms.pmap import gpu_shards, mpi_shards, thread_shards
from numbax.transforms.vmap.api import Vmapped
from numbax.transforms.vmap.batching import Batching

_GPU_NAMES = ("gpu", "cuda")


def _devices(backend: Optional[str], devices: Optional[Sequence[Device]]) -> Optional[Tuple[Device, ...]]:
    """The devices passed to ``pmap`` (then the axis must match them), checked; None for every device of the
    backend."""
    if backend not in (None, "cpu", "python") + _GPU_NAMES:  # python: the generated code, uncompiled (debugging)
        raise RuntimeError(f"Unknown backend {backend!r}; numbax knows 'cpu' and 'gpu' (alias 'cuda')")
    if devices is None:
        return None
    devices = tuple(devices)
    if not devices or not all(isinstance(d, Device) for d in devices):
        raise ValueError(f"pmap's devices must be a non-empty sequence of numbax devices, got {devices!r}")
    if len(set(devices)) != len(devices):
        raise ValueError(f"pmap's devices must be distinct, got {devices!r}")
    on_gpus = gpu_shards.check_platform(devices)
    if on_gpus != (backend in _GPU_NAMES) and backend not in (None, "python"):
        raise NumbaxDeviceError(f"pmap's backend={backend!r} with devices {list(devices)!r}",
                                hint="pass the devices of the backend: numbax.devices(backend), or no backend.")
    return devices


def _arguments(signature: inspect.Signature, values: List[Any]) -> Tuple[tuple, Dict[str, Any]]:
    """A call's arguments from the value of each parameter (``CallSignature.bind``'s)."""
    args: List[Any] = []
    kwargs: Dict[str, Any] = {}
    for param, value in zip(signature.parameters.values(), values):
        if param.kind is param.VAR_POSITIONAL:
            args.extend(value)
        elif param.kind is param.KEYWORD_ONLY:
            kwargs[param.name] = value
        elif param.kind is param.VAR_KEYWORD:
            kwargs.update(value)
        else:
            args.append(value)
    return tuple(args), kwargs


def _argnums(value: Union[int, Sequence[int]], what: str) -> Tuple[int, ...]:
    nums = (value,) if isinstance(value, int) else tuple(value)
    if not all(type(n) is int for n in nums):
        raise TypeError(f"pmap's {what} must be an int or a sequence of ints, got {value!r}")
    return nums


class Pmapped(Vmapped):
    """A function mapped over devices (``pmap``): a ``vmap`` whose axis is checked against the devices."""

    label = "pmap"

    def __init__(self, fun: Callable, axis_name: Any = None, in_axes: Any = 0, out_axes: Any = 0,
                 static_broadcasted_argnums: Union[int, Sequence[int]] = (), devices: Optional[Sequence[Device]] = None,
                 backend: Optional[str] = None, donate_argnums: Union[int, Sequence[int]] = ()):
        self.devices = _devices(backend, devices)
        self.donate_argnums = _argnums(donate_argnums, "donate_argnums")  # a hint: no memory is reused
        self.on_gpus = backend in _GPU_NAMES or (backend is None and self.devices is not None and
                                                 self.devices[0].platform == "gpu")
        self._gpu_program: Optional[gpu_shards.ShardProgram] = None
        super().__init__(fun, in_axes, out_axes, axis_name, None,
                         _argnums(static_broadcasted_argnums, "static_broadcasted_argnums"), (),
                         "cpu" if self.on_gpus else backend or "cpu")  # on GPUs: each shard's own jit
        b = self.batching
        self.batching = Batching(b.fun, b.in_axes, b.out_axes, b.axis_name, None)
        self.options = {**self.options, "nogil": True}  # each shard on a thread of its own (``thread_shards``)

    def device_count(self) -> Tuple[int, bool]:
        """How many devices the shards may use now, and whether they were passed (then exactly that many):
        without ``devices``, ``cpu_device_count()``, which may change between calls."""
        if self.devices is not None:
            return len(self.devices), True
        return len(all_devices("cpu")), False

    def _call_form(self, args: tuple, kwargs: Dict[str, Any]) -> Tuple[Tuple[str, Any], ...]:
        """``vmap``'s checks and key, the devices (the compiled code checks the mapped axis against them), and
        the transport: on threads for a call of several shards over several CPU devices."""
        return self._form(args, kwargs, None)

    def _form(self, args: tuple, kwargs: Dict[str, Any], leaves: Optional[list]) -> Tuple[Tuple[str, Any], ...]:
        """``_call_form``, given the call's dynamic leaves where the caller has flattened them (None: flattened
        here where the shard count matters)."""
        if not args and not kwargs:
            raise ValueError("pmap requires at least one argument with a mapped axis.")
        form = super()._call_form(args, kwargs)
        transport = self._transport()
        if self._may_use_threads():
            if leaves is None:
                leaves = tree_util.tree_leaves(self._signature.split(self._signature.bind(args, kwargs))[1])
            if thread_shards.shard_count(leaves, dict(form)["in_axes"]) > 1:
                transport = "threads"
        return form + (("devices", self.device_count()), ("transport", transport))

    def _transport(self) -> str:
        """How the shards' collectives travel across processes (checked) after ``numbax.distributed.initialize``
        in several, else within this process, in one thread (``mpi_shards``)."""
        transport = mpi_shards.transport()
        if transport == "mpi":
            mpi_shards.check(self.devices)
        return transport

    def _may_use_threads(self) -> bool:
        """Whether a call of several shards runs them on threads now: on the CPU, within this process, over
        several CPU devices."""
        return self.backend == "cpu" and self._transport() == "batch" and self.device_count()[0] > 1

    def _compiled_call(self, args: tuple, kwargs: Dict[str, Any]):
        """A call over GPUs: one shard per GPU (``_gpu_call``); of several shards over several CPU devices: one
        per thread (``thread_shards``); any other as ``vmap``'s (which sends device arrays to ``_gpu_call``)."""
        if not (self.on_gpus or self._may_use_threads()):
            return super()._compiled_call(args, kwargs)
        values = self._signature.bind(args, kwargs)
        statics, dynamic = self._signature.split(values)
        leaves, treedef = tree_util.tree_flatten(dynamic)
        if self.on_gpus or self._runs_on_gpu(values, leaves):
            return self._gpu_call(values, leaves, treedef, statics, args, kwargs)
        form = self._form(args, kwargs, leaves)
        if dict(form)["transport"] != "threads":
            return super()._compiled_call(args, kwargs)
        in_axes = dict(form)["in_axes"]
        count = thread_shards.shard_count(leaves, in_axes)
        thread_shards.check(count, dict(form)["devices"])
        shards = thread_shards.split(leaves, in_axes, count)
        compiled = self._specialization(values, shards[0], treedef, statics, form)
        outputs = thread_shards.run(compiled, shards)
        return thread_shards.joined(outputs, self.batching.out_axes, self.origin().position())

    def _gpu_call(self, values, leaves, treedef, statics, args: tuple, kwargs: Dict[str, Any]):
        """A call over GPUs (``backend="gpu"``, GPU ``devices``, or device arrays among the arguments and no
        ``devices``): one shard per GPU, each shard's program ``jit(fun, backend="gpu")`` on its GPU, with the
        axis bound for its collectives (``gpu_shards``)."""
        if not self.on_gpus and self.devices is not None:
            raise NumbaxDeviceError("pmap over CPU devices was called with device arrays", self.origin(),
                                    hint="bring them back with numbax.device_get(...), or pass "
                                         "numbax.devices('gpu') as pmap's devices.")
        in_axes = dict(super()._call_form(args, kwargs))["in_axes"]  # vmap's checks of the call
        static = self._signature.static

        def arguments(shard: List[Any]) -> Tuple[tuple, Dict[str, Any]]:
            shard_values, static_values = iter(tree_util.tree_unflatten(treedef, shard)), iter(statics)
            return _arguments(self._signature.signature, [next(static_values) if i in static else next(shard_values)
                                                          for i in range(self._signature.nparams)])

        if self._gpu_program is None:
            self._gpu_program = gpu_shards.ShardProgram(self.batching.fun, self.static_argnums,
                                                        self.batching.axis_name)
        devices, exact = gpu_shards.gpus(self.devices)
        return gpu_shards.run(self._gpu_program, devices, exact, arguments, leaves, in_axes, self.batching.out_axes,
                              self.origin().position())

    def _run_pipeline(self, bound: Dict[str, Any], after_pass: Optional[str] = None, in_axes: tuple = (),
                      devices: Optional[Tuple[int, bool]] = None, transport: str = "batch", backend: str = "cpu"):
        if backend == "gpu":
            raise NumbaxDeviceError("pmap compiles each shard's program for its GPU when it is called from Python",
                                    self.origin(), hint="call the pmapped function with NumPy arrays and "
                                    "backend='gpu', or with device arrays.")
        self.batching.devices = devices or self.device_count()
        self.batching.transport = transport
        with mpi_shards.specializing() if transport == "mpi" else contextlib.nullcontext():
            return super()._run_pipeline(bound, after_pass, in_axes)

    def _compiles_for_gpu(self) -> bool:
        """pmap over GPUs runs each shard's own ``jit`` (``_gpus_call``), not this one's on the GPU backend."""
        return False

    def _offer_fast_path(self, compiled, treedef, leaves) -> None:
        """Numba's C dispatch cannot see the device count a call's code was made for: without ``devices``
        passed, every call takes numbax's path, whose key holds the count."""
        if self.devices is not None and self._transport() == "batch":
            super()._offer_fast_path(compiled, treedef, leaves)

    def _numbax_specialize(self, spec, node, args, kwargs):
        """Called inside another compiled function (``grad(pmap(f))``): the loop over the shards is emitted
        there, with the run-time check of the current devices."""
        if self.on_gpus:
            raise NumbaxDeviceError("pmap over GPUs inside another transformation or a jit is not built yet",
                                    spec.origin(node), hint="call the pmap over GPUs from Python (transform "
                                    "the function it maps instead: pmap(grad(f), backend='gpu')), or pmap over "
                                    "CPU devices.")
        self.batching.devices = self.device_count()
        self.batching.transport = self._transport()
        with mpi_shards.specializing(spec, node) if self.batching.transport == "mpi" else contextlib.nullcontext():
            return super()._numbax_specialize(spec, node, args, kwargs)

    def _numbax_fingerprint(self) -> tuple:
        return ("pmap", self.device_count(), self._transport()) + super()._numbax_fingerprint()

    def rejit(self, static_argnums=(), static_argnames=(), backend: str = "cpu") -> "Pmapped":
        """``jit`` of a ``pmap``: the same ``pmap`` (JAX compiles a pmapped function already)."""
        if static_argnames:
            raise ValueError("jit of pmap takes static_argnums only (pmap's static_broadcasted_argnums)")
        b = self.batching
        if backend == "cpu" and self.on_gpus:
            backend = "gpu"
        return Pmapped(b.fun, b.axis_name, b.in_axes, b.out_axes, self.static_argnums + tuple(static_argnums),
                       self.devices, backend, self.donate_argnums)

    def __repr__(self) -> str:
        return super().__repr__().replace("numbax.vmap", "numbax.pmap")


@reused
def pmap(fun: Callable, axis_name: Any = None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums: Union[int, Sequence[int]] = (), devices: Optional[Sequence[Device]] = None,
         backend: Optional[str] = None, donate_argnums: Union[int, Sequence[int]] = ()) -> Callable:
    """Map ``fun`` over the devices of an axis (``jax.pmap``): one shard per device, collectives among them.

    Args:
        fun: a Python function numbax can read, or a numbax transformation of one.
        axis_name: the name collectives in ``fun`` (``numbax.lax.psum``, ...) use for the mapped axis.
        in_axes: as ``vmap``'s: for each positional argument the axis to map (``None``: every shard gets it).
        out_axes: as ``vmap``'s: where the mapped axis goes in each output.
        static_broadcasted_argnums: positional arguments that are compile-time constants, given to every shard.
        devices: the devices to use (the mapped axis must have as many entries); by default
            ``numbax.devices("cpu")`` (``config.update("cpu_device_count", n)`` makes ``n``), of which the axis
            may use the first ones. Across processes, every process's devices (the default), one per
            process: each process passes its shard (a mapped axis of 1) and gets its results. GPUs
            (``numbax.devices("gpu")``): one shard per GPU, as ``backend="gpu"``.
        backend: ``"cpu"`` or None (``"python"``: the generated code, uncompiled); ``"gpu"`` (alias ``"cuda"``):
            each shard's program runs on a GPU of its own, compiled by the GPU backend (``jit(fun,
            backend="gpu")``), on a thread of its own; its collectives go between the threads through the host;
            the results are stacked on the first GPU, as device arrays.
        donate_argnums: accepted as a hint; numbax does not reuse the memory of arguments.

    Called from Python with several shards, each runs on a thread of its own in compiled code that releases
    the GIL (one core per shard; the first such call keeps freed memory in the process, as
    ``numbax.distributed.initialize`` does: see ``numbax.distributed.memory``); inside another transformation
    (``grad(pmap(f))``, a ``jit`` that calls it) or under ``disable_jit``, the shards run one after the other
    in one thread, with the same results.

    Returns:
        A function with ``fun``'s signature, returning each shard's outputs stacked along ``out_axes``.

    Raises:
        ValueError: at a call, as JAX raises it: the mapped axis has more entries than there are devices, or
            not as many as the ``devices`` passed; ``in_axes`` does not fit the arguments.
        NumbaxDeviceError: on GPUs: none available, a collective over the axis and another one at once or
            inside a vmap, a pmap over GPUs inside a jit or another transformation; ``devices`` that mix GPUs and CPU devices or are not ``backend``'s;
            across processes, several CPU devices in a process, or ``devices`` other than every process's.
    """
    return Pmapped(fun, axis_name, in_axes, out_axes, static_broadcasted_argnums, devices, backend, donate_argnums)
