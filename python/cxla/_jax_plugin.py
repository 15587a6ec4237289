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
from typing import Any, Dict, Optional

from . import _callbacks
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
    # The client's create option cxla_host_callbacks hands the plugin (which links its own
    # copy of cxla) this process's host-callback dispatcher (_callbacks.py).
    if "cxla" not in getattr(xla_bridge, "_backend_factories", {}):
        xla_bridge.register_plugin("cxla", priority=-100, library_path=path, options=_client_options)
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
    _callbacks_on_cxla()


def _client_options() -> Dict[str, Any]:
    return {"cxla_host_callbacks": _callbacks.struct_address()}


def _callbacks_on_cxla() -> None:
    """jax.debug.print, pure_callback and io_callback lower through callback.emit_python_callback,
    which refuses platforms other than cpu, cuda, rocm and tpu, and on cpu makes a custom-call
    whose callable JAX hands to XLA's C++ client at compile time, where C cannot call it. On
    cxla it becomes the custom-call cxla_host_callback with the callable's id in this process's
    registry instead, kept registered by the executable's keepalives (docs/pjrt.md)."""
    try:
        from jax._src import callback
    except ImportError:
        return
    jax_emit = callback.emit_python_callback
    if getattr(jax_emit, "_cxla", False):
        return

    def emit_python_callback(ctx: Any, fn: Any, token: Any, operands: Any, operand_avals: Any, result_avals: Any,
                             **kw: Any) -> Any:
        if tuple(ctx.module_context.platforms) != ("cxla",):
            return jax_emit(ctx, fn, token, operands, operand_avals, result_avals, **kw)
        return _emit_cxla_callback(ctx, fn, token, operands, result_avals, kw)

    emit_python_callback._cxla = True  # type: ignore[attr-defined]
    callback.emit_python_callback = emit_python_callback


def _emit_cxla_callback(ctx: Any, fn: Any, token: Any, operands: Any, result_avals: Any, kw: Dict[str, Any]) -> Any:
    """JAX's CPU lowering of a callback (jax/_src/callback.py's emit_python_callback) with
    target cxla_host_callback and backend_config {callback_id = N : ui64}: the same checks of
    what the callable returns, the token first among operands and results when there is one."""
    import dataclasses

    import numpy as np
    from jax._src import core, dtypes, ffi
    from jax._src.interpreters import mlir

    if kw.get("partitioned") and result_avals:
        raise ValueError("Partitioned callback not supported with return values.")

    def checked(*args: Any) -> Any:
        outs = fn(*args)
        if len(outs) != len(result_avals):
            raise RuntimeError("Mismatched number of outputs from callback. Expected: %d, Actual: %d"
                               % (len(result_avals), len(outs)))
        outs = tuple(dtypes.canonicalize_value(np.asarray(a)) for a in outs)
        for i, (v, aval) in enumerate(zip(outs, result_avals)):
            if v.shape != aval.shape:
                raise RuntimeError("Incorrect output shape for return value #%d: Expected: %s, Actual: %s"
                                   % (i, aval.shape, v.shape))
            if v.dtype != aval.dtype:
                raise RuntimeError("Incorrect output dtype for return value #%d: Expected: %s, Actual: %s"
                                   % (i, aval.dtype, v.dtype))
        return outs

    def with_token(tok: Any, *args: Any) -> Any:  # the token passes through
        return (tok, *checked(*args))

    call = with_token if token else checked
    if token:
        operands = [token, *operands]
        sharding = kw.get("sharding")
        if sharding is not None and len(ctx.avals_out) > 0 and type(sharding).__name__ == "SdyArrayList":
            # as JAX does: Shardy's annotation has one entry per result, the token's first
            first = sharding.shardings[0]
            kw = dict(kw, sharding=type(sharding)((type(first)(mesh_shape=(), dim_shardings=(),
                                                              logical_device_ids=first.logical_device_ids),
                                                   *sharding.shardings)))
        ctx = dataclasses.replace(ctx, avals_in=[core.abstract_token, *ctx.avals_in],
                                  avals_out=[core.abstract_token, *ctx.avals_out])
    prim = getattr(ctx, "primitive", None)
    handle = _callbacks.register(call, getattr(prim, "name", "") or getattr(fn, "__name__", ""))
    ctx.module_context.add_keepalive(handle)  # registered as long as the executable lives
    result = ffi.build_ffi_lowering_function("cxla_host_callback", has_side_effect=kw.get("has_side_effect", False))(
        ctx, *operands, callback_id=np.uint64(handle.id))
    if kw.get("sharding") is not None:
        mlir.set_sharding(ctx.module_context, result, kw["sharding"])
    results = list(result.results)
    if token:
        token, *results = results
    return results, token, call


def _share_cpu_lowerings(mlir: Any) -> None:
    """cxla runs on the host: JAX's CPU-only lowering rules fit it. JAX picks rules by platform
    name, and for one it does not know it has none for eig, schur, hessenberg, ... and lowers qr
    and friends to custom-calls only TPUs run. Each rule JAX has for 'cpu' alone (linear algebra
    through LAPACK's FFI targets, which cxla runs) becomes cxla's too, unless cxla has one of its own."""
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
