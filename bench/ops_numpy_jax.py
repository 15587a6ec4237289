#!/usr/bin/env python3
"""Top-k, FFT and Cholesky on cxla's cpu backend against numpy and jax.jit (bench/README.md).

Each case is a jax function; jax lowers it once (`jax.jit(f).lower(*args).as_text("hlo")`) and
cxla compiles that same HLO text (`cxla.compile(..., backend="cpu")`), so cxla and XLA:CPU run
the same module: `topk` for jax.lax.top_k, `fft` for jnp.fft.fft/rfft, and for
jnp.linalg.cholesky jax's symmetrisation plus the `lapack_?potrf_ffi` custom-call. numpy runs
its own idiom for the same result (np.argpartition + a sort of the k survivors; np.fft, which is
pocketfft, in single precision for c64/f32 since numpy 2; np.linalg.cholesky, LAPACK through the
wheel's OpenBLAS). Cholesky inputs are SPD, so numpy's lack of symmetrisation changes nothing.

The contenders take turns in one process, the order rotated every round, each call timed on its
own after a warm-up with a 2 ms sleep before each turn (so the previous contender's threads go
idle); the table gives the median call of each and the ratios cxla/numpy and cxla/jax of the
median calls (below 1: cxla faster), with the best-call ratio beside it. Every result is checked
against numpy's before anything is timed (`check`: max relative error, norm-wise).

usage: CXLA_BUILD=build/bench PYTHONPATH=python build/venv/bin/python bench/ops_numpy_jax.py
           [--rounds 15] [--only topk,fft,rfft,cholesky] [--threads N] [--dump-hlo DIR]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from turns import time_case  # noqa: E402

import cxla

import jax  # noqa: E402  (after cxla, so that a missing jax says which venv to use)

jax.config.update("jax_enable_x64", True)  # f64 cholesky stays f64
import jax.numpy as jnp  # noqa: E402


def spd(rng, batch, n, dtype):
    """SPD matrices, well conditioned: A A^T / n + I."""
    a = rng.standard_normal((batch, n, n))
    m = a @ np.swapaxes(a, -1, -2) / n + np.eye(n)
    return m.astype(dtype)


def np_topk(x, k):
    part = np.argpartition(x, -k, axis=-1)[..., -k:]
    vals = np.take_along_axis(x, part, axis=-1)
    order = np.argsort(-vals, axis=-1, kind="stable")
    return np.take_along_axis(vals, order, axis=-1), np.take_along_axis(part, order, axis=-1)


def cases(rng, only):
    """(group, label, jax function, numpy function, inputs, tolerance)."""
    out = []
    for k in (8, 64):
        x = rng.standard_normal((128, 4096)).astype(np.float32)
        out.append(("topk", "top-k k=%d of f32[128,4096] rows" % k, lambda x, k=k: jax.lax.top_k(x, k),
                    lambda x, k=k: np_topk(x, k), [x], 0.0))
    for shape in ((1024,), (65536,), (64, 4096)):
        c = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
        out.append(("fft", "fft c64[%s]" % ",".join(map(str, shape)), jnp.fft.fft, np.fft.fft, [c], 1e-5))
    for shape in ((1024,), (65536,), (64, 4096)):
        r = rng.standard_normal(shape).astype(np.float32)
        out.append(("rfft", "rfft f32[%s]" % ",".join(map(str, shape)), jnp.fft.rfft, np.fft.rfft, [r], 1e-5))
    for dtype, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        for batch, n in ((1, 64), (16, 64), (1, 256), (8, 256), (1, 1024)):
            a = spd(rng, batch, n, dtype)
            if batch == 1:
                a = a[0]
            label = "cholesky %s[%s]" % ("f32" if dtype == np.float32 else "f64", ",".join(map(str, a.shape)))
            out.append(("cholesky", label, jnp.linalg.cholesky, np.linalg.cholesky, [a], tol))
    return [c for c in out if not only or c[0] in only]


def leaves(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def rel_err(got, want):
    got, want = np.asarray(got, np.complex128), np.asarray(want, np.complex128)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300))


def fmt_us(us):
    return "%.1f µs" % us if us < 1000 else "%.2f ms" % (us / 1000)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--only", default="", help="groups: topk,fft,rfft,cholesky")
    ap.add_argument("--threads", type=int, default=0, help="cxla threads (0: all cores)")
    ap.add_argument("--dump-hlo", default="", help="write each case's HLO text here")
    a = ap.parse_args()
    only = set(s for s in a.only.split(",") if s)
    print("cxla %s (%s), jax %s, numpy %s, python %s, %d cores" % (
        cxla.__version__, cxla.library_path, jax.__version__, np.__version__, sys.version.split()[0],
        os.cpu_count()))
    rng = np.random.default_rng(0)
    rows = []
    flags = {"threads": a.threads} if a.threads else {}
    for group, label, jf, nf, args, tol in cases(rng, only):
        text = jax.jit(jf).lower(*args).as_text(dialect="hlo")
        if a.dump_hlo:
            os.makedirs(a.dump_hlo, exist_ok=True)
            with open(os.path.join(a.dump_hlo, label.replace(" ", "_").replace("[", "_").replace("]", "")
                                   .replace(",", "x").replace("=", "") + ".hlo"), "w") as f:
                f.write(text)
        exe = cxla.compile(text, backend="cpu", **flags)
        jitted = jax.jit(jf)
        jargs = [jnp.asarray(x) for x in args]
        want = leaves(nf(*args))
        got_c, got_j = leaves(exe(*args)), leaves(jitted(*jargs))
        # top-k: compare values (indices of ties may differ between numpy's partition and a stable order)
        n_cmp = 1 if group == "topk" else len(want)
        err_c = max(rel_err(g, w) for g, w in zip(got_c[:n_cmp], want[:n_cmp]))
        err_j = max(rel_err(g, w) for g, w in zip(got_j[:n_cmp], want[:n_cmp]))
        if err_c > max(tol, 1e-6) * 10 or err_j > max(tol, 1e-6) * 10:
            sys.exit("%s: results disagree with numpy: cxla %.1e, jax %.1e" % (label, err_c, err_j))
        fns = {
            "cxla": lambda: exe(*args),
            "numpy": lambda: nf(*args),
            "jax": lambda: jax.block_until_ready(jitted(*jargs)),
        }
        size = sum(x.nbytes for x in args)
        calls = 20 if size < (1 << 20) else 5
        res = time_case(fns, a.rounds, calls, 1e6)
        rows.append((label, res, err_c, err_j))
        (cb, cm), (nb, nm), (jb, jm) = res["cxla"], res["numpy"], res["jax"]
        print("%-34s cxla %10s  numpy %10s  jax %10s   cxla/numpy %.2f  cxla/jax %.2f" % (
            label, fmt_us(cm), fmt_us(nm), fmt_us(jm), cm / nm, cm / jm), flush=True)
    print("\n| case | cxla (median) | numpy (median) | jax.jit (median) | cxla/numpy median (best) "
          "| cxla/jax median (best) | check cxla / jax |")
    print("|---|---|---|---|---|---|---|")
    for label, res, err_c, err_j in rows:
        (cb, cm), (nb, nm), (jb, jm) = res["cxla"], res["numpy"], res["jax"]
        print("| %s | %s | %s | %s | %.2f (%.2f) | %.2f (%.2f) | %.0e / %.0e |" % (
            label, fmt_us(cm), fmt_us(nm), fmt_us(jm), cm / nm, cb / nb, cm / jm, cb / jb, err_c, err_j))


if __name__ == "__main__":
    main()
