"""cxla.compile and the executables it returns: numpy arrays in without copies (wrapped where
they lie when C-contiguous and aligned), results out without copies (numpy arrays over the
memory the execution wrote, which they own), donation, tuples, errors as cxla.Error."""
import ctypes
import os
import threading

import numpy as np

from . import _lib
from ._types import Spec, Types

lib, library_path = _lib.load()
types = Types(lib)
_vp = ctypes.c_void_p
_c_char = ctypes.c_char
_destroy_buffer = lib.cxla_buffer_destroy
_buffer_data = lib.cxla_buffer_data
_execute_args = lib.cxla_executable_execute_args
_ndarray = np.ndarray
_addressof = ctypes.addressof


class Error(Exception):
    """An error from cxla: the library's message (file:line:col first for text it could not
    parse), and `status`, its kind ("parse error", "invalid argument", ...)."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def _status_name(code):
    s = lib.cxla_status_str(code)
    return s.decode() if s else "status %d" % code


class _Context:
    """A cxla context with one set of flags; executables keep theirs alive."""

    def __init__(self, flags):
        h = _vp()
        code = lib.cxla_context_create(ctypes.byref(h))
        self.h = h.value
        if not self.h:
            raise MemoryError("cxla: out of memory creating a context")
        if code:
            self.fail(code)  # CXLA_FLAGS is bad
        if flags and lib.cxla_context_set_flags(self.h, flags.encode()) != 0:
            self.fail(1)

    def message(self):
        return lib.cxla_context_errmsg(self.h).decode(errors="replace")

    def fail(self, code):
        raise Error(self.message(), _status_name(code))

    def check(self, code):
        if code:
            self.fail(code)

    def __del__(self, destroy=lib.cxla_context_destroy):
        if getattr(self, "h", None):
            destroy(self.h)
            self.h = None


_contexts = {}
_contexts_lock = threading.Lock()


def _flag_string(flags):
    """compile(..., threads=2, fusion=False) -> "--fusion=off --threads=2" (docs/flags.md)."""
    out = []
    for k in sorted(flags):
        v = flags[k]
        if isinstance(v, bool):
            v = "on" if v else "off"
        out.append("--%s=%s" % (k.replace("_", "-"), v))
    return " ".join(out)


def _context(flags):
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

    def __init__(self, h, shape, dtype):
        self.h = h
        self.shape = shape
        self.dtype = dtype
        self.after = None

    def __del__(self, destroy=_destroy_buffer):
        if self.h:
            destroy(self.h)
            self.h = None


def _owner_of(a):
    """The _Owner behind an array this package returned (whole, unchanged view), or None."""
    base = getattr(a, "base", None)
    owner = getattr(base, "_cxla_owner", None) if base is not None else None
    if owner is not None and a.shape == owner.shape and a.dtype == owner.dtype and a.flags.c_contiguous:
        return owner
    return None


def _as_array(a, spec):
    """Anything array-like as a numpy array (no copy for arrays, __array_interface__ objects and
    DLPack tensors on the CPU); Python scalars and lists take the parameter's dtype."""
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "__array_interface__") or hasattr(a, "__array__"):
        return np.asarray(a)
    if hasattr(a, "__dlpack__"):
        return np.from_dlpack(a)
    return np.asarray(a, dtype=spec.dtype if spec.elems is None else None)


def _data_pointer(a):
    # ml_dtypes' arrays (bf16, f8, int4) have no buffer-protocol format: their interface instead
    if a.flags.writeable and a.nbytes and a.dtype.kind != "V":
        return ctypes.addressof(_c_char.from_buffer(a))  # the fastest way to the address
    return a.__array_interface__["data"][0]


