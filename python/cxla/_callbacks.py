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


def _unregister(cid: int) -> None:
    _registry.pop(cid, None)
    _plans.pop(cid, None)


def register(fn: Callable[..., Sequence[Any]], name: str = "") -> Handle:
    """Registers fn under a new process-wide id; it stays registered while the handle lives."""
    with _lock:
        cid = next(_ids)
        _registry[cid] = (fn, name or getattr(fn, "__name__", "callback"))
    h = Handle(cid)
    weakref.finalize(h, _unregister, cid)
    return h


def _write(buf: int, size: int, text: str) -> None:
    data = text.encode("utf-8", "replace")[: max(size - 1, 0)]
    ctypes.memmove(buf, data + b"\0", len(data) + 1)


_types_cache: List[Any] = []


def _types() -> Any:
    if not _types_cache:
        from ._core import types
        _types_cache.append(types)
    return _types_cache[0]


# What a callback's operands and results are, per id (they never change: one id is one
# instruction's callable), worked out on its first call: None for a token, else (the ctypes
# type of its bytes, dtype, shape, bytes).
_Leaf = Any
_plans: Dict[int, Tuple[List[_Leaf], List[_Leaf]]] = {}


def _leaf(v: HostValue, types: Any, what: str) -> _Leaf:
    if v.type == types.code.get("token"):
        return None
    dtype = types.numpy.get(v.type)
    if dtype is None:
        raise TypeError("a %s %s, which numpy has no dtype for" % (types.name.get(v.type, "?"), what))
    return (ctypes.c_char * v.nbytes, dtype, tuple(v.dims[:v.rank]), v.nbytes)


def _plan(cid: int, nargs: int, args: Any, nres: int, results: Any) -> Tuple[List[_Leaf], List[_Leaf]]:
    plan = _plans.get(cid)
    if plan is None or len(plan[0]) != nargs or len(plan[1]) != nres:
        types = _types()
        plan = ([_leaf(args[i], types, "operand") for i in range(nargs)],
                [_leaf(results[i], types, "result") for i in range(nres)])
        _plans[cid] = plan
    return plan


def _call(user: Any, cid: int, nargs: int, args: Any, nres: int, results: Any, err: int, errlen: int) -> int:
    entry = None
    try:
        entry = _registry.get(cid)
        if entry is None:
            raise KeyError("callback_id %d is not registered (its executable's lowering was freed)" % cid)
        ins, outs_plan = _plan(cid, nargs, args, nres, results)
        vals = []
        for i, leaf in enumerate(ins):  # copies: the memory is cxla's for this call only
            vals.append(None if leaf is None else
                        np.frombuffer(leaf[0].from_address(args[i].data), leaf[1]).reshape(leaf[2]).copy()
                        if leaf[3] else np.zeros(leaf[2], leaf[1]))
        outs = entry[0](*vals)
        outs = list(outs) if outs is not None else []
        if len(outs) != nres:
            raise TypeError("the callback returned %d values for %d results" % (len(outs), nres))
        for i, leaf in enumerate(outs_plan):
            if leaf is None:
                continue
            arr = np.asarray(outs[i])
            if arr.dtype != leaf[1] or arr.shape != leaf[2]:
                raise TypeError("result %d: expected %s%s, got %s%s" % (i, leaf[1], list(leaf[2]), arr.dtype,
                                                                       list(arr.shape)))
            if leaf[3]:
                np.frombuffer(leaf[0].from_address(results[i].data), leaf[1]).reshape(leaf[2])[...] = arr
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
