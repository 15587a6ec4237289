"""Finding and loading libcxla, and the ctypes prototypes of the calls this package uses.

Where the library is looked for, in order:
  1. $CXLA_LIBRARY (a path to libcxla.so*), and nowhere else when it is set;
  2. the build folder of the source tree this package sits in or was installed from
     ($CXLA_BUILD, default build/);
  3. the system's loader (an installed libcxla.so.MAJOR: `make install` runs ldconfig);
  4. pkg-config's libdir for cxla (an install under a prefix the loader does not search).
Enum values and names (element types, status codes) are asked of the library itself, so only
the structs below mirror cxla.h by hand (tests/python/test_layout.py checks their layout
against the header, compiled).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import subprocess
from typing import Any, Dict, Iterator, List, Optional, Tuple

vp = ctypes.c_void_p
c_int = ctypes.c_int
c_size = ctypes.c_size_t
c_str = ctypes.c_char_p
P = ctypes.POINTER


class Shape(ctypes.Structure):
    """cxla_shape."""


Shape._fields_ = [
    ("type", c_int),
    ("rank", c_int),
    ("dims", P(ctypes.c_int64)),
    ("ntuple", c_int),
    ("elems", P(Shape)),
]


class MemoryStats(ctypes.Structure):
    """cxla_memory_stats."""

    _fields_ = [(name, ctypes.c_int64) for name in ("in_use", "peak_in_use", "cached", "driver_allocs", "driver_frees",
                                                    "pinned", "pinned_allocs", "pinned_hits", "staged_bytes",
                                                    "direct_bytes", "upload_waits")]


class CompileOptions(ctypes.Structure):
    """cxla_compile_options."""

    _fields_ = [
        ("backend", c_str),
        ("opt_level", c_int),
        ("threads", c_int),
        ("donate", ctypes.c_uint64),
        ("keep_code", c_int),
        ("code", ctypes.c_void_p),
        ("code_size", ctypes.c_size_t),
        ("donate_params", ctypes.POINTER(c_int)),
        ("num_donate_params", c_int),
    ]


class Cost(ctypes.Structure):
    """cxla_cost."""

    _fields_ = [
        ("flops", ctypes.c_double),
        ("transcendentals", ctypes.c_double),
        ("bytes_accessed", ctypes.c_double),
    ]


class Footprint(ctypes.Structure):
    """cxla_footprint."""

    _fields_ = [(name, ctypes.c_int64) for name in ("argument_bytes", "output_bytes", "alias_bytes", "temp_bytes",
                                                    "code_bytes")]


class Arg(ctypes.Structure):
    """cxla_arg."""

    _fields_ = [
        ("buffer", vp),
        ("data", vp),
        ("nbytes", c_size),
        ("type", c_int),
        ("rank", c_int),
        ("dims", vp),
    ]


_PROTOTYPES: Dict[str, Tuple[List[Any], Any]] = {
    "cxla_version": ([], c_str),
    "cxla_status_str": ([c_int], c_str),
    "cxla_type_name": ([c_int], c_str),
    "cxla_type_size": ([c_int], c_size),
    "cxla_context_create": ([P(vp)], c_int),
    "cxla_context_destroy": ([vp], None),
    "cxla_context_errmsg": ([vp], c_str),
    "cxla_context_set_flags": ([vp, c_str], c_int),
    "cxla_module_parse": ([vp, c_str, c_size, c_str, P(vp)], c_int),
    "cxla_module_parse_file": ([vp, c_str, P(vp)], c_int),
    "cxla_module_destroy": ([vp], None),
    "cxla_module_num_parameters": ([vp], c_int),
    "cxla_module_parameter_shape": ([vp, c_int, P(Shape)], c_int),
    "cxla_module_parameter_name": ([vp, c_int], c_str),
    "cxla_module_result_shape": ([vp, P(Shape)], c_int),
    "cxla_module_cost": ([vp, P(Cost)], c_int),
    "cxla_executable_cost": ([vp, P(Cost)], c_int),
    "cxla_executable_footprint": ([vp, P(Footprint)], c_int),
    "cxla_compile_options_init": ([P(CompileOptions)], None),
    "cxla_compile": ([vp, P(CompileOptions), P(vp)], c_int),
    "cxla_executable_destroy": ([vp], None),
    "cxla_executable_execute": ([vp, c_int, P(vp), P(vp)], c_int),
    "cxla_executable_execute_args": ([vp, c_int, P(Arg), P(vp)], c_int),
    "cxla_executable_compile_stats": ([vp], c_str),
    "cxla_executable_compile_counts": ([vp], c_str),
    "cxla_executable_donated_parameters": ([vp], ctypes.c_uint64),
    "cxla_executable_parameter_donated": ([vp, c_int], c_int),
    "cxla_buffer_wrap": ([vp, c_str, c_int, c_int, vp, vp, c_size, P(vp)], c_int),
    "cxla_buffer_from_data": ([vp, c_str, c_int, c_int, vp, vp, c_size, P(vp)], c_int),
    "cxla_buffer_data": ([vp], vp),
    "cxla_buffer_untuple": ([vp, c_int, P(vp)], c_int),
    "cxla_buffer_destroy": ([vp], None),
    "cxla_buffer_from_literal": ([vp, c_str, vp, P(vp)], c_int),
    "cxla_literal_from_data": ([vp, c_int, c_int, vp, vp, c_size], vp),
    "cxla_literal_tuple": ([vp, c_int, P(vp)], vp),
    "cxla_literal_token": ([vp], vp),
    "cxla_literal_destroy": ([vp], None),
    "cxla_host_callbacks_set": ([vp], None),
}
# Calls a library may lack (an older one): absent, the feature says so when asked for.
_OPTIONAL: Dict[str, Tuple[List[Any], Any]] = {
    "cxla_module_grad": ([vp, P(c_int), c_int, P(vp)], c_int),
    "cxla_buffer_memory": ([vp], c_str),
    "cxla_buffer_copy_to": ([vp, c_str, P(vp)], c_int),
    "cxla_context_memory_stats": ([vp, c_str, P(MemoryStats)], c_int),
}


def _source_trees() -> Iterator[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.dirname(os.path.dirname(here))
    if os.path.isfile(os.path.join(tree, "include", "cxla.h")):
        yield tree
    try:
        from . import _installed  # type: ignore[attr-defined]  # written by setup.py's build_py
    except ImportError:
        return
    if _installed.SOURCE_TREE != tree and os.path.isdir(_installed.SOURCE_TREE):
        yield _installed.SOURCE_TREE


def header_version(tree: str) -> Optional[str]:
    """MAJOR.MINOR.PATCH from a source tree's include/cxla.h, or None."""
    try:
        with open(os.path.join(tree, "include", "cxla.h")) as f:
            text = f.read()
    except OSError:
        return None
    parts = [re.search(r"^#define CXLA_VERSION_%s\s+(\d+)" % p, text, re.M) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts if m) if all(parts) else None


