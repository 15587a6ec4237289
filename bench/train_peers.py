#!/usr/bin/env python3
"""Training steps against their peers (issue 10's benchmark; bench/README.md "Training steps").

Three models, each one training step (forward, softmax cross-entropy, gradients, update):
  mlp   784-128-64-10 with ReLU, batch 128, SGD (lr 0.1)
  cnn   examples/train's LeNet-style CNN (conv 3x3x16 SAME + ReLU + max-pool 2, conv 3x3x32 SAME +
        ReLU + max-pool 2, dense 1568-128 + ReLU, dense 128-10), batch 64, Adam (lr 1e-3)
  transformer  one pre-LN transformer block on next-token prediction (bench/transformer_step.py:
        embedding, 4-head causal self-attention, gelu MLP 128-512-128, layer norms), batch 8 x
        128 tokens, d_model 128, Adam (lr 1e-3)
Contenders, timed in turns in one process (the order rotated every round), each step's weights
and optimizer state fed back into the next (donated wherever the contender supports it):
  cxla own        the loss lowered by jax (forward only), differentiated and given its optimizer
                  by cxla (`cxla train-step`), compiled by cxla
  cxla own, jit=off  the same module compiled op by op (--fusion=off)
  cxla jax-HLO    the whole step as jax lowers it (jax.jit(step).lower(...).as_text("hlo")),
                  compiled by cxla
  jax.jit         jax.jit(step, donate_argnums=...) on XLA:CPU, block_until_ready
  torch eager     the same model in PyTorch (NCHW), torch.optim, eager
  torch.compile   the same under torch.compile (default inductor backend)
The floor under each step: its GEMM and convolution multiply-adds (cxla's library_macs of jax's
step) at the machine's GEMM rate (the best f32 product cxla computes, measured at the start), and
each contender's best time in floors: no step can run under 1.00 without fewer products.
Every contender starts from the same weights and batch; after the warm-up steps their losses
are checked against jax's (rtol 1e-3), so all compute the same step. Compile times: cxla's
compile of each module against jax's lower + compile.

Run where jax (and torch, optional) are installed, with the package on the path:
  CXLA_BUILD=build PYTHONPATH=python build/venv/bin/python bench/train_peers.py [--rounds N]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import cxla
import transformer_step

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, os.environ.get("CXLA_BUILD", "build"), "cxla")
MLP_LR, CNN_LR, B1, B2, EPS = 0.1, 1e-3, 0.9, 0.999, 1e-8


def init_params(model, rng):
    """Glorot-uniform weights, zero biases; jax layout (dense [in,out], conv HWIO)."""
    def glorot(shape, fan_in, fan_out):
        lim = np.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-lim, lim, shape).astype(np.float32)
    if model == "transformer":
        return transformer_step.init_params(rng)
    if model == "mlp":
        dims = [784, 128, 64, 10]
        out = []
        for a, b in zip(dims, dims[1:]):
            out += [glorot((a, b), a, b), np.zeros(b, np.float32)]
        return out
    return [glorot((3, 3, 1, 16), 9, 144), np.zeros(16, np.float32),
            glorot((3, 3, 16, 32), 144, 288), np.zeros(32, np.float32),
            glorot((1568, 128), 1568, 128), np.zeros(128, np.float32),
            glorot((128, 10), 128, 10), np.zeros(10, np.float32)]


def batch(model, rng):
    if model == "transformer":
        return transformer_step.batch(rng)
    n = 128 if model == "mlp" else 64
    x = rng.standard_normal((n, 784) if model == "mlp" else (n, 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, n).astype(np.int32)
    return x, y


# ---- jax ----

def jax_loss(model):
    import jax
    import jax.numpy as jnp

    def xent(logits, y):
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(y, 10, dtype=logits.dtype), axis=-1))

    def pool(h):
        return jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def conv(h, w, b, pad):
        dn = ("NHWC", "HWIO", "NHWC")
        return jax.lax.conv_general_dilated(h, w, (1, 1), pad, dimension_numbers=dn) + b

    if model == "transformer":
        return transformer_step.loss()

    def loss(params, x, y):
        if model == "mlp":
            w1, b1, w2, b2, w3, b3 = params
            h = jax.nn.relu(x @ w1 + b1)
            h = jax.nn.relu(h @ w2 + b2)
            return xent(h @ w3 + b3, y)
        c1, cb1, c2, cb2, w1, b1, w2, b2 = params
        h = pool(jax.nn.relu(conv(x, c1, cb1, "SAME")))
        h = pool(jax.nn.relu(conv(h, c2, cb2, "SAME")))
        h = jax.nn.relu(h.reshape(h.shape[0], -1) @ w1 + b1)
        return xent(h @ w2 + b2, y)
    return loss


def jax_step(model):
    """(step, state0): step(params, state, x, y) -> (loss, params, state)."""
    import jax
    import jax.numpy as jnp
    loss = jax_loss(model)
    if model == "mlp":
        def step(params, state, x, y):
            val, g = jax.value_and_grad(loss)(params, x, y)
            return val, [p - MLP_LR * d for p, d in zip(params, g)], state
        return step, lambda params: []

    def step(params, state, x, y):
        m, v, t = state
        val, g = jax.value_and_grad(loss)(params, x, y)
        t = t + 1
        tf = t.astype(jnp.float32)
        m = [B1 * a + (1 - B1) * d for a, d in zip(m, g)]
        v = [B2 * a + (1 - B2) * d * d for a, d in zip(v, g)]
        new = [p - CNN_LR * (a / (1 - B1 ** tf)) / (jnp.sqrt(b / (1 - B2 ** tf)) + EPS)
               for p, a, b in zip(params, m, v)]
        return val, new, (m, v, t)
    return step, lambda params: ([np.zeros_like(p) for p in params], [np.zeros_like(p) for p in params],
                                 np.int32(0))


def flat_state(model, state):
    if model == "mlp":
        return []
    m, v, t = state
    return list(m) + list(v) + [t]


# ---- cxla ----

def cxla_own_module(model, params, x, y):
    """The loss as jax lowers it, then `cxla train-step` (cxla's autodiff and optimizer)."""
    import jax
    hlo = jax.jit(jax_loss(model)).lower(params, x, y).as_text(dialect="hlo")
    nw = len(params)
    opt = ["--optimizer=sgd", "--lr=%g" % MLP_LR] if model == "mlp" else \
          ["--optimizer=adam", "--lr=%g" % CNN_LR, "--beta1=%g" % B1, "--beta2=%g" % B2, "--epsilon=%g" % EPS]
    with tempfile.NamedTemporaryFile("w", suffix=".hlo", delete=False) as f:
        f.write(hlo)
    try:
        out = subprocess.run([CLI, "train-step", f.name, "--wrt=" + ",".join(map(str, range(nw)))] + opt,
                             capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if out.returncode:
        raise RuntimeError("cxla train-step failed: " + out.stderr)
    return out.stdout


class CxlaStep:
    """A cxla step executable (weights and state donated and fed back without copies)."""

    def __init__(self, hlo, nstate, params, state, x, y, **flags):
        n = len(params) + nstate
        t0 = time.perf_counter()
        # denormals flushed to zero, as jax.jit's XLA:CPU runs (and cxla.jit and the plugin do)
        self.exe = cxla.compile(hlo, donate_argnums=range(n), **dict({"cpu_flush_denormals": True}, **flags))
        self.compile_s = time.perf_counter() - t0
        self.n = n
        self.vals = [np.array(a) for a in list(params) + list(state)]
        self.x, self.y = x, y

    def __call__(self):
        out = self.exe(*self.vals, self.x, self.y)
        self.vals = list(out[1:1 + self.n])
        return float(np.asarray(out[0]).reshape(-1)[-1])


class CxlaJaxHlo(CxlaStep):
    """jax's whole step: its parameters are (params..., state..., x, y) and its result the tuple
    (loss, params..., state...) as jax flattens them."""


# ---- torch ----

def torch_step(model, params, x, y, compiled):
    import torch
    torch.set_num_threads(os.cpu_count() or 1)
    ps = [torch.nn.Parameter(torch.from_numpy(np.array(p))) for p in params]
    if model == "cnn":  # jax's HWIO -> torch's OIHW, NHWC -> NCHW
        ps[0] = torch.nn.Parameter(torch.from_numpy(np.ascontiguousarray(params[0].transpose(3, 2, 0, 1))))
        ps[2] = torch.nn.Parameter(torch.from_numpy(np.ascontiguousarray(params[2].transpose(3, 2, 0, 1))))
        xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    else:
        xt = torch.from_numpy(x)
    yt = torch.from_numpy(y.astype(np.int64))
    F = torch.nn.functional
    if model == "transformer":
        xt = torch.from_numpy(x.astype(np.int64))

    def block_loss():  # transformer_step.loss in torch: same weights, layout and order
        (emb, pos, g1, c1, wq, wk, wv, wo, g2, c2, w1, b1, w2, b2, gf, cf, wout) = ps
        d, nh = transformer_step.D, transformer_step.HEADS
        b, t = xt.shape
        h = emb[xt] + pos
        a = F.layer_norm(h, (d,), g1, c1, eps=1e-5)
        q, k, v = [(a @ w).view(b, t, nh, d // nh).transpose(1, 2) for w in (wq, wk, wv)]
        s = (q @ k.transpose(-1, -2)) / float(np.sqrt(d // nh))
        s = s.masked_fill(~torch.tril(torch.ones(t, t, dtype=torch.bool)), -1e9)
        h = h + (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(b, t, d) @ wo
        h = h + F.gelu(F.layer_norm(h, (d,), g2, c2, eps=1e-5) @ w1 + b1, approximate="tanh") @ w2 + b2
        logits = F.layer_norm(h, (d,), gf, cf, eps=1e-5) @ wout
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), yt.reshape(-1))

    def loss_fn():
        if model == "transformer":
            return block_loss()
        if model == "mlp":
            w1, b1, w2, b2, w3, b3 = ps
            h = F.relu(xt @ w1 + b1)
            h = F.relu(h @ w2 + b2)
            return F.cross_entropy(h @ w3 + b3, yt)
        c1, cb1, c2, cb2, w1, b1, w2, b2 = ps
        h = F.max_pool2d(F.relu(F.conv2d(xt, c1, cb1, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, c2, cb2, padding=1)), 2)
        h = h.permute(0, 2, 3, 1).reshape(h.shape[0], -1)  # jax's NHWC flattening order
        h = F.relu(h @ w1 + b1)
        return F.cross_entropy(h @ w2 + b2, yt)
    opt = torch.optim.SGD(ps, lr=MLP_LR) if model == "mlp" else \
        torch.optim.Adam(ps, lr=CNN_LR, betas=(B1, B2), eps=EPS)

    def step():
        opt.zero_grad(set_to_none=True)
        val = loss_fn()
        val.backward()
        opt.step()
        return val.detach()
    fn = torch.compile(step) if compiled else step
    t0 = time.perf_counter()
    first = float(fn())  # torch.compile compiles on the first call
    return (lambda: float(fn())), time.perf_counter() - t0, first


def xla_kernels(compiled_text):
    """What XLA:CPU runs per step: the instructions of the optimized ENTRY computation that do
    work (fusions, library calls, copies, loops), not parameters, tuples, bitcasts, constants."""
    free = {"parameter", "tuple", "get-tuple-element", "bitcast", "constant", "after-all"}
    counts, entry = {}, False
    for line in compiled_text.splitlines():
        if line.startswith("ENTRY"):
            entry = True
            continue
        if entry and line.startswith("}"):
            break
        if entry and "=" in line:
            m = re.search(r"\s([a-z][\w-]*)\(", line.split("=", 1)[1])
            op = m.group(1) if m else ""
            if op and op not in free:
                counts[op] = counts.get(op, 0) + 1
    return sum(counts.values()), counts


def contenders(model, which):
    import jax
    rng = np.random.default_rng(0)
    params = init_params(model, rng)
    x, y = batch(model, rng)
    step, state0 = jax_step(model)
    state = state0(params)
    nw = len(params)
    out, compile_s = {}, {}

    # jax.jit: the reference; its first loss is what every contender's first step must give
    t0 = time.perf_counter()
    jstep = jax.jit(step, donate_argnums=(0, 1))
    lowered = jstep.lower(params, state, x, y)
    compiled = lowered.compile()
    compile_s["jax.jit (lower + compile)"] = time.perf_counter() - t0
    n, kinds = xla_kernels(compiled.as_text())
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    kernels = {"jax.jit": "%d (%s); XLA's bytes accessed %.2f MB" % (
        n, ", ".join("%s %d" % kv for kv in sorted(kinds.items())), cost.get("bytes accessed", 0) / 1e6)}
    jx = [jax.device_put(a) for a in (x, y)]
    jstate = [jax.device_put(params), jax.device_put(state)]
    first = float(compiled(*jstate, *jx)[0])  # params as given: donation needs fresh copies
    jstate = [jax.device_put(params), jax.device_put(state)]

    def run_jax():
        val, p, s = compiled(jstate[0], jstate[1], *jx)
        jstate[0], jstate[1] = p, s
        return float(val.block_until_ready())
    out["jax.jit"] = run_jax
    firsts = {"jax.jit": first}

    nstate = len(flat_state(model, state))
    if "cxla" in which:
        own = cxla_own_module(model, params, x, y)
        for name, flags in (("cxla own", {}), ("cxla own, jit=off", {"fusion": False})):
            s = CxlaStep(own, nstate, params, flat_state(model, state), x, y, **flags)
            compile_s[name] = s.compile_s
            kernels[name] = s.exe.compile_counts
            firsts[name] = s()
            out[name] = s
        s = CxlaJaxHlo(lowered.as_text(dialect="hlo"), nstate, params, flat_state(model, state), x, y)
        compile_s["cxla jax-HLO"] = s.compile_s
        kernels["cxla jax-HLO"] = s.exe.compile_counts
        firsts["cxla jax-HLO"] = s()
        out["cxla jax-HLO"] = s
    if "torch" in which:
        try:
            import torch  # noqa: F401
            for name, comp in (("torch eager", False), ("torch.compile", True)):
                if comp and "torch.compile" not in which:
                    continue
                fn, secs, f0 = torch_step(model, params, x, y, comp)
                if comp:
                    compile_s[name + " (first call)"] = secs
                firsts[name] = f0
                out[name] = fn
        except ImportError:
            print("torch not installed: no torch rows")
    for name, f0 in firsts.items():
        if abs(f0 - first) > 1e-3 * abs(first):
            raise SystemExit("%s: first loss %.6f, jax's %.6f: not the same step" % (name, f0, first))
    return out, compile_s, kernels


def run(model, rounds, steps, which):
    fns, compile_s, kernels = contenders(model, which)
    names = list(fns)
    for fn in fns.values():  # warm-up
        for _ in range(3):
            fn()
    times = {k: [] for k in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            time.sleep(0.002)
            for _ in range(steps):
                t0 = time.perf_counter()
                fns[name]()
                times[name].append((time.perf_counter() - t0) * 1e3)
    return {k: (min(v), statistics.median(v)) for k, v in times.items()}, compile_s, kernels


GEMM_RATE_SHAPES = ((1024, 1024, 1024), (256, 512, 512))  # OpenBLAS's class and oneDNN's (rt/gemm_dnnl.c)


def gemm_rate(calls=30):
    """The machine's GEMM rate as cxla reaches it now: the best GFLOP/s of f32 products of the
    two library classes, each compiled by cxla and called back to back."""
    best = 0.0
    rng = np.random.default_rng(1)
    for m, n, k in GEMM_RATE_SHAPES:
        hlo = ("HloModule g\nENTRY main {\n  a = f32[%d,%d] parameter(0)\n  b = f32[%d,%d] parameter(1)\n"
               "  ROOT d = f32[%d,%d] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"
               % (m, k, k, n, m, n))
        exe = cxla.compile(hlo)
        a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
        for _ in range(3):
            exe(a, b)
        for _ in range(calls):
            t0 = time.perf_counter()
            exe(a, b)
            best = max(best, 2.0 * m * n * k / (time.perf_counter() - t0) / 1e9)
    return best


def floor_line(kernels, res, rate):
    """The floor under a step: its GEMM and convolution multiply-adds (cxla's count of the jax
    step) at the machine's GEMM rate, and each contender's best time against it."""
    m = re.search(r"library_macs=(\d+)", kernels.get("cxla jax-HLO", ""))
    if not m or not rate:
        return None
    floor = 2.0 * int(m.group(1)) / (rate * 1e9) * 1e3
    ratios = ", ".join("%s %.2f" % (name, best / floor) for name, (best, _) in res.items() if "jit=off" not in name)
    return ("floor: %.1f MFLOP of products per step at %.0f GFLOP/s = %.3f ms; best / floor: %s; "
            "2x jax.jit's best is %.2fx the floor" % (2 * int(m.group(1)) / 1e6, rate, floor, ratios,
                                                       res["jax.jit"][0] / 2 / floor))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--steps", type=int, default=10, help="steps per turn")
    ap.add_argument("--models", default="mlp,cnn,transformer")
    ap.add_argument("--with", dest="which", default="cxla,torch,torch.compile",
                    help="contenders beside jax.jit (torch.compile takes ~100 s to compile each step here)")
    args = ap.parse_args()
    import jax
    print("cxla %s, jax %s, numpy %s, python %s, %d cpus" % (cxla.__version__, jax.__version__, np.__version__,
                                                          sys.version.split()[0], os.cpu_count()))
    rate = gemm_rate() if "cxla" in args.which else 0.0
    if rate:
        print("GEMM rate: %.0f GFLOP/s (best f32 product of %s through cxla, now)"
              % (rate, " and ".join("%dx%dx%d" % s for s in GEMM_RATE_SHAPES)))
    for model in args.models.split(","):
        res, compile_s, kernels = run(model, args.rounds, args.steps, args.which)
        base = res["jax.jit"]
        print("\n%s step (%d rounds x %d steps): milliseconds per step" % (model, args.rounds, args.steps))
        print("| contender | best | median | jax.jit / it (best, median) |")
        print("|---|---|---|---|")
        for name, (best, med) in res.items():
            print("| %s | %.3f | %.3f | %.2f, %.2f |" % (name, best, med, base[0] / best, base[1] / med))
        line = floor_line(kernels, res, rate)
        if line:
            print(line)
        print("\ncompile, seconds: " + ", ".join("%s %.3f" % kv for kv in compile_s.items()))
        print("kernels per step:")
        for name, k in kernels.items():
            print("  %s: %s" % (name, k))


if __name__ == "__main__":
    main()
