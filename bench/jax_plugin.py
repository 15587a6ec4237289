#!/usr/bin/env python3
"""JAX on cxla through the PJRT plugin against JAX's own CPU backend, in one process (issue 20).

Both backends are loaded (JAX_PLATFORMS=cpu,cxla); each contender is the same jax.jit function
called on arrays already on its device, timed in turns (the order rotated every round), with
block_until_ready after the last call of a turn. A turn of a training step is --steps steps in a
row (10), each fed the state the last one returned, as a training loop runs them (train_peers.py
does the same); with one step a turn, every step started right after the other backend's, with
that backend's idle threads still spinning on both cores and its data in the caches: the flax MLP
measured 1.17-1.38x that way where each backend alone, step after step, gave 1.41-1.46x. Rows:
  dispatch     a tiny jitted function (x * 2 + 1 on f32[8]): the per-call cost of each path
  callback     the same with a jax.pure_callback (the identity, in numpy) in the middle: the
               per-call cost of a host callback on each path
  mlp step     a flax MLP (784-512-512-10) Adam training step, batch 128
  cnn step     a flax CNN (two 3x3 convolutions, max-pool, dense) Adam training step, batch 128
  transformer step  a flax pre-LN transformer block (nn.Embed, nn.LayerNorm, 4-head causal
               nn.SelfAttention, nn.gelu MLP 128-512-128, vocabulary 256) Adam training step on
               next-token cross-entropy, batch 8 x 128 tokens (bench/transformer_step.py's sizes)
and the compile time of each (first call: lower + compile + the first run), and of cxla.jit for
the same step (the path before the plugin). The two cxla compiles are timed each in a fresh
process (this script again, --first-call), after JAX CPU's compile of the same case as here:
in one process the first of them pays what a process sets up once for both, since the plugin
and libcxla.so share libLLVM, libdnnl and OpenBLAS (oneDNN's sgemm set-up, about 20 ms of a
core, its convolution kernels made at their first run, LLVM's code paged in), and the second
finds it done; timed in turn here, the plugin (first) looked 60-80 ms slower than cxla.jit for
that reason alone (issue 20, bench/README.md). Ratios are cxla's speed over JAX CPU's (higher:
cxla faster).

  CXLA_BUILD=build PYTHONPATH=python build/venv/bin/python bench/jax_plugin.py [--rounds N] [--steps N]
      [--settle-ms MS]   (an untimed pause before each turn: the other backend's threads stop spinning)
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu,cxla")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from flax import linen as nn  # noqa: E402


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(512)(x))
        x = nn.relu(nn.Dense(512)(x))
        return nn.Dense(10)(x)


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(16, (3, 3))(x))
        x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = nn.relu(nn.Conv(32, (3, 3))(x))
        x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = nn.relu(nn.Dense(128)(x.reshape((x.shape[0], -1))))
        return nn.Dense(10)(x)


class Block(nn.Module):
    """One pre-LN transformer block on next tokens, as flax users write it."""
    @nn.compact
    def __call__(self, tokens):
        t = tokens.shape[1]
        h = nn.Embed(256, 128)(tokens) + self.param("pos", nn.initializers.normal(0.02), (t, 128))
        mask = nn.make_causal_mask(tokens)
        h = h + nn.SelfAttention(num_heads=4, qkv_features=128)(nn.LayerNorm()(h), mask=mask)
        h = h + nn.Dense(128)(nn.gelu(nn.Dense(512)(nn.LayerNorm()(h))))
        return nn.Dense(256, use_bias=False)(nn.LayerNorm()(h))


def train_step(model):
    tx = optax.adam(1e-3)

    def loss_fn(params, x, y):
        return optax.softmax_cross_entropy_with_integer_labels(model.apply(params, x), y).mean()

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return tx, step


def make_case(kind, device):
    rng = np.random.default_rng(0)
    if kind == "dispatch":
        f = jax.jit(lambda x: x * 2 + 1)
        args = (jax.device_put(np.arange(8, dtype=np.float32), device),)
        return f, args, None
    if kind == "callback":
        spec = jax.ShapeDtypeStruct((8,), np.float32)
        f = jax.jit(lambda x: jax.pure_callback(lambda v: v, spec, x * 2) + 1)
        args = (jax.device_put(np.arange(8, dtype=np.float32), device),)
        return f, args, None
    if kind == "transformer":
        model = Block()
        seq = rng.integers(0, 256, (8, 129)).astype(np.int32)
        x, y = seq[:, :-1].copy(), seq[:, 1:].copy()
    else:
        model = MLP() if kind == "mlp" else CNN()
        shape = (128, 784) if kind == "mlp" else (128, 28, 28, 1)
        x = rng.standard_normal(shape).astype(np.float32)
        y = rng.integers(0, 10, 128).astype(np.int32)
    params = model.init(jax.random.PRNGKey(0), x[:1])
    tx, step = train_step(model)
    state = [jax.device_put(params, device), jax.device_put(tx.init(params), device)]
    f = jax.jit(step, donate_argnums=(0, 1))
    xd, yd = jax.device_put(x, device), jax.device_put(y, device)

    def call(*_):
        state[0], state[1], loss = f(state[0], state[1], xd, yd)
        return loss

    return call, (), (step, params, tx, x, y)


def timed(fn, args):
    t0 = time.perf_counter()
    jax.block_until_ready(fn(*args))
    return time.perf_counter() - t0


def cxla_jit_compile_s(extra):
    """Seconds of the first call of the same step through cxla.jit (lowered to HLO text)."""
    try:
        import cxla
    except ImportError:
        return None
    step, params, tx, x, y = extra
    f = cxla.jit(step)
    t0 = time.perf_counter()
    f(params, tx.init(params), x, y)
    return time.perf_counter() - t0


def first_call_s(kind, path):
    """Seconds of the first call of the KIND step through PATH ("plugin": jax.jit on the cxla
    device; "cxla.jit"), in this process after JAX CPU's first call of the same case."""
    fn, fargs, _ = make_case(kind, jax.devices("cpu")[0])
    timed(fn, fargs)
    fn, fargs, extra = make_case(kind, jax.devices("cxla")[0])
    s = timed(fn, fargs) if path == "plugin" else cxla_jit_compile_s(extra)
    return float("nan") if s is None else s


