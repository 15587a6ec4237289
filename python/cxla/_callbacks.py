"""Host callbacks: the Python side of cxla_host_callbacks_set (include/cxla.h).

A program calls back into this process through the custom-call "cxla_host_callback" with
backend_config {callback_id = N : ui64}; N is a key of this module's registry, which keeps the
callable alive while a handle for it lives (JAX's lowering keeps the handle with the executable).
One dispatcher, made here once, serves the process: libcxla (cxla.jit, cxla.compile) gets it from
install(), the PJRT plugin (which links its own copy of cxla) through its client's create option
"cxla_host_callbacks", the address of the same struct (struct_address()).

A callable takes one argument per operand (None for a token) and returns one value per result
(anything for a token): JAX's wrapped callbacks have that form already. An exception becomes the
callback's error message, so the execution fails with cxla.ExecutionError (or JAX's runtime
error through the plugin) instead of crashing.
"""
from __future__ import annotations

import ctypes
import itertools
import re
import threading
import traceback
import weakref
from typing import Any, Callable, Dict, List, Sequence, Tuple

import numpy as np


class HostValue(ctypes.Structure):
    """cxla_host_value."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("rank", ctypes.c_int),
        ("dims", ctypes.POINTER(ctypes.c_int64)),
        ("data", ctypes.c_void_p),
        ("nbytes", ctypes.c_size_t),
    ]


_CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.POINTER(HostValue),
                         ctypes.c_int, ctypes.POINTER(HostValue), ctypes.c_void_p, ctypes.c_size_t)
_LOOKUP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t)


class HostCallbacks(ctypes.Structure):
    """cxla_host_callbacks."""

    _fields_ = [("call", _CALL), ("lookup", _LOOKUP), ("user", ctypes.c_void_p)]


_lock = threading.Lock()
_ids = itertools.count(1)
_registry: Dict[int, Tuple[Callable[..., Sequence[Any]], str]] = {}


class Handle:
    """Keeps callback `id` registered while it lives."""

    __slots__ = ("id", "__weakref__")

    def __init__(self, cid: int) -> None:
        self.id = cid


def register(fn: Callable[..., Sequence[Any]], name: str = "") -> Handle:
    """Registers fn under a new process-wide id; it stays registered while the handle lives."""
    with _lock:
        cid = next(_ids)
        _registry[cid] = (fn, name or getattr(fn, "__name__", "callback"))
    h = Handle(cid)
    weakref.finalize(h, _registry.pop, cid, None)
    return h


def _write(buf: int, size: int, text: str) -> None:
    data = text.encode("utf-8", "replace")[: max(size - 1, 0)]
    ctypes.memmove(buf, data + b"\0", len(data) + 1)


def _types() -> Any:
    from ._core import types
    return types


def _operand(v: HostValue, types: Any) -> Any:
    if v.type == types.code.get("token"):
        return None
    dtype = types.numpy.get(v.type)
    if dtype is None:
        raise TypeError("a %s operand, which numpy has no dtype for" % types.name.get(v.type, "?"))
    shape = tuple(v.dims[i] for i in range(v.rank))
    if v.nbytes == 0:
        return np.zeros(shape, dtype)
    raw = (ctypes.c_char * v.nbytes).from_address(v.data)
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()  # the memory is cxla's for this call only


def _result(i: int, value: Any, r: HostValue, types: Any) -> None:
    if r.type == types.code.get("token"):
        return
    dtype = types.numpy.get(r.type)
    shape = tuple(r.dims[k] for k in range(r.rank))
    arr = np.asarray(value)
    if dtype is None or arr.dtype != dtype or arr.shape != shape:
        raise TypeError("result %d: expected %s[%s], got %s%s" % (i, types.name.get(r.type, "?"),
                        ",".join(map(str, shape)), arr.dtype, list(arr.shape)))
    arr = np.ascontiguousarray(arr)
    if r.nbytes:
        ctypes.memmove(r.data, arr.ctypes.data, r.nbytes)


def _call(user: Any, cid: int, nargs: int, args: Any, nres: int, results: Any, err: int, errlen: int) -> int:
    entry = None
    try:
        entry = _registry.get(cid)
        if entry is None:
            raise KeyError("callback_id %d is not registered (its executable's lowering was freed)" % cid)
        types = _types()
        outs = entry[0](*[_operand(args[i], types) for i in range(nargs)])
        outs = list(outs) if outs is not None else []
        if len(outs) != nres:
            raise TypeError("the callback returned %d values for %d results" % (len(outs), nres))
        for i in range(nres):
            _result(i, outs[i], results[i], types)
        return 0
    except BaseException as e:  # a failure is the execution's error, never an escape into C
        name = entry[1] if entry is not None else "?"
        tb = "".join(traceback.format_exception_only(type(e), e)).strip()
        _write(err, errlen, "callback %s raised %s" % (name, tb))
        return 1


def _lookup(user: Any, cid: int, name: int, namelen: int) -> int:
    entry = _registry.get(cid)
    if entry is not None:
        _write(name, namelen, entry[1])
    return 1 if entry is not None else 0


_struct = HostCallbacks(_CALL(_call), _LOOKUP(_lookup), None)
_installed = False


def struct_address() -> int:
    """The address of this process's cxla_host_callbacks struct (for the PJRT plugin)."""
    return ctypes.addressof(_struct)


def install(lib: Any) -> None:
    """Makes this module libcxla's dispatcher (once per process)."""
    global _installed
    with _lock:
        if not _installed:
            lib.cxla_host_callbacks_set(ctypes.addressof(_struct))
            _installed = True


_JAX_CPU_TARGET = 'custom_call_target="xla_ffi_python_cpu_callback"'
_INDEX = re.compile(r"backend_config=\{index = (\d+) : ui64\}")
_NAME = re.compile(r"^\s*(?:ROOT\s+)?([^\s=]+)\s*=")


def for_cxla(text: str, callbacks: Sequence[Callable[..., Sequence[Any]]]) -> Tuple[str, List[Handle]]:
    """HLO text JAX lowered for its CPU with host callbacks (custom-calls to
    xla_ffi_python_cpu_callback, index= their position in `callbacks`, the lowering's
    host_callbacks), with each turned into cxla_host_callback of a registered id; and the
    handles that keep them registered. A call whose index names no callable is left as it is,
    for the compile to refuse by name."""
    handles = [register(cb) for cb in callbacks]
    lines = text.split("\n")
    for k, line in enumerate(lines):
        if _JAX_CPU_TARGET not in line:
            continue
        m = _INDEX.search(line)
        if not m or int(m.group(1)) >= len(handles):
            continue
        h = handles[int(m.group(1))]
        name = _NAME.match(line)
        if name:
            _registry[h.id] = (_registry[h.id][0], name.group(1))
        line = line[:m.start()] + "backend_config={callback_id = %d : ui64}" % h.id + line[m.end():]
        lines[k] = line.replace(_JAX_CPU_TARGET, 'custom_call_target="cxla_host_callback"')
    return "\n".join(lines), handles
