"""cxla.compile and the executables it returns: numpy arrays in without copies (wrapped where
they lie when C-contiguous and aligned), results out without copies (numpy arrays over the
memory the execution wrote, which they own), donation, tuples, errors as cxla.Error's
subclasses (_errors.py), and close() / `with` for the C resources an executable holds."""
from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Dict, Iterable, List, NoReturn, Optional, Sequence, Tuple, Union

import numpy as np

from . import _callbacks, _errors, _lib
from ._buffer import Buffer
from ._errors import Error, InvalidArgumentError, OutOfMemoryError, Status, VerifyError
from ._types import Spec, Types

lib, library_path = _lib.load()
types = Types(lib)
_TOKEN = types.code.get("token")
_callbacks.install(lib)  # host callbacks (jax.debug.print, ...) of this process's programs
_errors.STATUS_NAMES.update((int(s), lib.cxla_status_str(int(s)).decode()) for s in Status)

# What cxla.compile takes: HLO text (str or bytes) or the path of an HLO file.
HloSource = Union[str, bytes, "os.PathLike[str]"]
# A cxla flag's value (docs/flags.md): threads=2, fusion=False, dump_to="dir".
FlagValue = Union[str, int, float, bool]
_vp = ctypes.c_void_p
_c_char = ctypes.c_char
_destroy_buffer = lib.cxla_buffer_destroy
_buffer_data = lib.cxla_buffer_data
_execute_args = lib.cxla_executable_execute_args
_ndarray = np.ndarray
_addressof = ctypes.addressof


class _Context:
    """A cxla context with one set of flags, shared by the executables compiled with those
    flags (they keep it alive) and kept for the process's life in _contexts: it holds the
    compile cache and thread pools, so it is not for one executable's close() to end."""

    def __init__(self, flags: str) -> None:
        h = _vp()
        code = lib.cxla_context_create(ctypes.byref(h))
        self.h: Optional[int] = h.value
        if not self.h:
            raise OutOfMemoryError("cxla: out of memory creating a context")
        if code:
            self.fail(code)  # CXLA_FLAGS is bad
        if flags:
            self.check(lib.cxla_context_set_flags(self.h, flags.encode()))

    def message(self) -> str:
        return str(lib.cxla_context_errmsg(self.h).decode(errors="replace"))

    def fail(self, code: int) -> NoReturn:
        raise _errors.error(code, self.message())

    def check(self, code: int) -> None:
        if code:
            self.fail(code)

    def __del__(self, destroy: Any = lib.cxla_context_destroy) -> None:
        if getattr(self, "h", None):
            destroy(self.h)
            self.h = None


_contexts: Dict[str, _Context] = {}
_contexts_lock = threading.Lock()


def _flag_string(flags: Dict[str, FlagValue]) -> str:
    """compile(..., threads=2, fusion=False) -> "--fusion=off --threads=2" (docs/flags.md)."""
    out = []
    for k in sorted(flags):
        v = flags[k]
        if isinstance(v, bool):
            v = "on" if v else "off"
        out.append("--%s=%s" % (k.replace("_", "-"), v))
    return " ".join(out)


def _context(flags: Dict[str, FlagValue]) -> _Context:
    key = _flag_string(flags)
    with _contexts_lock:
        ctx = _contexts.get(key)
        if ctx is None:
            ctx = _contexts[key] = _Context(key)
        return ctx


class _Owner:
    """Owns one array buffer of cxla's: a result leaf. numpy arrays over its memory keep it
    alive (through the ctypes object that is their base). After it has been donated, it also
    keeps the results of that call alive: one of them may now live in its memory."""

    __slots__ = ("h", "shape", "dtype", "after", "__weakref__")

    def __init__(self, h: int, shape: Tuple[int, ...], dtype: np.dtype[Any]) -> None:
        self.h: Optional[int] = h
        self.shape = shape
        self.dtype = dtype
        self.after: Optional[List[_Owner]] = None

    def __del__(self, destroy: Any = _destroy_buffer) -> None:
        if self.h:
            destroy(self.h)
            self.h = None


def _owner_of(a: Any) -> Optional[_Owner]:
    """The _Owner behind an array this package returned (whole, unchanged view), or None."""
    base = getattr(a, "base", None)
    owner: Optional[_Owner] = getattr(base, "_cxla_owner", None) if base is not None else None
    if owner is not None and a.shape == owner.shape and a.dtype == owner.dtype and a.flags.c_contiguous:
        return owner
    return None


