"""Compile time against the depth of a model: the training step (jax.grad, SGD) of N stacked
copies of bench/transformer_step.py's block, lowered by jax to HLO text, compiled by cxla's CLI
(`cxla compile`, a fresh process each time) and by jax (lower + compile, caches off), in turns.

A compiler whose time grows faster than the model shows it here: every block is the same, so a
block's kernels can be compiled once (docs/design/cpu-backend.md, "Fewer kernels").

    CXLA_BUILD=build build/venv/bin/python bench/compile_depth.py [--depths 1,4,16] [--rounds 3]
        [--cxla OTHER/cxla ...]  [--no-jax]

Prints, per depth and compiler: the best and median wall time of a compile (cxla: its own
"compiled ... in" figure plus the parse), cxla's LLVM and pass phases and how many kernel calls
an earlier kernel served, and the ratio jax / cxla.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transformer_step as ts  # noqa: E402


def step_fn(depth):
    """The SGD step over `depth` blocks, and zero arguments of its shapes."""
    import jax
    import jax.numpy as jnp

    def loss(p, x, y):
        h = p["emb"][x] + p["pos"]
        for l in p["blocks"]:
            h = ts.block(h, l["g1"], l["b1"], l["wq"], l["wk"], l["wv"], l["wo"], l["g2"], l["b2"], l["w1"], l["c1"],
                         l["w2"], l["c2"])
        logp = jax.nn.log_softmax(ts.layer_norm(h, p["gf"], p["bf"]) @ p["wout"])
        return -jnp.mean(jnp.take_along_axis(logp, y[..., None], axis=-1))

    def step(p, x, y):
        g = jax.grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)

    z = lambda *s: jnp.zeros(s, jnp.float32)
    D, M = ts.D, ts.MLP
    block = lambda: dict(g1=z(D), b1=z(D), wq=z(D, D), wk=z(D, D), wv=z(D, D), wo=z(D, D), g2=z(D), b2=z(D),
                         w1=z(D, M), c1=z(M), w2=z(M, D), c2=z(D))
    p = dict(emb=z(ts.VOCAB, D), pos=z(ts.SEQ, D), gf=z(D), bf=z(D), wout=z(D, ts.VOCAB),
             blocks=[block() for _ in range(depth)])
    x = jnp.zeros((ts.BATCH, ts.SEQ), jnp.int32)
    return step, (p, x, x)


def cxla_compile(cli, path):
    """(wall ms, llvm ms, passes ms, kernels, reused) from one `cxla compile`."""
    out = subprocess.run([cli, "compile", path, "--backend=cpu", "--threads=2"], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{cli} compile {path}: {out.stderr.strip()}")

    def ms(name):
        m = re.search(rf"^\s+{name}\s+([\d.]+) (ms|s|us)$", out.stdout, re.M)
        return 0.0 if not m else float(m.group(1)) * {"ms": 1, "s": 1000, "us": 1e-3}[m.group(2)]

    def count(name):
        m = re.search(rf"^\s+{name}\s+(\d+)$", out.stdout, re.M)
        return int(m.group(1)) if m else -1

    total = re.search(r"in ([\d.]+) (ms|s) ", out.stdout)
    wall = float(total.group(1)) * (1000 if total.group(2) == "s" else 1) + ms("parse")
    return wall, ms("llvm"), ms("passes"), count("kernels"), count("kernels_reused")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depths", default="1,4,16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cxla", action="append", help="cxla CLIs to compare (default: $CXLA_BUILD/cxla)")
    ap.add_argument("--no-jax", action="store_true")
    a = ap.parse_args()
    clis = a.cxla or [os.path.join(os.environ.get("CXLA_BUILD", "build"), "cxla")]
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_compilation_cache", False)
    fmt = lambda v: f"{statistics.median(v):8.0f} (best {min(v):6.0f})"
    print(f"{'depth':>5}  {'compiler':<28} {'median ms':>8}   {'llvm':>6} {'passes':>6}  kernels")
    for depth in [int(d) for d in a.depths.split(",")]:
        step, args = step_fn(depth)
        text = jax.jit(step).lower(*args).as_text(dialect="hlo")
        with tempfile.NamedTemporaryFile("w", suffix=".hlo", delete=False) as f:
            f.write(text)
        runs = {cli: [] for cli in clis}
        jax_ms = []
        for _ in range(a.rounds):  # in turns: a busy spell of the machine hits every side
            for cli in clis:
                runs[cli].append(cxla_compile(cli, f.name))
            if not a.no_jax:
                t0 = time.perf_counter()
                jax.jit(step).lower(*args).compile()
                jax_ms.append((time.perf_counter() - t0) * 1e3)
                jax.clear_caches()
        os.unlink(f.name)
        for cli, r in runs.items():
            walls = [x[0] for x in r]
            last = r[-1]
            ratio = f"  jax/cxla {statistics.median(jax_ms) / statistics.median(walls):5.1f}" if jax_ms else ""
            print(f"{depth:>5}  {cli[-28:]:<28} {fmt(walls)} {statistics.median(x[1] for x in r):6.0f} "
                  f"{statistics.median(x[2] for x in r):6.0f}  {last[3]} ({last[4]} reused){ratio}")
        if jax_ms:
            print(f"{depth:>5}  {'jax lower+compile':<28} {fmt(jax_ms)}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