def fresh_first_call_s(kind, path):
    """first_call_s in a new process of this script: the same state for both cxla paths."""
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--first-call", kind, path],
                         capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--steps", type=int, default=10, help="training steps per turn (timed together)")
    ap.add_argument("--settle-ms", type=float, default=0,
                    help="an untimed pause before each turn, for the other backend's idle threads to stop spinning")
    ap.add_argument("--only", default="dispatch,callback,mlp,cnn,transformer")
    ap.add_argument("--first-call", nargs=2, metavar=("KIND", "PATH"),
                    help="print the seconds of KIND's first call through PATH (plugin or cxla.jit) and exit")
    args = ap.parse_args()
    if args.first_call:
        print(first_call_s(*args.first_call))
        return 0
    cpu, cx = jax.devices("cpu")[0], jax.devices("cxla")[0]
    print(f"jax {jax.__version__}; devices {cpu} and {cx}; {args.rounds} rounds, interleaved")
    print("| case | JAX CPU median | cxla median | cxla/JAX speed (median) | (best) | compile JAX / cxla / cxla.jit |")
    print("|---|---|---|---|---|---|")
    for kind in args.only.split(","):
        cases = {}
        compile_s = {}
        for name, dev in (("cpu", cpu), ("cxla", cx)):
            fn, fargs, extra = make_case(kind, dev)
            compile_s[name] = timed(fn, fargs)
            for _ in range(3):
                timed(fn, fargs)
            cases[name] = (fn, fargs)
        samples = {k: [] for k in cases}
        order = list(cases)
        reps = 200 if kind in ("dispatch", "callback") else args.steps
        for r in range(args.rounds):
            for name in order[r % 2:] + order[:r % 2]:
                fn, fargs = cases[name]
                if args.settle_ms:
                    time.sleep(args.settle_ms / 1e3)
                t0 = time.perf_counter()
                for _ in range(reps):
                    out = fn(*fargs)
                jax.block_until_ready(out)
                samples[name].append((time.perf_counter() - t0) / reps)
        med = {k: statistics.median(v) for k, v in samples.items()}
        best = {k: min(v) for k, v in samples.items()}
        cj = None
        if extra:  # the cxla paths' first calls, each in a fresh process (above)
            compile_s["cxla"] = fresh_first_call_s(kind, "plugin")
            cj = fresh_first_call_s(kind, "cxla.jit")
            cj = None if cj != cj else cj
        unit, scale = ("us", 1e6) if kind in ("dispatch", "callback") else ("ms", 1e3)
        print(f"| {kind} | {med['cpu'] * scale:.1f} {unit} | {med['cxla'] * scale:.1f} {unit} | "
              f"{med['cpu'] / med['cxla']:.2f}x | {best['cpu'] / best['cxla']:.2f}x | "
              f"{compile_s['cpu']:.2f} / {compile_s['cxla']:.2f} / {cj:.2f} s |" if cj is not None else
              f"| {kind} | {med['cpu'] * scale:.1f} {unit} | {med['cxla'] * scale:.1f} {unit} | "
              f"{med['cpu'] / med['cxla']:.2f}x | {best['cpu'] / best['cxla']:.2f}x | "
              f"{compile_s['cpu']:.2f} / {compile_s['cxla']:.2f} / - s |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