def _as_array(a: Any, spec: Spec) -> np.ndarray[Any, Any]:
    """Anything array-like as a numpy array (no copy for arrays, __array_interface__ objects and
    DLPack tensors on the CPU); Python scalars and lists take the parameter's dtype."""
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "__array_interface__") or hasattr(a, "__array__"):
        return np.asarray(a)
    if hasattr(a, "__dlpack__"):
        return np.from_dlpack(a)
    return np.asarray(a, dtype=spec.dtype if spec.elems is None else None)


def _data_pointer(a: np.ndarray[Any, Any]) -> int:
    # ml_dtypes' arrays (bf16, f8, int4) have no buffer-protocol format: their interface instead
    if a.flags.writeable and a.nbytes and a.dtype.kind != "V":
        # the fastest way to the address (numpy's stubs do not yet say arrays are buffers)
        return ctypes.addressof(_c_char.from_buffer(a))  # type: ignore[arg-type]
    return int(a.__array_interface__["data"][0])


class Executable:
    """A compiled module, called with one argument per ENTRY parameter. Arguments: numpy arrays
    or anything numpy can see without copying (__array_interface__, DLPack); C-contiguous,
    aligned ones are read where they are. Results: numpy arrays owning the memory cxla wrote,
    a tuple result as a Python tuple. Arguments in donate_argnums are consumed: an array this
    executable or another returned is handed over without a copy (its contents are then
    undefined and it is made read-only), any other array is copied once first.

    The compiled code is freed by close(), or at the end of a `with` block, or when the object
    is collected; results already returned stay valid, and a call after close() is a
    cxla.InvalidArgumentError. Do not close an executable while another thread calls it."""

    backend: str
    parameters: List[Spec]
    parameter_names: List[str]
    result: Spec
    donated: Tuple[int, ...]
    copies: Dict[str, int]
    cost: Dict[str, float]
    footprint: Dict[str, int]

    def __init__(self, hlo: HloSource, backend: str = "cpu", donate_argnums: Iterable[int] = (),
                 filename: Optional[str] = None, grad_wrt: Optional[Sequence[int]] = None,
                 keep_on_device: bool = False, **flags: FlagValue) -> None:
        self._h: Optional[int] = None
        self._keep = keep_on_device  # results as cxla.Buffers where they were computed
        self._ctx = _context(flags)
        self.backend = backend
        self._backend_c = backend.encode()
        m = _vp()
        ctx = self._ctx
        name = (filename or "<text>").encode()
        if isinstance(hlo, bytes):
            ctx.check(lib.cxla_module_parse(ctx.h, hlo, len(hlo), name, ctypes.byref(m)))
        elif isinstance(hlo, os.PathLike) or (isinstance(hlo, str) and "\n" not in hlo and "{" not in hlo):
            path = os.fspath(hlo)
            ctx.check(lib.cxla_module_parse_file(ctx.h, path.encode(), ctypes.byref(m)))
        else:
            text = str(hlo).encode()
            ctx.check(lib.cxla_module_parse(ctx.h, text, len(text), name, ctypes.byref(m)))
        if grad_wrt is not None:  # the module's gradient instead (cxla_module_grad, docs/grad.md)
            wrt = (ctypes.c_int * max(len(grad_wrt), 1))(*grad_wrt)
            g = _vp()
            code = lib.cxla_module_grad(m.value, wrt, len(grad_wrt), ctypes.byref(g))
            lib.cxla_module_destroy(m.value)
            ctx.check(code)
            m = g
        try:
            self._signature(m.value)
            donate = sorted(set(donate_argnums))
            for i in donate:
                if not 0 <= i < len(self.parameters):
                    raise InvalidArgumentError("donate_argnums: %d names no parameter (the module has %d)"
                                               % (i, len(self.parameters)))
            opts = _lib.CompileOptions()
            lib.cxla_compile_options_init(ctypes.byref(opts))
            opts.backend = self._backend_c
            donate_c = (ctypes.c_int * max(len(donate), 1))(*donate)
            opts.donate_params, opts.num_donate_params = donate_c, len(donate)
            e = _vp()
            ctx.check(lib.cxla_compile(m.value, ctypes.byref(opts), ctypes.byref(e)))
            self._h = e.value
        finally:
            lib.cxla_module_destroy(m.value)
        c, fp = _lib.Cost(), _lib.Footprint()
        ctx.check(lib.cxla_executable_cost(self._h, ctypes.byref(c)))
        ctx.check(lib.cxla_executable_footprint(self._h, ctypes.byref(fp)))
        # by XLA's HloCostAnalysis rules (cxla_executable_cost: the bytes the compiled kernels
        # move), under the names JAX's compiled.cost_analysis() uses
        self.cost = {"flops": c.flops, "transcendentals": c.transcendentals, "bytes accessed": c.bytes_accessed}
        # the memory an execution holds (cxla_executable_footprint), in bytes
        self.footprint = {name: getattr(fp, name) for name, _ in fp._fields_}
        self.donated = tuple(i for i in range(len(self.parameters)) if lib.cxla_executable_parameter_donated(self._h, i))
        self._donated = frozenset(self.donated)
        self._n = len(self.parameters)
        self._args_type = _lib.Arg * max(self._n, 1)
        self._plan = tuple((spec, i in self._donated) for i, spec in enumerate(self.parameters))
        self._template = self._args_type()
        for i, spec in enumerate(self.parameters):
            if spec.elems is None:
                t = self._template[i]
                t.nbytes, t.type, t.rank, t.dims = spec.nbytes, spec.code, len(spec.shape or ()), ctypes.addressof(spec.dims)
        self.copies = {"in": 0, "out": 0}  # copies this package had to make (see __call__)

    def _signature(self, m: Optional[int]) -> None:
        n = lib.cxla_module_num_parameters(m)
        if n < 0:
            raise VerifyError(self._ctx.message() or "the module has no ENTRY computation")
        self.parameters = []
        self.parameter_names = []
        for i in range(n):
            s = _lib.Shape()
            self._ctx.check(lib.cxla_module_parameter_shape(m, i, ctypes.byref(s)))
            self.parameters.append(Spec(types, s))
            self.parameter_names.append(lib.cxla_module_parameter_name(m, i).decode())
        s = _lib.Shape()
        self._ctx.check(lib.cxla_module_result_shape(m, ctypes.byref(s)))
        self.result = Spec(types, s)

    # ---- lifetime ----

    def close(self) -> None:
        """Frees the compiled code now. Idempotent; results already returned stay valid (their
        memory is their own); calling the executable afterwards is an InvalidArgumentError."""
        h, self._h = self._h, None
        if h:
            lib.cxla_executable_destroy(h)

    @property
    def closed(self) -> bool:
        """Whether close() has been called."""
        return not self._h

    def __enter__(self) -> Executable:
        self._handle()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self, destroy: Any = lib.cxla_executable_destroy) -> None:
        # the safety net: an executable nobody closed is freed when it is collected
        h = getattr(self, "_h", None)
        if h:
            self._h = None
            destroy(h)

    def _handle(self) -> int:
        h = self._h
        if not h:
            raise _closed()
        return h

    @property
    def compile_stats(self) -> str:
        """Compile phase times, "name=ms ..." (cxla_executable_compile_stats)."""
        return str(lib.cxla_executable_compile_stats(self._handle()).decode())

    @property
    def compile_counts(self) -> str:
        """What the compile made, "kernels=N ... cache=hit|miss|off"."""
        return str(lib.cxla_executable_compile_counts(self._handle()).decode())

    def __repr__(self) -> str:
        params = ", ".join("%s: %s" % (n, s) for n, s in zip(self.parameter_names, self.parameters))
        return "<cxla.Executable (%s) -> %s on %s%s>" % (params, self.result, self.backend,
                                                        ", closed" if self.closed else "")

    # ---- calls ----

    def __call__(self, *args: Any) -> Any:
        """Runs once: one argument per ENTRY parameter; returns a numpy array, a tuple of
        them for a tuple result (nested as the result is), or None for a token."""
        return self._run(args, False)

    def _run(self, args: Sequence[Any], convert: bool) -> Any:
        """One call: cxla_executable_execute_args with each array read where it lies.
        convert: give each array the parameter's dtype first (cxla.jit: jax's dtype rules have
        already decided it), instead of letting the library refuse another one."""
        h = self._h
        if not h:
            raise _closed()
        n = self._n
        if len(args) != n:
            raise InvalidArgumentError("expected %d argument%s (one per ENTRY parameter), got %d"
                                       % (n, "" if n == 1 else "s", len(args)))
        cargs = self._args_type.from_buffer_copy(self._template)  # each parameter's type, rank, dims, nbytes
        made: List[int] = []  # buffers made for this call, destroyed after it
        keep: List[Any] = []  # arrays whose memory this call reads
        donated: List[Tuple[_Owner, Any]] = []
        try:
            for i in range(n):
                a = args[i]
                spec, donate = self._plan[i]
                if type(a) is Buffer:  # in cxla's memory already (a GPU's: read there)
                    cargs[i].buffer = a._handle()
                    continue
                if not donate and type(a) is _ndarray and a.shape == spec.shape and a.dtype == spec.dtype:
                    fl = a.flags
                    if fl.c_contiguous and fl.aligned and fl.writeable and spec.nbytes:  # the common case
                        cargs[i].data = _data_pointer(a)
                        continue
                owner = _owner_of(a) if donate else None
                if owner is not None:
                    cargs[i].buffer = owner.h  # cxla's own memory: donated without a copy
                    donated.append((owner, a))
                elif spec.elems is not None:
                    cargs[i].buffer = self._tuple_argument(a, spec, made)
                elif spec.code == _TOKEN:
                    cargs[i].buffer = self._token_argument(made)
                else:
                    self._array_argument(a, spec, cargs[i], donate, made, keep, convert)
            r = _vp()
            code = _execute_args(h, n, cargs, ctypes.byref(r))
        finally:
            for h in made:
                _destroy_buffer(h)
        if code:
            self._ctx.fail(code)
        owners: List[_Owner] = []
        out = self._result(r.value, self.result, owners)
        for owner, a in donated:
            owner.after = owners  # its memory may now hold one of these results
            try:
                a.flags.writeable = False
            except ValueError:
                pass
        return out

    def _token_argument(self, made: List[int]) -> int:
        """A token parameter's buffer (a token carries no value: whatever the argument is)."""
        lit = lib.cxla_literal_token(self._ctx.h)
        if not lit:
            raise OutOfMemoryError("out of memory")
        h = _vp()
        try:
            self._ctx.check(lib.cxla_buffer_from_literal(self._ctx.h, self._backend_c, lit, ctypes.byref(h)))
        finally:
            lib.cxla_literal_destroy(lit)
        made.append(h.value)
        return int(h.value)

    def _array_argument(self, a: Any, spec: Spec, d: Any, donate: bool, made: List[int], keep: List[Any],
                        convert: bool) -> None:
        """Fills d with the array (read in place when C-contiguous and aligned), or with a buffer
        cxla owns when the parameter is donated."""
        if type(a) is not np.ndarray:
            a = _as_array(a, spec)
        if convert and a.dtype != spec.dtype and spec.dtype is not None:
            a = a.astype(spec.dtype)
            self.copies["in"] += 1
        code = types.of_numpy.get(a.dtype)
        if code is None:
            raise InvalidArgumentError("numpy dtype %s has no cxla element type (parameter type %s)"
                                       % (a.dtype, spec.name))
        flags = a.flags
        if not (flags.c_contiguous and flags.aligned):
            a = np.array(a, order="C")  # a fresh, aligned, contiguous copy
            self.copies["in"] += 1
        keep.append(a)
        shape = a.shape
        if shape == spec.shape:
            dims: Any = spec.dims
        else:  # the library names the mismatch
            dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
            keep.append(dims)
        if donate:  # donation consumes the buffer: it must be memory cxla owns
            h = _vp()
            self._ctx.check(lib.cxla_buffer_from_data(self._ctx.h, self._backend_c, code, len(shape), dims,
                                                      _data_pointer(a), a.nbytes, ctypes.byref(h)))
            made.append(h.value or 0)
            self.copies["in"] += 1
            d.buffer = h.value
            return
        d.data = _data_pointer(a)
        d.nbytes = a.nbytes
        d.type = code
        d.rank = len(shape)
        d.dims = ctypes.addressof(dims)

    def _tuple_argument(self, a: Any, spec: Spec, made: List[int]) -> int:
        """A tuple parameter (rare: jax never makes one) goes through a literal: two copies."""
        n = len(spec.elems or ())
        if not isinstance(a, (tuple, list)) or len(a) != n:
            raise InvalidArgumentError("parameter of shape %s takes a tuple of %d values" % (spec, n))
        lit = self._literal(a, spec)
        h = _vp()
        code = lib.cxla_buffer_from_literal(self._ctx.h, self._backend_c, lit, ctypes.byref(h))
        lib.cxla_literal_destroy(lit)
        self._ctx.check(code)
        self.copies["in"] += 2
        made.append(h.value or 0)
        return h.value or 0

    def _literal(self, a: Any, spec: Spec) -> int:
        if spec.elems is None:
            a = np.asarray(_as_array(a, spec), order="C")  # (ascontiguousarray makes a scalar 1-d)
            code = types.code_of(a.dtype)
            if code is None:
                raise InvalidArgumentError("numpy dtype %s has no cxla element type" % a.dtype)
            dims = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
            lit = lib.cxla_literal_from_data(self._ctx.h, code, a.ndim, dims, _data_pointer(a), a.nbytes)
        else:
            parts: List[int] = []
            try:
                for x, s in zip(a, spec.elems):
                    parts.append(self._literal(x, s))
            except BaseException:
                for p in parts:
                    lib.cxla_literal_destroy(p)
                raise
            lit = lib.cxla_literal_tuple(self._ctx.h, len(parts), (_vp * max(len(parts), 1))(*parts))  # takes parts
        if not lit:
            self._ctx.fail(Status.INVALID_ARGUMENT)
        return int(lit)

    def _result(self, h: Optional[int], spec: Spec, owners: List[_Owner]) -> Any:
        if spec.elems is not None:
            n = len(spec.elems)
            elems = (_vp * max(n, 1))()
            code = lib.cxla_buffer_untuple(h, n, elems)
            _destroy_buffer(h)  # the emptied tuple
            self._ctx.check(code)
            return tuple(self._result(elems[i], spec.elems[i], owners) for i in range(n))
        if self._keep and (spec.dtype is not None or spec.name == "bf16"):
            return Buffer(h or 0, self._ctx, spec)
        if spec.dtype is None:
            if spec.name != "bf16":  # a token: no value to return
                _destroy_buffer(h)
                return None
            bits = np.ctypeslib.as_array(ctypes.cast(_buffer_data(h), ctypes.POINTER(ctypes.c_uint16)), (spec.nbytes // 2,))
            out = (bits.astype(np.uint32) << 16).view(np.float32).reshape(spec.shape or ())  # exact widening: a copy
            _destroy_buffer(h)
            self.copies["out"] += 1
            return out
        owner = _Owner(h or 0, spec.shape or (), spec.dtype)
        owners.append(owner)
        mem = spec.cbuf.from_address(_buffer_data(h))
        mem._cxla_owner = owner
        return np.ndarray(spec.shape or (), spec.dtype, mem)


def _closed() -> InvalidArgumentError:
    return InvalidArgumentError("cxla.Executable: used after close()")


def has_grad() -> bool:
    """Whether the loaded library differentiates modules (cxla_module_grad)."""
    return hasattr(lib, "cxla_module_grad")


def compile(hlo: HloSource, backend: str = "cpu", donate_argnums: Iterable[int] = (), filename: Optional[str] = None,
            keep_on_device: bool = False, **flags: FlagValue) -> Executable:
    """Compiles HLO text (str or bytes), a StableHLO portable artifact (bytes starting with MLIR
    bytecode's magic b"ML\\xefR", as jax.export(...).mlir_module_serialized holds it) or a file
    of either (a path) for `backend` ("cpu" or "interp").
    flags are cxla flags (docs/flags.md) with _ for -: threads=2, fusion=False, opt_level=3,
    dump_to="dir". filename names text in error messages (default "<text>"). Returns an
    Executable (close() it, or use it in a `with` block, to free it before it is collected);
    errors raise a subclass of cxla.Error (cxla.ParseError, ...) with the library's message.
    keep_on_device=True: results are cxla.Buffers left where they were computed (on a GPU
    backend, in the GPU's memory) instead of numpy arrays; any executable takes Buffers as
    arguments."""
    return Executable(hlo, backend, tuple(donate_argnums), filename, None, keep_on_device, **flags)
