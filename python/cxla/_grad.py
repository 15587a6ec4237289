"""cxla.grad and cxla.value_and_grad: gradients by the C library's reverse-mode autodiff
(cxla_module_grad, docs/grad.md), of an HLO module or of a JAX function lowered by jax."""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Sequence, Tuple, Union

from . import _core
from ._errors import InvalidArgumentError
from ._jit import _flat_results, _leaf_key

# What cxla.grad differentiates: an HLO module (text, bytes, a path) or a JAX function.
Differentiable = Union[_core.HloSource, Callable[..., Any]]


def _missing(what: str) -> NotImplementedError:
    return NotImplementedError(
        "%s needs reverse-mode autodiff in the C library, which this one (%s, %s) does not have; "
        "for a JAX function, cxla.jit(jax.%s(f)) compiles jax's gradient with cxla"
        % (what, _core.lib.cxla_version().decode(), _core.library_path, what.split(".")[1]))


class Grad:
    """What cxla.grad and cxla.value_and_grad return: call it like the function. close() (or
    the end of a `with` block) frees the executables it compiled; a call afterwards is an
    InvalidArgumentError."""

    def __init__(self, fn: Differentiable, argnums: Union[int, Sequence[int]], with_value: bool, backend: str,
                 flags: Dict[str, _core.FlagValue]) -> None:
        self._closed = False
        if not _core.has_grad():
            raise _missing("cxla.value_and_grad" if with_value else "cxla.grad")
        self._single = isinstance(argnums, int)
        self._argnums: Tuple[int, ...] = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        if not self._argnums:
            raise ValueError("argnums names no argument")
        self._with_value = with_value
        self._backend = backend
        self._flags = flags
        self._fn = fn
        self._exe: Union[_core.Executable, None] = None
        self._cache: Dict[Any, Tuple[_core.Executable, List[Any]]] = {}
        if isinstance(fn, (str, bytes, os.PathLike)):  # a module: its parameters are the arguments
            self._exe = _core.Executable(fn, backend, (), None, self._argnums, **flags)

    def close(self) -> None:
        """Frees the executables compiled so far. Idempotent; results already returned stay
        valid; calling afterwards is an InvalidArgumentError."""
        self._closed = True
        if self._exe is not None:
            self._exe.close()
        for exe, _ in self._cache.values():
            exe.close()
        self._cache.clear()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Grad:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _answer(self, value: Any, grads: Sequence[Any]) -> Any:
        g = grads[0] if self._single else tuple(grads)
        return (value, g) if self._with_value else g

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._closed:
            raise InvalidArgumentError("cxla.grad: used after close()")
        if self._exe is not None:
            out = self._exe(*args)
            return self._answer(out[0], out[1:])
        import jax
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
        key = (tree, tuple([_leaf_key(x) for x in leaves]))
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = self._compile_jax(jax, args, kwargs)
        exe, arg_trees = entry
        out = _flat_results(exe._run(leaves, convert=True))
        grads: List[Any] = []
        k = 1
        for t in arg_trees:  # each differentiated argument's gradient has its structure
            grads.append(jax.tree_util.tree_unflatten(t, out[k:k + t.num_leaves]))
            k += t.num_leaves
        return self._answer(out[0], grads)

    def _compile_jax(self, jax: Any, args: Tuple[Any, ...],
                     kwargs: Dict[str, Any]) -> Tuple[_core.Executable, List[Any]]:
        for i in self._argnums:
            if not -len(args) <= i < len(args):
                raise ValueError("argnums: %d names no positional argument (%d given)" % (i, len(args)))
        argnums = [i % len(args) for i in self._argnums]
        lowered = jax.jit(self._fn, keep_unused=True).lower(*args, **kwargs)
        starts: List[int] = []
        k = 0
        for a in args:  # each positional argument's first leaf among the ENTRY parameters
            starts.append(k)
            k += len(jax.tree_util.tree_leaves(a))
        wrt: List[int] = []
        trees: List[Any] = []
        for i in argnums:
            t = jax.tree_util.tree_structure(args[i])
            wrt.extend(range(starts[i], starts[i] + t.num_leaves))
            trees.append(t)
        name = "grad_%s.hlo" % getattr(self._fn, "__name__", "function")
        exe = _core.Executable(lowered.as_text(dialect="hlo"), self._backend, (), name, wrt, **self._flags)
        return exe, trees


def value_and_grad(fn: Differentiable, argnums: Union[int, Sequence[int]] = 0, *, backend: str = "cpu",
                   **flags: _core.FlagValue) -> Grad:
    """The value and the gradient of fn with respect to the arguments argnums names, computed
    by cxla's own autodiff. fn is HLO text, bytes or a path (a module whose ENTRY returns a
    scalar float; its parameters are the arguments) or a JAX function returning a scalar
    float (lowered by jax once per signature, then differentiated by cxla). Returns a callable
    giving (value, gradient): a gradient per argument, of that argument's pytree structure; a
    tuple of them when argnums is a sequence. flags are cxla flags, as for cxla.compile."""
    return Grad(fn, argnums, True, backend, flags)


def grad(fn: Differentiable, argnums: Union[int, Sequence[int]] = 0, *, backend: str = "cpu",
           **flags: _core.FlagValue) -> Grad:
    """cxla.value_and_grad without the value: the callable returns the gradient(s) alone."""
    return Grad(fn, argnums, False, backend, flags)
