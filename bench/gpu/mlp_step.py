#!/usr/bin/env python3
"""mlp_step.py — issue 12's training benchmark: one MLP training step (784-128-64-10 with ReLU,
softmax cross-entropy, SGD lr 0.1, as bench/train_peers.py's mlp) on the GPU, jax.jit against
cxla --backend=gpu running the very HLO jax lowers for it (jax.jit(step).lower(...).as_text
("hlo")), at two batch sizes, in one run on the same GPU.

  jax       median wall time of a step, block_until_ready, arguments already on the GPU
  cxla      median wall time of an execution (`cxla run --repeat`), its arguments given from
            host memory each time (copied to the GPU) and its results copied back; and the GPU
            time of its kernels and cuBLASLt calls alone (the trace's CUDA events,
            bench/gpu/kernels.py)
  resident  median wall time of a step through the Python package with every argument already
            on the GPU (cxla.device_put) and the results left there (keep_on_device=True),
            waiting for the loss as jax's block_until_ready waits for the results
Both start from the same weights and batch; the losses must agree (rtol 1e-4).
Run on a machine with a GPU and jax: CXLA=build/cxla python3 bench/gpu/mlp_step.py
(CXLA_BENCH_BACKEND=gpu-emu CXLA_BENCH_STEPS=2 CXLA_BENCH_BATCHES=8 checks it without a GPU)
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave GPU memory to cxla too
import jax
import jax.numpy as jnp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CXLA = os.environ.get("CXLA", "build/cxla")
BACKEND = os.environ.get("CXLA_BENCH_BACKEND", "gpu")  # gpu-emu: a check of this script without a GPU
STEPS = int(os.environ.get("CXLA_BENCH_STEPS", "50"))
BATCHES = [int(b) for b in os.environ.get("CXLA_BENCH_BATCHES", "128,4096").split(",")]


def loss(params, x, y):
    h = x
    for i in range(0, len(params) - 2, 2):
        h = jax.nn.relu(h @ params[i] + params[i + 1])
    logits = h @ params[-2] + params[-1]
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))


def step(params, x, y):
    l, g = jax.value_and_grad(loss)(params, x, y)
    return l, [p - 0.1 * gp for p, gp in zip(params, g)]


def inputs(batch, rng):
    dims = [784, 128, 64, 10]
    params = []
    for a, b in zip(dims, dims[1:]):
        lim = np.sqrt(6.0 / (a + b))
        params += [rng.uniform(-lim, lim, (a, b)).astype(np.float32), np.zeros(b, np.float32)]
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    return params, x, y


def time_jax(params, x, y):
    f = jax.jit(step)
    p, xd, yd = [jax.device_put(a) for a in params], jax.device_put(x), jax.device_put(y)
    for _ in range(5):
        jax.block_until_ready(f(p, xd, yd))
    times = []
    for _ in range(STEPS):
        t0 = time.perf_counter()
        jax.block_until_ready(f(p, xd, yd))
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6, float(f(p, xd, yd)[0])


def time_cxla(params, x, y, tmp):
    hlo = jax.jit(step).lower(params, x, y).as_text(dialect="hlo")
    path = os.path.join(tmp, "step.hlo")
    open(path, "w").write(hlo)
    files = []
    for i, a in enumerate(params + [x, y]):
        files.append(os.path.join(tmp, f"in{i}.npy"))
        np.save(files[-1], a)
    trace = os.path.join(tmp, "t.json")
    r = subprocess.run([CXLA, "run", path, *files, f"--backend={BACKEND}", f"--repeat={STEPS}", f"--trace={trace}",
                        "--out", os.path.join(tmp, "out")], capture_output=True, text=True)
    if r.returncode:
        sys.exit("cxla: " + r.stderr.strip())
    m = re.search(r"median ([0-9.]+) (us|ms|s)\b", r.stderr)
    wall = float(m.group(1)) * {"us": 1, "ms": 1e3, "s": 1e6}[m.group(2)]
    gpu = subprocess.run([sys.executable, os.path.join(HERE, "kernels.py"), trace, "1"], capture_output=True,
                         text=True, check=True).stdout.split()[0]
    got = float(np.load(os.path.join(tmp, "out", "0.npy")))
    return wall, float(gpu), got


def time_resident(params, x, y, hlo):
    """The step with its arguments on the device and its results left there (cxla.Buffer)."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    import cxla
    f = cxla.compile(hlo, backend=BACKEND, keep_on_device=True)
    args = [cxla.device_put(a, BACKEND) for a in params + [x, y]]
    for _ in range(5):
        np.asarray(f(*args)[0])
    times = []
    for _ in range(STEPS):
        t0 = time.perf_counter()
        out = f(*args)
        loss_value = float(np.asarray(out[0]))  # waits for the device's stream, as block_until_ready
        times.append(time.perf_counter() - t0)
    stats = cxla.memory_stats(BACKEND)
    return statistics.median(times) * 1e6, loss_value, stats["driver_allocs"]


def main():
    print(f"jax {jax.__version__} on {jax.devices()[0].device_kind}")
    for batch in BATCHES:
        params, x, y = inputs(batch, np.random.default_rng(0))
        jt, jl = time_jax(params, x, y)
        with tempfile.TemporaryDirectory() as tmp:
            wall, gpu, cl = time_cxla(params, x, y, tmp)
        rt, rl, allocs = time_resident(params, x, y, jax.jit(step).lower(params, x, y).as_text(dialect="hlo"))
        ok = abs(cl - jl) <= 1e-4 * abs(jl) + 1e-6 and abs(rl - jl) <= 1e-4 * abs(jl) + 1e-6
        print(f"mlp step, batch {batch}: jax.jit {jt:.1f} us; cxla {wall:.1f} us per execution with host copies, "
              f"{rt:.1f} us with buffers on the device ({allocs} driver allocations in all), "
              f"{gpu:.1f} us of GPU kernels; jax/cxla wall {jt / wall:.2f}, resident {jt / rt:.2f}, "
              f"GPU-time {jt / gpu:.2f}; loss jax {jl:.6f} cxla {cl:.6f} resident {rl:.6f}{'' if ok else ' DIFFERENT'}")


if __name__ == "__main__":
    main()
