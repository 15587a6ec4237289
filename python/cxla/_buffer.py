"""cxla.Buffer: an array that stays in a backend's memory — on a GPU backend, in the GPU's —
between calls, so a training loop keeps its weights and optimizer state on the device and only
its batches travel. cxla.device_put copies a numpy array in; np.asarray(buffer) copies it out;
an Executable made with keep_on_device=True returns Buffers; any Executable takes them as
arguments (read in place on their own device, a donated one consumed)."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import ctypes

import numpy as np

from . import _lib
from ._errors import InvalidArgumentError, Status
from ._types import Spec

_vp = ctypes.c_void_p


def _need(lib: Any, name: str) -> Any:
    fn = getattr(lib, name, None)
    if fn is None:
        raise InvalidArgumentError("the loaded cxla library has no %s (an older library: rebuild cxla)" % name)
    return fn


class Buffer:
    """An array in cxla's memory: `memory` says where ("host", "gpu", "gpu-emu"). `shape` and
    `dtype` as numpy's. np.asarray(b) (or b.to_numpy()) is a copy on the host; b.copy_to(backend)
    a copy in another backend's memory. A Buffer donated to a call is consumed: using it again
    is a cxla.InvalidArgumentError."""

    __slots__ = ("_h", "_ctx", "_spec", "__weakref__")

    def __init__(self, h: int, ctx: Any, spec: Spec) -> None:
        self._h: Optional[int] = h
        self._ctx = ctx  # keeps the context (and its device) alive as long as the buffer
        self._spec = spec

    @property
    def shape(self) -> Tuple[int, ...]:
        return self._spec.shape or ()

    @property
    def dtype(self) -> Any:
        return self._spec.dtype

    @property
    def memory(self) -> Optional[str]:
        """Where the value is, or None once donated or deleted."""
        from ._core import lib
        if not self._h:
            return None
        m = _need(lib, "cxla_buffer_memory")(self._h)
        return m.decode() if m else None

    def _handle(self) -> int:
        if not self._h:
            raise InvalidArgumentError("cxla.Buffer: used after delete()")
        return self._h

    def to_numpy(self) -> np.ndarray[Any, Any]:
        """A copy on the host (the first read of a GPU buffer copies it from the device)."""
        from ._core import lib
        spec = self._spec
        h = self._handle()
        if self.memory is None:
            raise InvalidArgumentError("cxla.Buffer: holds no value (it was donated to a call)")
        p = lib.cxla_buffer_data(h)
        if not p and spec.nbytes:
            self._ctx.fail(int(Status.DEVICE))  # the copy from the device failed: the message says why
        data = np.ctypeslib.as_array(ctypes.cast(p, ctypes.POINTER(ctypes.c_uint8)), (spec.nbytes,)).copy() \
            if spec.nbytes else np.zeros(0, np.uint8)
        if spec.dtype is None:  # bf16 without ml_dtypes: widened to f32, exactly
            return (data.view(np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(spec.shape or ())
        return data.view(spec.dtype).reshape(spec.shape or ()).copy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        a = self.to_numpy()
        return a if dtype is None else a.astype(dtype)

    def copy_to(self, backend: str) -> Buffer:
        """A copy in `backend`'s memory (to or from a GPU, or within one)."""
        from ._core import lib
        out = _vp()
        self._ctx.check(_need(lib, "cxla_buffer_copy_to")(self._handle(), backend.encode(), ctypes.byref(out)))
        return Buffer(out.value or 0, self._ctx, self._spec)

    def delete(self) -> None:
        """Frees the memory now (on a GPU, back to the context's cache)."""
        from ._core import lib
        if self._h:
            lib.cxla_buffer_destroy(self._h)
            self._h = None

    def __del__(self) -> None:
        try:
            self.delete()
        except Exception:  # interpreter shutdown
            pass

    def __repr__(self) -> str:
        return "cxla.Buffer(shape=%s, dtype=%s, memory=%s)" % (self.shape, self.dtype, self.memory)


def device_put(a: Any, backend: str = "gpu", **flags: Any) -> Buffer:
    """A copy of the array in backend's memory (a GPU's for "gpu" and "gpu-emu"). Give it the
    flags of the Executables it goes to: buffers and executables of one set of flags share a
    context, and so a device and its memory cache."""
    from ._core import _context, lib, types
    a = np.ascontiguousarray(a)
    code = types.code_of(a.dtype)
    if code is None:
        raise InvalidArgumentError("numpy dtype %s has no cxla element type" % a.dtype)
    ctx = _context(flags)
    dims = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
    out = _vp()
    ctx.check(lib.cxla_buffer_from_data(ctx.h, backend.encode(), code, a.ndim, dims,
                                        a.ctypes.data if a.nbytes else None, a.nbytes, ctypes.byref(out)))
    c_shape = _lib.Shape(type=code, rank=a.ndim, dims=dims)
    return Buffer(out.value or 0, ctx, Spec(types, c_shape))


def memory_stats(backend: str = "gpu", **flags: Any) -> Dict[str, int]:
    """The device memory of the context these flags select, for a GPU backend: bytes in use, its
    peak, bytes cached for reuse, and the driver's allocations and frees so far."""
    from ._core import _context, lib
    ctx = _context(flags)
    st = _lib.MemoryStats()
    ctx.check(_need(lib, "cxla_context_memory_stats")(ctx.h, backend.encode(), ctypes.byref(st)))
    return {name: int(getattr(st, name)) for name, _ in _lib.MemoryStats._fields_}
