"""cxla.jit: a JAX or TensorFlow function, lowered to HLO by its own framework once per input
signature, compiled by cxla, and run on cxla with the framework's pytree flattening."""
from __future__ import annotations

import functools
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union, overload

import numpy as np

from . import _callbacks, _core
from ._errors import InvalidArgumentError, UnsupportedError

_ndarray = np.ndarray

_NEEDS = ("cxla.jit lowers a function with JAX or TensorFlow, and neither is installed: "
          "pip install jax (or tensorflow), or compile HLO text with cxla.compile")


def _xla_cpu_environment(flags: Dict[str, _core.FlagValue]) -> Dict[str, _core.FlagValue]:
    """The frameworks' own CPU backends (XLA:CPU, TensorFlow's) run with denormals flushed to
    zero: so do their functions here, unless the caller (or CXLA_FLAGS) says otherwise."""
    if "cpu_flush_denormals" in flags or "cpu-flush-denormals" in os.environ.get("CXLA_FLAGS", ""):
        return flags
    return dict(flags, cpu_flush_denormals=True)


def _framework_of(fn: Callable[..., Any], framework: Optional[str]) -> str:
    if framework in ("jax", "tensorflow"):
        return framework
    if framework is not None:
        raise ValueError("cxla.jit: framework must be 'jax' or 'tensorflow', not %r" % (framework,))
    if type(fn).__module__.startswith("tensorflow"):  # a tf.function
        return "tensorflow"
    try:
        import jax  # noqa: F401
        return "jax"
    except ImportError:
        pass
    try:
        import tensorflow  # noqa: F401
        return "tensorflow"
    except ImportError:
        raise ImportError(_NEEDS) from None


def _leaf_key(x: Any) -> Tuple[Any, ...]:
    """What about a leaf changes the compiled program: shape, dtype, and jax's weak typing."""
    if type(x) is np.ndarray or isinstance(x, np.ndarray):
        return (x.shape, x.dtype)
    if isinstance(x, (bool, int, float, complex)):
        return (type(x),)
    return (tuple(np.shape(x)), np.result_type(x) if not hasattr(x, "dtype") else x.dtype, getattr(x, "weak_type", False))


def _flat_results(out: Any) -> List[Any]:
    """An executable's result (nested tuples of arrays) as a list of leaves."""
    if isinstance(out, tuple):
        return [leaf for x in out for leaf in _flat_results(x)]
    return [out]


def _key_data(x: Any) -> Any:
    import jax
    return np.asarray(jax.random.key_data(x))


def _wrap_key(data: Any, impl: Any) -> Any:
    import jax
    return jax.random.wrap_key_data(data, impl=impl)