class Executable:
    """A compiled module, called with one argument per ENTRY parameter. Arguments: numpy arrays
    or anything numpy can see without copying (__array_interface__, DLPack); C-contiguous,
    aligned ones are read where they are. Results: numpy arrays owning the memory cxla wrote,
    a tuple result as a Python tuple. Arguments in donate_argnums are consumed: an array this
    executable or another returned is handed over without a copy (its contents are then
    undefined and it is made read-only), any other array is copied once first."""

    def __init__(self, hlo, backend="cpu", donate_argnums=(), filename=None, grad_wrt=None, **flags):
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
            text = hlo.encode()
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
            donate = 0
            for i in donate_argnums:
                if not 0 <= i < min(len(self.parameters), 64):
                    raise Error("donate_argnums: %d names no parameter (the module has %d)" % (i, len(self.parameters)),
                                "invalid argument")
                donate |= 1 << i
            opts = _lib.CompileOptions()
            lib.cxla_compile_options_init(ctypes.byref(opts))
            opts.backend = self._backend_c
            opts.donate = donate
            e = _vp()
            ctx.check(lib.cxla_compile(m.value, ctypes.byref(opts), ctypes.byref(e)))
            self._h = e.value
        finally:
            lib.cxla_module_destroy(m.value)
        mask = lib.cxla_executable_donated_parameters(self._h)
        self.donated = tuple(i for i in range(len(self.parameters)) if mask >> i & 1)
        self._donated = frozenset(self.donated)
        self._n = len(self.parameters)
        self._args_type = _lib.Arg * max(self._n, 1)
        self._plan = tuple((spec, i in self._donated) for i, spec in enumerate(self.parameters))
        self._template = self._args_type()
        for i, spec in enumerate(self.parameters):
            if spec.elems is None:
                t = self._template[i]
                t.nbytes, t.type, t.rank, t.dims = spec.nbytes, spec.code, len(spec.shape), ctypes.addressof(spec.dims)
        self.copies = {"in": 0, "out": 0}  # copies this package had to make (see __call__)

    def _signature(self, m):
        n = lib.cxla_module_num_parameters(m)
        if n < 0:
            raise Error(self._ctx.message() or "the module has no ENTRY computation", "verify error")
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

    def __del__(self, destroy=lib.cxla_executable_destroy):
        if getattr(self, "_h", None):
            destroy(self._h)
            self._h = None

    @property
    def compile_stats(self):
        """Compile phase times, "name=ms ..." (cxla_executable_compile_stats)."""
        return lib.cxla_executable_compile_stats(self._h).decode()

    @property
    def compile_counts(self):
        """What the compile made, "kernels=N ... cache=hit|miss|off"."""
        return lib.cxla_executable_compile_counts(self._h).decode()

    def __repr__(self):
        params = ", ".join("%s: %s" % (n, s) for n, s in zip(self.parameter_names, self.parameters))
        return "<cxla.Executable (%s) -> %s on %s>" % (params, self.result, self.backend)

    # ---- calls ----

    def __call__(self, *args):
        return self._run(args, False)

    def _run(self, args, convert):
        """One call: cxla_executable_execute_args with each array read where it lies.
        convert: give each array the parameter's dtype first (cxla.jit: jax's dtype rules have
        already decided it), instead of letting the library refuse another one."""
        n = self._n
        if len(args) != n:
            raise Error("expected %d argument%s (one per ENTRY parameter), got %d" % (n, "" if n == 1 else "s", len(args)),
                        "invalid argument")
        cargs = self._args_type.from_buffer_copy(self._template)  # each parameter's type, rank, dims, nbytes
        made = []  # buffers made for this call, destroyed after it
        keep = []  # arrays whose memory this call reads
        donated = []
        try:
            for i in range(n):
                a = args[i]
                spec, donate = self._plan[i]
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
                else:
                    self._array_argument(a, spec, cargs[i], donate, made, keep, convert)
            r = _vp()
            code = _execute_args(self._h, n, cargs, ctypes.byref(r))
        finally:
            for h in made:
                _destroy_buffer(h)
        if code:
            self._ctx.fail(code)
        owners = []
        out = self._result(r.value, self.result, owners)
        for owner, a in donated:
            owner.after = owners  # its memory may now hold one of these results
            try:
                a.flags.writeable = False
            except ValueError:
                pass
        return out

    def _array_argument(self, a, spec, d, donate, made, keep, convert):
        """Fills d with the array (read in place when C-contiguous and aligned), or with a buffer
        cxla owns when the parameter is donated."""
        if type(a) is not np.ndarray:
            a = _as_array(a, spec)
        if convert and a.dtype != spec.dtype and spec.dtype is not None:
            a = a.astype(spec.dtype)
            self.copies["in"] += 1
        code = types.of_numpy.get(a.dtype)
        if code is None:
            raise Error("numpy dtype %s has no cxla element type (parameter type %s)" % (a.dtype, spec.name),
                        "invalid argument")
        flags = a.flags
        if not (flags.c_contiguous and flags.aligned):
            a = np.array(a, order="C")  # a fresh, aligned, contiguous copy
            self.copies["in"] += 1
        keep.append(a)
        shape = a.shape
        if shape == spec.shape:
            dims = spec.dims
        else:  # the library names the mismatch
            dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
            keep.append(dims)
        if donate:  # donation consumes the buffer: it must be memory cxla owns
            h = _vp()
            self._ctx.check(lib.cxla_buffer_from_data(self._ctx.h, self._backend_c, code, len(shape), dims,
                                                      _data_pointer(a), a.nbytes, ctypes.byref(h)))
            made.append(h.value)
            self.copies["in"] += 1
            d.buffer = h.value
            return
        d.data = _data_pointer(a)
        d.nbytes = a.nbytes
        d.type = code
        d.rank = len(shape)
        d.dims = ctypes.addressof(dims)

    def _tuple_argument(self, a, spec, made):
        """A tuple parameter (rare: jax never makes one) goes through a literal: two copies."""
        if not isinstance(a, (tuple, list)) or len(a) != len(spec.elems):
            raise Error("parameter of shape %s takes a tuple of %d values" % (spec, len(spec.elems)), "invalid argument")
        lit = self._literal(a, spec)
        h = _vp()
        code = lib.cxla_buffer_from_literal(self._ctx.h, self._backend_c, lit, ctypes.byref(h))
        lib.cxla_literal_destroy(lit)
        self._ctx.check(code)
        self.copies["in"] += 2
        made.append(h.value)
        return h.value

    def _literal(self, a, spec):
        if spec.elems is None:
            a = np.asarray(_as_array(a, spec), order="C")  # (ascontiguousarray makes a scalar 1-d)
            code = types.code_of(a.dtype)
            if code is None:
                raise Error("numpy dtype %s has no cxla element type" % a.dtype, "invalid argument")
            dims = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
            lit = lib.cxla_literal_from_data(self._ctx.h, code, a.ndim, dims, _data_pointer(a), a.nbytes)
        else:
            parts = []
            try:
                for x, s in zip(a, spec.elems):
                    parts.append(self._literal(x, s))
            except BaseException:
                for p in parts:
                    lib.cxla_literal_destroy(p)
                raise
            lit = lib.cxla_literal_tuple(self._ctx.h, len(parts), (_vp * max(len(parts), 1))(*parts))  # takes parts
        if not lit:
            self._ctx.fail(1)
        return lit

    def _result(self, h, spec, owners):
        if spec.elems is not None:
            n = len(spec.elems)
            elems = (_vp * max(n, 1))()
            code = lib.cxla_buffer_untuple(h, n, elems)
            _destroy_buffer(h)  # the emptied tuple
            self._ctx.check(code)
            return tuple(self._result(elems[i], spec.elems[i], owners) for i in range(n))
        if spec.dtype is None:
            if spec.name != "bf16":  # a token: no value to return
                _destroy_buffer(h)
                return None
            bits = np.ctypeslib.as_array(ctypes.cast(_buffer_data(h), ctypes.POINTER(ctypes.c_uint16)), (spec.nbytes // 2,))
            out = (bits.astype(np.uint32) << 16).view(np.float32).reshape(spec.shape)  # exact widening: a copy
            _destroy_buffer(h)
            self.copies["out"] += 1
            return out
        owner = _Owner(h, spec.shape, spec.dtype)
        owners.append(owner)
        mem = spec.cbuf.from_address(_buffer_data(h))
        mem._cxla_owner = owner
        return np.ndarray(spec.shape, spec.dtype, mem)


def has_grad():
    """Whether the loaded library differentiates modules (cxla_module_grad)."""
    return hasattr(lib, "cxla_module_grad")


def compile(hlo, backend="cpu", donate_argnums=(), filename=None, **flags):
    """Compiles HLO text (str or bytes), a StableHLO portable artifact (bytes starting with MLIR
    bytecode's magic b"ML\\xefR", as jax.export(...).mlir_module_serialized holds it) or a file
    of either (a path) for `backend` ("cpu" or "interp").
    flags are cxla flags (docs/flags.md) with _ for -: threads=2, fusion=False, opt_level=3,
    dump_to="dir". filename names text in error messages (default "<text>"). Returns an
    Executable; errors raise cxla.Error with the library's message."""
    return Executable(hlo, backend=backend, donate_argnums=tuple(donate_argnums), filename=filename, **flags)
