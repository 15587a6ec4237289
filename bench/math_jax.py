#!/usr/bin/env python3
"""Elementwise math over 4M f32 and f64 on cxla's cpu backend against jax.jit, before and after (bench/README.md).

Each case is a jax function over f32[4194304] or f64[4194304] (sin, cos, tan, pow, atan2, cbrt,
erf, expm1, log1p, and exp/log/tanh whose polynomials came first, for comparison). jax lowers it
once and cxla compiles that same HLO text, so cxla and XLA:CPU run the same module. "cxla libm"
is the path before issue 22: on f32, the same op on the argument widened to f64 and the result
rounded back to f32, which is what the cpu backend used to emit for these ops (a scalar libm
call per element; jax lowers it from `f(x.astype(f64)).astype(f32)`); on f64, the same module
compiled with --cpu-libmvec=off (scalar libm, before libmvec's variants were attached).

The contenders take turns in one process, the order rotated every round, each call timed on
its own after a warm-up, with a 2 ms sleep before each turn; the table gives the median call
of each and the ratios (below 1: cxla faster), best-call ratios beside. Every result is checked
against numpy in f64 first (`check`: max error in units of the f32 (f64) result's ulp, so 1
means the result is off by at most one unit; inputs where numpy gives inf/nan must match).

usage: CXLA_BUILD=build PYTHONPATH=python build/venv/bin/python bench/math_jax.py
           [--rounds 7] [--only sin,cos,tan,pow,atan2,cbrt,erf,expm1,log1p,exp,log,tanh | sin_f64,...]
           [--threads N]
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from turns import time_case  # noqa: E402

import cxla

import jax  # noqa: E402  (after cxla, so that a missing jax says which venv to use)

jax.config.update("jax_enable_x64", True)  # the "before" path computes in f64
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special  # noqa: E402

N = 4 * 1024 * 1024


def cases(rng, only):
    """(name, jax function on the inputs' type, numpy f64 reference, inputs)."""
    u = lambda lo, hi, t=np.float32: rng.uniform(lo, hi, N).astype(t)
    out = []
    for t, tn in ((np.float32, "f32"), (np.float64, "f64")):
        out += [
            ("sin", tn, jnp.sin, np.sin, [u(-100, 100, t)]),
            ("cos", tn, jnp.cos, np.cos, [u(-100, 100, t)]),
            ("tan", tn, jnp.tan, np.tan, [u(-100, 100, t)]),
            ("pow", tn, jnp.power, np.power, [u(0, 10, t), u(-8, 8, t)]),
            ("atan2", tn, jnp.arctan2, np.arctan2, [u(-10, 10, t), u(-10, 10, t)]),
            ("cbrt", tn, jnp.cbrt, np.cbrt, [u(-1000, 1000, t)]),
            ("exp", tn, jnp.exp, np.exp, [u(-80, 80, t)]),
            ("log", tn, jnp.log, np.log, [u(0, 1000, t)]),
            ("tanh", tn, jnp.tanh, np.tanh, [u(-5, 5, t)]),
            ("erf", tn, jax.scipy.special.erf, np.vectorize(math.erf), [u(-4, 4, t)]),
            ("expm1", tn, jnp.expm1, np.expm1, [u(-10, 10, t)]),
            ("log1p", tn, jnp.log1p, np.log1p, [u(-0.9, 100, t)]),
        ]
    return [c for c in out if not only or c[0] in only or "%s_%s" % (c[0], c[1]) in only]


def ulps(got, want, t):
    """max |got - want| in ulps of the result's type at want (want computed in f64); where want
    is not finite in that type, got must be the same inf or a NaN."""
    got = np.asarray(got, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        wt = want.astype(t).astype(np.float64)
    fin = np.isfinite(wt)
    g, w = got[~fin], wt[~fin]
    if not np.all((g == w) | (np.isnan(g) & np.isnan(w))):
        return float("inf")
    w = want[fin]
    ulp = np.spacing(np.abs(w).astype(t)).astype(np.float64)
    return float(np.max(np.abs(got[fin] - w) / ulp)) if w.size else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", default="", help="ops (sin,cos,...) or op_type (sin_f32,...)")
    ap.add_argument("--threads", type=int, default=0, help="cxla threads (0: all cores)")
    a = ap.parse_args()
    only = set(s for s in a.only.split(",") if s)
    print("cxla %s (%s), jax %s, numpy %s, %d cores, %d elements" % (
        cxla.__version__, cxla.library_path, jax.__version__, np.__version__, os.cpu_count(), N))
    rng = np.random.default_rng(0)
    flags = {"threads": a.threads} if a.threads else {}
    rows = []
    for name, tn, jf, nf, args in cases(rng, only):
        t = args[0].dtype.type
        fns, checks = {}, {}
        want = nf(*[x.astype(np.float64) for x in args])
        variants = [("cxla", jf, {})]
        if t == np.float32:  # before: the op in f64 (libm), rounded to f32
            variants.append(("cxla libm", lambda *xs, f=jf: f(*[x.astype(jnp.float64) for x in xs]).astype(jnp.float32), {}))
        else:  # before: scalar libm, without libmvec's variants
            variants.append(("cxla libm", jf, {"cpu_libmvec": False}))
        for label, f, more in variants:
            exe = cxla.compile(jax.jit(f).lower(*args).as_text(dialect="hlo"), backend="cpu", **flags, **more)
            checks[label] = ulps(exe(*args), want, t)
            fns[label] = lambda exe=exe: exe(*args)
        jitted = jax.jit(jf)
        jargs = [jnp.asarray(x) for x in args]
        checks["jax"] = ulps(jitted(*jargs), want, t)
        fns["jax"] = lambda: jax.block_until_ready(jitted(*jargs))
        res = time_case(fns, a.rounds, 3, 1e3)
        rows.append(("%s %s" % (name, tn), res, checks))
        line = "%-9s" % ("%s %s" % (name, tn)) + "".join(
            "  %s %7.2f ms (%.3g ulp)" % (k, res[k][1], checks[k]) for k in fns)
        print(line + "   cxla/jax %.2f" % (res["cxla"][1] / res["jax"][1]), flush=True)
    print("\n| case | cxla (median) | cxla libm, before (median) | jax.jit (median) | cxla/jax median (best) "
          "| before/after median (best) | max ulps cxla / before / jax |")
    print("|---|---|---|---|---|---|---|")
    for label, res, ch in rows:
        (cb, cm), (jb, jm) = res["cxla"], res["jax"]
        old = res.get("cxla libm")
        print("| %s | %.2f ms | %s | %.2f ms | %.2f (%.2f) | %s | %.3g / %s / %.3g |" % (
            label, cm, "%.2f ms" % old[1] if old else "—", jm, cm / jm, cb / jb,
            "%.2f (%.2f)" % (old[1] / cm, old[0] / cb) if old else "—", ch["cxla"],
            "%.3g" % ch["cxla libm"] if old else "—", ch["jax"]))


if __name__ == "__main__":
    main()
