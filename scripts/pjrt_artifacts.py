#!/usr/bin/env python3
"""Writes the programs and expected values of the PJRT harness (tests/pjrt/pjrt_test.c) into
tests/pjrt/artifacts/, from JAX on its own CPU backend (run with a venv that has jax 0.10.2):
    build/venv/bin/python scripts/pjrt_artifacts.py
For each case NAME:
  NAME.mlirbc  the StableHLO portable artifact (VHLO 1.16.3) JAX's PJRT client would send;
  NAME.hlo     the same program as HLO text (PJRT program format "cxla-hlo");
  NAME.io      inputs and JAX's outputs, one array a line:
               in|out TYPE RANK DIM... : VALUE...   (TYPE f32, f64, s32; values row-major)
"""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.lib.mlir.dialects import hlo as stablehlo

jax.config.update("jax_platforms", "cpu")
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "pjrt", "artifacts")
TARGET = "1.16.3"


def affine(x, w, b):
    return jnp.tanh(x @ w + b)


def loop_reduce(x):
    y = jax.lax.fori_loop(0, 3, lambda i, v: v * 1.5 - 0.25 * i, x)
    return jnp.sum(y), jnp.max(y), y


def add_donated(a, b):
    return a + b * 2.0


def integers(a):
    return a * 3 - 1, jnp.argmax(a).astype(jnp.int32)


def cases():
    r = np.random.RandomState(7)
    yield "affine", jax.jit(affine), (r.randn(2, 3).astype(np.float32), r.randn(3, 4).astype(np.float32),
                                      r.randn(4).astype(np.float32))
    yield "loop_reduce", jax.jit(loop_reduce), (r.randn(5).astype(np.float32),)
    yield "add_donated", jax.jit(add_donated, donate_argnums=0), (r.randn(2, 2).astype(np.float32),
                                                                   r.randn(2, 2).astype(np.float32))
    yield "integers", jax.jit(integers), (np.array([4, -2, 9, 1], np.int32),)


NAMES = {np.dtype(np.float32): ("f32", "%.9g"), np.dtype(np.float64): ("f64", "%.17g"),
         np.dtype(np.int32): ("s32", "%d")}


def line(kind, a):
    a = np.asarray(a)
    t, fmt = NAMES[a.dtype]
    head = "%s %s %d%s" % (kind, t, a.ndim, "".join(" %d" % d for d in a.shape))
    return head + " :" + "".join(" " + fmt % v for v in a.reshape(-1).tolist()) + "\n"


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, fn, args in cases():
        lowered = fn.lower(*args)
        module = str(lowered.compiler_ir("stablehlo"))
        with open(os.path.join(OUT, name + ".mlirbc"), "wb") as f:
            f.write(stablehlo.serialize_portable_artifact_str(module, TARGET))
        with open(os.path.join(OUT, name + ".hlo"), "w") as f:
            f.write(lowered.as_text(dialect="hlo"))
        outs = fn(*[np.copy(a) for a in args])
        outs = outs if isinstance(outs, tuple) else (outs,)
        with open(os.path.join(OUT, name + ".io"), "w") as f:
            for a in args:
                f.write(line("in", a))
            for o in outs:
                f.write(line("out", o))
        print("wrote", name)


if __name__ == "__main__":
    main()
