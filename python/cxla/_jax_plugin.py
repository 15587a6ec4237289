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
    _cpu_branches_on_cxla(mlir)


def _as_cpu(branches_platforms: Any) -> Any:
    """A branch of lax.platform_dependent written for 'cpu' is cxla's too, unless one names
    'cxla' itself: cxla lowers with JAX's CPU rules, so code JAX writes for CPUs fits it."""
    if branches_platforms is None or any(ps is not None and "cxla" in ps for ps in branches_platforms):
        return branches_platforms
    return tuple((*ps, "cxla") if ps is not None and "cpu" in ps else ps for ps in branches_platforms)


def _cpu_branches_on_cxla(mlir: Any) -> None:
    """lax.platform_dependent picks its branch by the lowering platform's name, twice: in
    platform_index (the branch's number) and in cond (which keeps only that platform's branch).
    On cxla both rules run as JAX wrote them, with the 'cpu' branch named for cxla too."""
    try:
        from jax._src.lax.control_flow import conditionals
    except ImportError:
        return
    generic = getattr(mlir, "_lowerings", {})
    index_p, cond_p = getattr(conditionals, "platform_index_p", None), getattr(conditionals, "cond_p", None)
    if index_p in generic:
        index_rule = generic[index_p].rule

        def platform_index_cxla(ctx: Any, *, platforms: Any) -> Any:
            return index_rule(ctx, platforms=_as_cpu(platforms))

        mlir.register_lowering(index_p, platform_index_cxla, platform="cxla")
    if cond_p in generic:
        cond_entry = generic[cond_p]

        def cond_cxla(ctx: Any, *args: Any, **params: Any) -> Any:
            if params.get("branches_platforms") is not None:
                params["branches_platforms"] = _as_cpu(params["branches_platforms"])
            return cond_entry.rule(ctx, *args, **params)

        mlir.register_lowering(cond_p, cond_cxla, platform="cxla", inline=cond_entry.inline)