class Jitted:
    """What cxla.jit returns: call it like the function. Compiled programs are kept per
    signature (pytree structure, static arguments, and each leaf's shape and dtype); close()
    (or the end of a `with` block) frees them all, after which a call is an
    InvalidArgumentError."""

    def __init__(self, fn: Callable[..., Any], backend: str, donate_argnums: Iterable[int],
                 static_argnums: Iterable[int], framework: Optional[str], flags: Dict[str, _core.FlagValue]) -> None:
        self._closed = False
        self._fn = fn
        self._backend = backend
        self._donate = frozenset(donate_argnums)
        self._static = tuple(sorted(static_argnums))
        self._flags = _xla_cpu_environment(flags)
        self._framework = _framework_of(fn, framework)
        self._cache: Dict[Any, Any] = {}
        # positional numpy arrays only: (shape, dtype) per argument -> (exe, rebuild)
        self._fast: Dict[Any, Tuple[_core.Executable, Callable[[Any], Any]]] = {}
        self._tree_util: Any = None  # jax.tree_util, once a call needs it
        functools.update_wrapper(self, fn)

    @property
    def framework(self) -> str:
        """"jax" or "tensorflow": the framework that lowers the function."""
        return self._framework

    def executables(self) -> List[_core.Executable]:
        """The executables compiled so far, one per call signature."""
        return [entry[0] for entry in self._cache.values()]

    def close(self) -> None:
        """Frees every executable compiled so far. Idempotent; results already returned stay
        valid; calling afterwards is an InvalidArgumentError."""
        self._closed = True
        self._fast.clear()
        for exe in self.executables():
            exe.close()
        self._cache.clear()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Jitted:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lower(self, *args: Any, **kwargs: Any) -> str:
        """The HLO text this call signature compiles (as the framework lowers it)."""
        if self._framework == "jax":
            return str(self._jax_lowered(args, kwargs)[0].as_text(dialect="hlo"))
        return str(self._tf_hlo(args, kwargs)[0])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._closed:
            raise InvalidArgumentError("cxla.jit: %s used after close()" % getattr(self._fn, "__name__", "function"))
        if self._framework == "jax":
            if not kwargs and not self._static:
                # The common call, numpy arrays by position: jax's flattening would give these
                # very leaves, so the key needs no tree (its length stands for it).
                try:
                    key = tuple([(a.shape, a.dtype) for a in args if type(a) is _ndarray])
                except AttributeError:
                    key = None
                if key is not None and len(key) == len(args):
                    entry = self._fast.get(key)
                    if entry is not None:
                        exe, rebuild = entry
                        return rebuild(exe._run(args, convert=True))
            return self._call_jax(args, kwargs)
        return self._call_tf(args, kwargs)

    def _hlo_name(self) -> str:
        """How errors name the lowered text: "jit_<function>.hlo"."""
        return "jit_%s.hlo" % getattr(self._fn, "__name__", "function")

    # ---- JAX ----

    def _jax_lowered(self, args: Sequence[Any], kwargs: Dict[str, Any]) -> Tuple[Any, Any]:
        import jax
        jitted = jax.jit(self._fn, static_argnums=self._static, keep_unused=True)  # keep_unused: one parameter per leaf
        return jitted.lower(*args, **kwargs), jax

    def _call_jax(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        static = self._static
        if static:
            dyn = tuple(a for i, a in enumerate(args) if i not in static)
            fixed = tuple(args[i] for i in static if i < len(args))
        else:
            dyn, fixed = args, ()
        if self._tree_util is None:
            import jax
            self._tree_util = jax.tree_util
        leaves, tree = self._tree_util.tree_flatten((dyn, kwargs))
        key = (tree, fixed, tuple([_leaf_key(x) for x in leaves]))
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = self._compile_jax(args, kwargs, dyn)
        exe, out_tree, keys_in, keys_out, tokens = entry[:5]
        if not static and not kwargs and not keys_out and not tokens and all(type(a) is _ndarray for a in args):
            self._fast[key[2]] = (exe, self._rebuilder(out_tree))
        if keys_in:
            leaves = [_key_data(x) if k else x for x, k in zip(leaves, keys_in)]
        out = exe._run([None] * tokens + list(leaves) if tokens else leaves, convert=True)
        flat = _flat_results(out) if type(out) is tuple else [out]
        flat = flat[tokens:]
        if keys_out:
            flat = [_wrap_key(x, impl) if impl is not None else x for x, impl in zip(flat, keys_out)]
        return self._tree_util.tree_unflatten(out_tree, flat)

    def _rebuilder(self, out_tree: Any) -> Callable[[Any], Any]:
        """How a result becomes the function's pytree: directly for one array or a flat tuple of
        arrays (the usual results), through jax's unflatten otherwise."""
        tu = self._tree_util
        if out_tree == tu.tree_structure(0):
            return lambda out: out
        n = out_tree.num_leaves
        if out_tree == tu.tree_structure((0,) * n):
            return lambda out: out if type(out) is tuple and len(out) == n and not any(type(x) is tuple for x in out) \
                else tu.tree_unflatten(out_tree, _flat_results(out))
        return lambda out: tu.tree_unflatten(out_tree, _flat_results(out) if type(out) is tuple else (out,))

    def _compile_jax(self, args: Tuple[Any, ...], kwargs: Dict[str, Any],
                     dyn: Tuple[Any, ...]) -> Tuple[Any, ...]:
        """The executable, the result's tree, and the typed PRNG keys (jax.random.key) among
        the argument leaves (True each) and the result leaves (each one's PRNG implementation,
        else None): JAX lowers a key array to its uint32 key data, which crosses as such and
        is wrapped again with the same implementation, as jax.jit hands it back. Then the
        number of runtime tokens (one per ordered effect, such as io_callback(ordered=True):
        JAX's lowering takes and returns them before the leaves) and the handles that keep the
        program's host callbacks registered (_callbacks.for_cxla) as long as the entry lives."""
        import jax
        lowered, _ = self._jax_lowered(args, kwargs)
        donate: List[int] = []
        k = 0
        positions = [i for i in range(len(args)) if i not in self._static]
        for pos, a in zip(positions, dyn):
            n = len(jax.tree_util.tree_leaves(a))
            if pos in self._donate:
                donate.extend(range(k, k + n))
            k += n
        text = lowered.as_text(dialect="hlo")
        compile_args = getattr(getattr(lowered, "_lowering", None), "compile_args", {})
        handles: List[Any] = []
        if compile_args.get("host_callbacks"):
            text, handles = _callbacks.for_cxla(text, compile_args["host_callbacks"])
        tokens = len(compile_args.get("ordered_effects") or ())
        exe = _core.compile(text, self._backend, [d + tokens for d in donate], self._hlo_name(), **self._flags)
        def is_key(dtype: Any) -> bool:
            return bool(jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key))

        keys_in = tuple(hasattr(a, "dtype") and is_key(a.dtype) for a in jax.tree_util.tree_leaves((dyn, kwargs)))
        keys_out = tuple(o.dtype._impl if is_key(o.dtype) else None for o in jax.tree_util.tree_leaves(lowered.out_info))
        return (exe, lowered.out_tree, keys_in if any(keys_in) else (),
                keys_out if any(k is not None for k in keys_out) else (), tokens, handles)

    # ---- TensorFlow ----

    def _tf_function(self) -> Tuple[Any, Any]:
        import tensorflow as tf
        if not hasattr(self, "_tf_fn"):
            fn = self._fn
            self._tf_fn = fn if hasattr(fn, "experimental_get_compiler_ir") else tf.function(fn, jit_compile=True)
        return self._tf_fn, tf

    def _tf_hlo(self, args: Sequence[Any], kwargs: Dict[str, Any]) -> Tuple[str, Any, Any]:
        f, tf = self._tf_function()
        return f.experimental_get_compiler_ir(*args, **kwargs)(stage="hlo"), f, tf

    def _call_tf(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        import tensorflow as tf
        leaves = tf.nest.flatten((args, kwargs))
        key = (repr(tf.nest.map_structure(lambda _: 0, (args, kwargs))), tuple(_leaf_key(x) for x in leaves))
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = self._compile_tf(args, kwargs, len(leaves))
        exe, outputs, variables = entry
        # Variables the function reads follow the arguments as parameters, at their current values.
        values = [np.asarray(x) for x in leaves] + [v.numpy() for v in variables]
        flat = _flat_results(exe._run(values, convert=True))
        return tf.nest.pack_sequence_as(outputs, flat)

    def _compile_tf(self, args: Tuple[Any, ...], kwargs: Dict[str, Any],
                    nleaves: int) -> Tuple[_core.Executable, Any, List[Any]]:
        text, f, tf = self._tf_hlo(args, kwargs)
        concrete = f.get_concrete_function(*args, **kwargs)
        by_handle = {id(v.handle): v for v in concrete.variables}
        variables = [by_handle[id(t)] for t in concrete.captured_inputs if id(t) in by_handle]
        exe = _core.compile(text, self._backend, (), self._hlo_name(), **self._flags)
        want = nleaves + len(variables)
        if len(exe.parameters) != want:
            raise UnsupportedError("cxla.jit: this TensorFlow function's HLO takes %d parameters, not the %d arguments "
                                   "and variables it was called with (functions that assign variables are not "
                                   "supported)" % (len(exe.parameters), want))
        outputs = concrete.structured_outputs
        nout = len(tf.nest.flatten(outputs))
        if len(exe.result.leaves()) != nout:
            raise UnsupportedError("cxla.jit: this TensorFlow function's HLO returns %d values, its outputs are %d"
                                   % (len(exe.result.leaves()), nout))
        return exe, outputs, variables


@overload
def jit(fn: Callable[..., Any], *, backend: str = ..., donate_argnums: Union[int, Iterable[int]] = ...,
        static_argnums: Union[int, Iterable[int]] = ..., framework: Optional[str] = ...,
        **flags: _core.FlagValue) -> Jitted: ...


@overload
def jit(fn: None = ..., *, backend: str = ..., donate_argnums: Union[int, Iterable[int]] = ...,
        static_argnums: Union[int, Iterable[int]] = ..., framework: Optional[str] = ...,
        **flags: _core.FlagValue) -> Callable[[Callable[..., Any]], Jitted]: ...


def jit(fn: Optional[Callable[..., Any]] = None, *, backend: str = "cpu",
        donate_argnums: Union[int, Iterable[int]] = (), static_argnums: Union[int, Iterable[int]] = (),
        framework: Optional[str] = None,
        **flags: _core.FlagValue) -> Union[Jitted, Callable[[Callable[..., Any]], Jitted]]:
    """Compiles a JAX function (lowered with jax.jit(fn).lower(...).as_text(dialect="hlo")) or a
    TensorFlow function (tf.function(jit_compile=True)'s experimental_get_compiler_ir) with
    cxla, once per input signature, and runs it on cxla. Arguments and results are pytrees
    (nested tuples, lists, dicts) flattened and rebuilt as the framework does; result leaves are
    numpy arrays. donate_argnums and static_argnums as in jax.jit; flags are cxla flags
    (threads=2, fusion=False, ...). framework: "jax" or "tensorflow" (default: a tf.function is
    TensorFlow's, anything else JAX's when jax is installed). Usable as @cxla.jit or
    @cxla.jit(backend=...)."""
    if isinstance(donate_argnums, int):
        donate_argnums = (donate_argnums,)
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if fn is None:
        donate, static = donate_argnums, static_argnums
        return lambda f: jit(f, backend=backend, donate_argnums=donate, static_argnums=static, framework=framework,
                             **flags)
    return Jitted(fn, backend, donate_argnums, static_argnums, framework, flags)
