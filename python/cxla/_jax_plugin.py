"""JAX's entry point for cxla's PJRT plugin (libcxla_pjrt.so, docs/pjrt.md).

JAX imports this module through the `jax_plugins` entry point that python/pyproject.toml
declares and calls initialize(), which registers the plugin under the platform name "cxla":
`JAX_PLATFORMS=cxla python prog.py` then runs an unchanged JAX program on cxla.

Where the plugin is looked for, in order: $CXLA_PJRT_LIBRARY (and nowhere else when it is set);
the build folder of the source tree this package comes from ($CXLA_BUILD, default build/);
pkg-config's libdir for cxla (`make install` puts it beside libcxla.so).
"""
from __future__ import annotations

import os
from typing import Any, Optional

from ._lib import _pkg_config_libdir, _source_trees

NAME = "libcxla_pjrt.so"


def library_path() -> Optional[str]:
    """The path of libcxla_pjrt.so, or None when there is none."""
    env = os.environ.get("CXLA_PJRT_LIBRARY")
    if env:
        return env if os.path.exists(env) else None
    build = os.environ.get("CXLA_BUILD", "build")
    for tree in _source_trees():
        path = os.path.join(tree, build, NAME)
        if os.path.exists(path):
            return path
    libdir = _pkg_config_libdir()
    if libdir and os.path.exists(os.path.join(libdir, NAME)):
        return os.path.join(libdir, NAME)
    return None


def initialize() -> None:
    """Registers the plugin with JAX (called by JAX's plugin discovery)."""
    path = library_path()
    if path is None:
        raise ImportError("cxla: %s not found (build it with make, install it with make install, or set "
                          "CXLA_PJRT_LIBRARY)" % NAME)
    from jax._src import xla_bridge

    # Once per process: JAX's discovery calls this too when the package is installed, and a
    # second registration is an error ("PJRT_Api already exists").
    # Priority below the CPU backend's 0: installing the package does not move JAX programs
    # onto cxla; JAX_PLATFORMS=cxla (or jax.devices("cxla")) does.
    if "cxla" not in getattr(xla_bridge, "_backend_factories", {}):
        xla_bridge.register_plugin("cxla", priority=-100, library_path=path)
    # JAX keeps input_output_alias (donate_argnums) for the platforms it lists as supporting
    # donation, and drops it with a warning for the others; cxla honours it.
    try:
        from jax._src.interpreters import mlir
    except ImportError:
        return
    platforms = getattr(mlir, "_platforms_with_donation", None)
    if isinstance(platforms, list) and "cxla" not in platforms:
        platforms.append("cxla")
    _share_cpu_lowerings(mlir)


def _share_cpu_lowerings(mlir: Any) -> None:
    """cxla runs on the host: JAX's CPU-only lowering rules fit it. JAX picks rules by platform
    name, and for one it does not know it has none for eig, schur, hessenberg, ... and lowers qr
    and friends to custom-calls only TPUs run. Each rule JAX has for 'cpu' alone (linear algebra
    through LAPACK's FFI targets, which cxla runs; host callbacks, which cxla refuses when
    compiling, naming the target) becomes cxla's too, unless cxla has one of its own."""
    table = getattr(mlir, "_platform_specific_lowerings", None)
    if table is None:
        return
    mine = table["cxla"]
    for prim, entry in list(table.get("cpu", {}).items()):
        if prim not in mine:
            mlir.register_lowering(prim, entry.rule, platform="cxla", inline=entry.inline)
