#!/usr/bin/env python3
"""Writes the programs and expected values of the PJRT harness (tests/pjrt/pjrt_test.c) into
tests/pjrt/artifacts/, from JAX on its own CPU backend (run with a venv that has jax 0.10.2,
after `make`, from the source tree):
    CXLA_BUILD=build PYTHONPATH=python build/venv/bin/python scripts/pjrt_artifacts.py
For each case NAME:
  NAME.mlirbc  the program exactly as JAX's PJRT client sends it to libcxla_pjrt.so (a StableHLO
               portable artifact for VHLO 1.16.3, GSPMD shardings), caught with
               CXLA_PJRT_DUMP_DIR while JAX compiles the case for the cxla device;
  NAME.options the serialized xla.CompileOptionsProto JAX sent with it;
  NAME.hlo     the same program as HLO text (PJRT program format "cxla-hlo");
  NAME.io      inputs and JAX's outputs, one array a line:
               in|out TYPE RANK DIM... : VALUE...   (TYPE f32, f64, s32; values row-major)
"""
import glob
import os
import tempfile

import cxla._jax_plugin as plugin

plugin.initialize()

import jax  # noqa: E402  (after the plugin is registered)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_platforms", "cpu,cxla")
# What cxla's StableHLO reader reads today: GSPMD shardings, not Shardy's dialect (docs/pjrt.md).
jax.config.update("jax_use_shardy_partitioner", False)
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "pjrt", "artifacts")


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
        with tempfile.TemporaryDirectory() as dump:
            os.environ["CXLA_PJRT_DUMP_DIR"] = dump
            try:
                fn.lower(*[jax.device_put(a, jax.devices("cxla")[0]) for a in args]).compile()
            except Exception as e:  # noqa: BLE001  (the program is caught before cxla reads it)
                print("  (cxla did not compile %s: %s)" % (name, str(e).splitlines()[0]))
            del os.environ["CXLA_PJRT_DUMP_DIR"]
            sent = glob.glob(os.path.join(dump, "program-*.mlir"))
            if len(sent) != 1:
                raise SystemExit("%s: expected one program sent to the plugin, got %d" % (name, len(sent)))
            with open(sent[0], "rb") as f, open(os.path.join(OUT, name + ".mlirbc"), "wb") as g:
                g.write(f.read())
            with open(sent[0][:-len(".mlir")] + ".options", "rb") as f, open(os.path.join(OUT, name + ".options"), "wb") as g:
                g.write(f.read())
        with open(os.path.join(OUT, name + ".hlo"), "w") as f:
            f.write(lowered.as_text(dialect="hlo"))
        outs = fn(*[jax.device_put(np.copy(a), jax.devices("cpu")[0]) for a in args])
        outs = outs if isinstance(outs, tuple) else (outs,)
        with open(os.path.join(OUT, name + ".io"), "w") as f:
            for a in args:
                f.write(line("in", a))
            for o in outs:
                f.write(line("out", o))
        print("wrote", name)


if __name__ == "__main__":
    main()