def package_version() -> Optional[str]:
    """The version this package was made for: the tree's header, or what the install recorded."""
    for tree in _source_trees():
        v = header_version(tree)
        if v:
            return v
    try:
        from . import _installed  # type: ignore[attr-defined]  # written by setup.py's build_py
        return str(_installed.VERSION)
    except ImportError:
        return None


def _pkg_config_libdir() -> Optional[str]:
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "cxla"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def _candidates(major: Optional[str]) -> Iterator[str]:
    env = os.environ.get("CXLA_LIBRARY")
    if env:
        yield env
        return
    build = os.environ.get("CXLA_BUILD", "build")
    for tree in _source_trees():
        yield os.path.join(tree, build, "libcxla.so")
    soname = "libcxla.so.%s" % major if major else ctypes.util.find_library("cxla")
    if soname:
        yield soname
    libdir = _pkg_config_libdir()
    if libdir:
        yield os.path.join(libdir, "libcxla.so")


def load() -> Tuple[ctypes.CDLL, str]:
    """Loads libcxla and sets the prototypes; returns (CDLL, path). Raises ImportError."""
    version = package_version()
    major = version.split(".")[0] if version else None
    tried: List[str] = []
    for path in _candidates(major):
        if os.sep in path and not os.path.exists(path):
            tried.append("%s (not there)" % path)
            continue
        try:
            # RTLD_DEEPBIND: libcxla binds to its own symbols first. Its LLVM is linked in and
            # hidden, but a build against Debian's libLLVM.so (no static archives) loads it:
            # TensorFlow puts its own copy of LLVM in the global scope (RTLD_GLOBAL), and
            # libLLVM's calls into itself would land in TensorFlow's LLVM and crash.
            lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL | getattr(os, "RTLD_DEEPBIND", 0))
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        for name, (args, res) in list(_PROTOTYPES.items()) + list(_OPTIONAL.items()):
            if name in _OPTIONAL and not hasattr(lib, name):
                continue
            fn = getattr(lib, name)
            fn.argtypes = args
            fn.restype = res
        got = lib.cxla_version().decode()
        if major and got.split(".")[0] != major:
            tried.append("%s (version %s, this package wants %s.x)" % (path, got, major))
            continue
        return lib, path
    raise ImportError(
        "cxla: cannot find the cxla library (libcxla.so). Build it in the source tree (make), install it "
        "(make install), or set CXLA_LIBRARY to its path. Tried: " + "; ".join(tried)
    )
