#!/usr/bin/env python3
"""compare_jax.py — cxla against JAX (XLA:CPU) on the same HLO.

For each benchmark: define it in jax.numpy, dump its HLO before optimisations with
jax.jit(f).lower(*args).as_text('hlo') into bench/hlo/jax_NAME.hlo, time jax's jitted
function (block_until_ready, warm-up, min/median of samples), run the SAME HLO file through
`cxla run FILE IN.npy... --backend=cpu --repeat=N` on the same inputs (written as .npy), parse its
timing line, check cxla's result against jax's (every result leaf), and print
time(cxla)/time(jax) per benchmark (below 1: cxla is faster), and the compile time of each side:
jax's lower + compile against cxla's compile (the `compile:` line of `cxla run`, the fastest of
the rounds' processes). The two are interleaved: rounds of (jax calls, one cxla process with
--repeat of the same count). Both sides' numbers are per-call times, each call timed on its own:
best = fastest call, median = median call (cxla: median of the per-process medians).

JAX comes from PyPI into a venv (benchmarks only; the library never uses it):
    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax numpy
This script re-runs itself under /tmp/jaxenv/bin/python when jax is not importable, or creates
that venv with --install.

usage: bench/compare_jax.py [--cxla build/bench/cxla] [--rounds 5] [--threads N] [--only a,b]
                            [--install] [--markdown]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV = os.environ.get("JAX_VENV", "/tmp/jaxenv")


def ensure_jax(install):
    try:
        import jax  # noqa: F401
        return
    except ImportError:
        pass
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py) and install:
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
        subprocess.check_call([os.path.join(VENV, "bin", "pip"), "install", "-q", "jax", "numpy"])
    if os.path.exists(py) and os.path.realpath(sys.prefix) != os.path.realpath(VENV):
        os.execv(py, [py] + sys.argv)
    sys.exit("compare_jax: jax is not installed; run with --install (creates %s) or set JAX_VENV" % VENV)


def parse_duration(s):
    """'1.762 s' / '517.5 us' / '43.14 ms' / '517.5 µs' -> milliseconds."""
    v, unit = s.split()
    v = float(v)
    return v * {"s": 1e3, "ms": 1.0, "us": 1e-3, "µs": 1e-3, "ns": 1e-6}[unit]


EXEC_RE = re.compile(r"execute: min ([\d.]+ \S+), median ([\d.]+ \S+), max ([\d.]+ \S+)")
COMPILE_RE = re.compile(r"^compile: ([\d.]+ \S+)$", re.M)
# Allowed error (relative to each leaf's largest magnitude) where 1e-4 is too tight: Adam's first
# update is lr * g / (|g| + eps), which multiplies the float noise of a gradient near 0 (|g| ~ eps,
# 1e-9 against gradients of 1e-3) by up to lr / eps = 1e5. Such weights move by up to ~6e-5 of
# ~0.13 between any two correct implementations (jax's own step differs from cxla's interpreter by
# as much); the loss, gradients and moments agree to 1e-5.
TOLERANCE = {"transformer_step": 1e-3}


def benchmarks(jnp, jax, np):
    """name -> (function, list of numpy inputs, counted work, unit)."""
    rng = np.random.default_rng(0)
    U = lambda *s, lo=-1.0, hi=1.0: rng.uniform(lo, hi, size=s).astype(np.float32)
    n = 16 * 1024 * 1024

    def chain9(x, y):
        t = x * 1.5 + 0.25
        t = jnp.maximum(t - y, 0.0)
        t = jnp.minimum(t * y + x, 4.0)
        return t * 0.5 - x

    def softmax(x):
        m = jnp.max(x, axis=1, keepdims=True)
        e = jnp.exp(x - m)
        return e / jnp.sum(e, axis=1, keepdims=True)

    def gemm(a, b):
        return a @ b

    def dense_relu(x, w, b):
        return jax.nn.relu(x @ w + b)

    def mlp(x, w1, b1, w2, b2, w3, b3):
        h = jax.nn.relu(x @ w1 + b1)
        h = jax.nn.relu(h @ w2 + b2)
        return jax.nn.softmax(h @ w3 + b3, axis=-1)

    def scan(init, xs):
        # lax.scan lowers to a while loop that writes its stacked outputs with a
        # dynamic-update-slice per trip: in place, a trip costs one row, not the array
        def step(c, x):
            c = c * 0.5 + x
            return c, jnp.tanh(c)
        return jax.lax.scan(step, init, xs)[1]

    # one pre-LN transformer block's training step with Adam (bench/transformer_step.py), its
    # weights, Adam state and batch as flat parameters: jax's step as train_peers.py times it
    import transformer_step as ts
    tf_loss, nw = ts.loss(), len(ts.NAMES)

    def transformer_step(*a):
        params, m, v, t, x, y = list(a[:nw]), a[nw:2 * nw], a[2 * nw:3 * nw], a[3 * nw], a[-2], a[-1]
        val, g = jax.value_and_grad(tf_loss)(params, x, y)
        t = t + 1
        tf = t.astype(jnp.float32)
        m = [0.9 * a + 0.1 * d for a, d in zip(m, g)]
        v = [0.999 * a + 0.001 * d * d for a, d in zip(v, g)]
        new = [p - 1e-3 * (a / (1 - 0.9 ** tf)) / (jnp.sqrt(b / (1 - 0.999 ** tf)) + 1e-8)
               for p, a, b in zip(params, m, v)]
        return (val, *new, *m, *v, t)
    tf_params = ts.init_params(rng)
    tf_in = tf_params + [np.zeros_like(p) for p in tf_params] * 2 + [np.int32(0)] + list(ts.batch(rng))

    d = [784, 128, 64, 10]
    mlp_in = [U(128, 784, lo=0.0)]
    for i in range(3):
        s = 1.0 / np.sqrt(d[i])
        mlp_in += [U(d[i], d[i + 1], lo=-s, hi=s), U(d[i + 1], lo=-0.1, hi=0.1)]
    s1024, s784 = 1 / 32.0, 1 / np.sqrt(784)
    return {
        "chain9": (chain9, [U(n, lo=-2, hi=2), U(n, lo=-2, hi=2)], 12.0 * n, "GB/s"),
        "softmax": (softmax, [U(4096, 4096, lo=-5, hi=5)], 8.0 * 4096 * 4096, "GB/s"),
        "gemm_1024": (gemm, [U(1024, 1024), U(1024, 1024)], 2.0 * 1024 ** 3, "GFLOP/s"),
        "dense_relu_1024": (dense_relu, [U(1024, 1024), U(1024, 1024, lo=-s1024, hi=s1024), U(1024, lo=-.5, hi=.5)],
                            2.0 * 1024 ** 3, "GFLOP/s"),
        "dense_relu_128x784x128": (dense_relu, [U(128, 784), U(784, 128, lo=-s784, hi=s784), U(128, lo=-.5, hi=.5)],
                                   2.0 * 128 * 784 * 128, "GFLOP/s"),
        "mlp": (mlp, mlp_in, 0, None),
        "scan_4096x256": (scan, [np.zeros(256, np.float32), U(4096, 256)], 0, None),
        "transformer_step": (transformer_step, tf_in, 0, None),
    }


def time_jax(f, args, reps):
    """Per-call ms of `reps` calls, each timed on its own (as cxla run --repeat does)."""
    import jax
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def run_cxla(cxla, hlo, npys, repeat, threads, out_dir=None):
    cmd = [cxla, "run", hlo] + npys + ["--backend=cpu", "--repeat=%d" % repeat]
    if threads:
        cmd.append("--threads=%d" % threads)
    if out_dir:
        cmd += ["--out", out_dir]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    m, c = EXEC_RE.search(p.stderr), COMPILE_RE.search(p.stderr)
    if not m or not c:
        return None, "no timing line in: " + p.stderr.strip()[:200]
    return [parse_duration(m.group(i)) for i in (1, 2, 3)] + [parse_duration(c.group(1))], None


def median(v):
    v = sorted(v)
    k = len(v)
    return v[k // 2] if k % 2 else (v[k // 2 - 1] + v[k // 2]) / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cxla", default=os.path.join(ROOT, "build", "bench", "cxla"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="cxla --threads (0: all cores, like XLA's pool)")
    ap.add_argument("--only", default="")
    ap.add_argument("--install", action="store_true")
    ap.add_argument("--markdown", action="store_true", help="print the summary as a markdown table")
    a = ap.parse_args()
    ensure_jax(a.install)
    import jax
    import jax.numpy as jnp
    import numpy as np

    if not os.path.exists(a.cxla):
        sys.exit("compare_jax: %s not found (build it: make BUILD=build/bench build/bench/cxla)" % a.cxla)
    print("jax %s, numpy %s, devices %s, %d CPUs; cxla %s --threads=%s" % (
        jax.__version__, np.__version__, jax.devices(), os.cpu_count(), a.cxla, a.threads or "all"))
    # Python's own dispatch floor: a jitted no-op on one float.
    tiny = jax.jit(lambda v: v + 1)
    one = jnp.ones((1,), jnp.float32)
    for _ in range(100):
        tiny(one).block_until_ready()
    floor = median(time_jax(tiny, [one], 3000))
    print("jax dispatch floor (jitted v+1 on f32[1], block_until_ready, median): %.1f us per call" % (floor * 1e3))

    rows = []
    only = set(filter(None, a.only.split(",")))
    tmp = tempfile.mkdtemp(prefix="cxla_jax_")
    for name, (f, inputs, work, unit) in benchmarks(jnp, jax, np).items():
        if only and name not in only:
            continue
        jf = jax.jit(f)
        t0 = time.perf_counter()  # a fresh jit of a fresh module: nothing cached to hit
        lowered = jf.lower(*inputs)
        lowered.compile()
        j_compile = (time.perf_counter() - t0) * 1e3
        hlo = os.path.join(HERE, "hlo", "jax_%s.hlo" % name)
        with open(hlo, "w") as fh:
            fh.write(lowered.as_text("hlo"))
        args = [jnp.asarray(v) for v in inputs]
        refs = [np.asarray(r) for r in jax.tree_util.tree_leaves(jf(*args))]
        npys = []
        for i, v in enumerate(inputs):
            p = os.path.join(tmp, "%s_%d.npy" % (name, i))
            np.save(p, v)
            npys.append(p)
        # Warm-up: jax until 0.3 s has passed; one cxla run that also writes its result.
        t0 = time.perf_counter()
        one_call = min(time_jax(jf, args, 1))
        while time.perf_counter() - t0 < 0.3:
            one_call = min(one_call, min(time_jax(jf, args, 1)))
        reps = max(3, min(500, int(50.0 / max(one_call, 1e-3))))  # ~50 ms of calls per round
        out_dir = os.path.join(tmp, name + "_out")
        first, err = run_cxla(a.cxla, hlo, npys, 1, a.threads, out_dir)
        check = "—"
        if err is None:
            # Error relative to the largest magnitude of each reference leaf (entries near 0 after a
            # sum of 1024 products are not meaningful alone); the worst leaf is shown.
            e = 0.0
            for i, ref in enumerate(refs):
                got = np.load(os.path.join(out_dir, "%d.npy" % i))
                scale = float(np.max(np.abs(ref))) or 1.0
                e = max(e, float(np.max(np.abs(got - ref))) / scale if got.shape == ref.shape else float("inf"))
            check = ("err %.1e" if e < TOLERANCE.get(name, 1e-4) else "DIFFERS: err %.1e") % e
        jt, cmin, cmed, ccomp = [], [], [], [first[3]] if first else []
        for r in range(a.rounds):
            jt += time_jax(jf, args, reps)
            if err is None:
                c, err = run_cxla(a.cxla, hlo, npys, reps, a.threads)
                if c:
                    cmin.append(c[0])
                    cmed.append(c[1])
                    ccomp.append(c[3])
        j_best, j_med = min(jt), median(jt)
        line = "%-24s jax best %9.3f ms median %9.3f ms (%d calls x %d rounds)" % (name, j_best, j_med, reps, a.rounds)
        if err is None:
            c_best, c_med = min(cmin), median(cmed)
            line += " | cxla best %9.3f ms median %9.3f ms (--repeat=%d x %d)" % (c_best, c_med, reps, a.rounds)
            line += " | compile jax %.1f ms, cxla %.1f ms" % (j_compile, min(ccomp))
            rows.append((name, c_best, c_med, j_best, j_med, work, unit, check, min(ccomp), j_compile))
        else:
            line += " | cxla: %s" % err
            rows.append((name, None, None, j_best, j_med, work, unit, "cxla failed: " + err[:60], None, j_compile))
        print(line, flush=True)

    print()
    hdr = ("benchmark", "cxla (median)", "jax (median)", "cxla/jax time (best)", "cxla/jax time (median)",
           "compile cxla / jax (ms)", "check")
    fmt = "| %s | %s | %s | %s | %s | %s | %s |" if a.markdown else "%-24s %-18s %-18s %-20s %-22s %-24s %s"
    print(fmt % hdr)
    if a.markdown:
        print("|---|---|---|---|---|---|---|")
    for name, cb, cm, jb, jm, work, unit, check, cc, jc in rows:
        def show(t):
            if t is None:
                return "—"
            if work:
                return "%.1f %s" % (work / t / 1e6, unit)
            return "%.1f µs" % (t * 1e3) if t < 1 else "%.2f ms" % t
        rb = "%.2f" % (cb / jb) if cb else "—"
        rm = "%.2f" % (cm / jm) if cm else "—"
        comp = "%.0f / %.0f = %.3f" % (cc, jc, cc / jc) if cc else "— / %.0f" % jc
        print(fmt % (name, show(cm), show(jm), rb, rm, comp, check))


if __name__ == "__main__":
    main()
