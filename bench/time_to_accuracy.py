#!/usr/bin/env python3
"""time_to_accuracy.py — the LeNet-style CNN of examples/train to a test accuracy on Fashion-MNIST,
in cxla, jax.jit and torch eager, on the same cores: seconds from starting each program to the
evaluation that first reaches the target, everything included (imports, reading the data, compile).

The recipe is examples/train's, written the way each framework's user would: conv3x3(16) SAME + ReLU
+ 2x2 max-pool, conv3x3(32) likewise, dense(128) + ReLU, dense(10); softmax cross-entropy; He-normal
weights before a ReLU, Glorot-uniform otherwise, zero biases; Adam (lr 1e-3, 0.9, 0.999, 1e-8) at a
constant rate; batch 64 from a fresh shuffle each epoch; the 10,000 test images evaluated every 200
steps in batches of 500. The random streams differ between frameworks, so the steps to reach the
target differ a little: the table prints them beside the seconds.

Usage:
  python3 bench/time_to_accuracy.py [--cxla build/examples/train] [--jax-python build/venv/bin/python]
                                    [--torch-python /usr/bin/python3] [--target 0.90] [--rounds 1]
  (a framework whose python lacks it is skipped, saying so). Child modes: --child jax|torch.
"""
import argparse
import gzip
import os
import re
import statistics
import subprocess
import sys
import time

DATA = "/usr/share/datasets/fashion-mnist"
BATCH, EVAL_EVERY, EVAL_BATCH, MAX_STEPS = 64, 200, 500, 9400
REACHED = re.compile(r"reached test accuracy \S+ at step (\d+)")
STEP_MS = re.compile(r"median (?:step time )?([0-9.]+) ms")


def load_idx(data):
    import numpy as np

    def read(name):
        path = os.path.join(data, name)
        raw = gzip.open(path + ".gz").read() if os.path.exists(path + ".gz") else open(path, "rb").read()
        return raw

    def images(name):
        raw = read(name)
        n = int.from_bytes(raw[4:8], "big")
        return np.frombuffer(raw, np.uint8, offset=16).reshape(n, 784).astype(np.float32) / 255.0

    def labels(name):
        return np.frombuffer(read(name), np.uint8, offset=8).astype(np.int32)

    return (images("train-images-idx3-ubyte"), labels("train-labels-idx1-ubyte"),
            images("t10k-images-idx3-ubyte"), labels("t10k-labels-idx1-ubyte"))


def init_weights(seed):
    """HWIO conv kernels and [in, out] dense weights, as examples/train_models.c declares them."""
    import numpy as np
    rng = np.random.default_rng(seed)
    he = lambda shape, fan_in: (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    lim = np.sqrt(6.0 / (128 + 10))
    return [he((3, 3, 1, 16), 9), np.zeros(16, np.float32), he((3, 3, 16, 32), 144), np.zeros(32, np.float32),
            he((1568, 128), 1568), np.zeros(128, np.float32),
            rng.uniform(-lim, lim, (128, 10)).astype(np.float32), np.zeros(10, np.float32)]


def batches(n, seed):
    import numpy as np
    rng = np.random.default_rng(seed + 1)
    while True:
        perm = rng.permutation(n)
        for i in range(0, n - BATCH + 1, BATCH):
            yield perm[i:i + BATCH]


def train_loop(step, accuracy, xtr, ytr, target):
    """Runs step(idx) until accuracy() reaches target at an evaluation; prints progress lines,
    then the median time of a training step (its batch gathered, the update done), as
    examples/train does."""
    times = []
    for s, idx in enumerate(batches(len(xtr), 1), 1):
        t0 = time.perf_counter()
        step(idx)
        times.append(time.perf_counter() - t0)
        if s % EVAL_EVERY == 0:
            acc = accuracy()
            print(f"step {s} test accuracy {acc:.4f}", flush=True)
            if acc >= target:
                print(f"reached test accuracy {target} at step {s}", flush=True)
                break
        if s >= MAX_STEPS:
            print("did not reach the target", flush=True)
            break
    print(f"median step time {1e3 * statistics.median(times[1:] or times):.3f} ms", flush=True)


def child_jax(target):
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    xtr, ytr, xte, yte = load_idx(DATA)
    params = [jnp.asarray(w) for w in init_weights(1)]

    def logits(p, x):
        x = x.reshape(-1, 28, 28, 1)
        for k, b in ((p[0], p[1]), (p[2], p[3])):
            x = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
            x = jax.nn.relu(x + b)
            x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        x = jax.nn.relu(x.reshape(x.shape[0], -1) @ p[4] + p[5])
        return x @ p[6] + p[7]

    def loss(p, x, y):
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits(p, x)), y[:, None], axis=1))

    opt = optax.adam(1e-3, b1=0.9, b2=0.999, eps=1e-8)
    state = opt.init(params)

    @jax.jit
    def train_step(p, s, x, y):
        g = jax.grad(loss)(p, x, y)
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s

    predict = jax.jit(lambda p, x: jnp.argmax(logits(p, x), axis=1))
    box = {"p": params, "s": state}

    def step(idx):
        box["p"], box["s"] = train_step(box["p"], box["s"], xtr[idx], ytr[idx])
        jax.block_until_ready(box["p"])

    def accuracy():
        hits = sum(int(np.sum(np.asarray(predict(box["p"], xte[i:i + EVAL_BATCH])) == yte[i:i + EVAL_BATCH]))
                   for i in range(0, len(xte), EVAL_BATCH))
        return hits / len(xte)

    train_loop(step, accuracy, xtr, ytr, target)


def child_torch(target):
    import numpy as np
    import torch
    torch.set_num_threads(os.cpu_count() or 1)
    xtr, ytr, xte, yte = load_idx(DATA)
    w = init_weights(1)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(1568, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    with torch.no_grad():  # the same initial weights: HWIO -> OIHW, [in, out] -> [out, in]; NHWC flatten order
        net[0].weight.copy_(torch.from_numpy(w[0].transpose(3, 2, 0, 1).copy()))
        net[3].weight.copy_(torch.from_numpy(w[2].transpose(3, 2, 0, 1).copy()))
        dense1 = w[4].reshape(7, 7, 32, 128).transpose(2, 0, 1, 3).reshape(1568, 128)
        net[7].weight.copy_(torch.from_numpy(dense1.T.copy()))
        net[9].weight.copy_(torch.from_numpy(w[6].T.copy()))
        for i, b in ((0, 1), (3, 3), (7, 5), (9, 7)):
            net[i].bias.copy_(torch.from_numpy(w[b]))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    xtr_t, ytr_t = torch.from_numpy(xtr).reshape(-1, 1, 28, 28), torch.from_numpy(ytr).long()
    xte_t = torch.from_numpy(xte).reshape(-1, 1, 28, 28)

    def step(idx):
        idx = torch.from_numpy(idx)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(xtr_t[idx]), ytr_t[idx]).backward()
        opt.step()

    def accuracy():
        with torch.no_grad():
            hits = sum(int((net(xte_t[i:i + EVAL_BATCH]).argmax(1).numpy() == yte[i:i + EVAL_BATCH]).sum())
                       for i in range(0, len(xte), EVAL_BATCH))
        return hits / len(xte)

    train_loop(step, accuracy, xtr, ytr, target)


def timed(cmd, env=None):
    """(seconds from starting cmd to its 'reached' line, the step, its median step ms); (None,
    why) if it did not."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    hit, step_ms, tail = None, float("nan"), []
    for line in p.stdout:
        tail = (tail + [line.rstrip()])[-5:]
        m = REACHED.search(line)
        if m and hit is None:
            hit = (time.perf_counter() - t0, int(m.group(1)))
        m = STEP_MS.search(line)
        if m:
            step_ms = float(m.group(1))
    p.wait()
    if hit is None:
        return None, "; ".join(tail) or f"exit status {p.returncode}"
    return hit + (step_ms,), None


def has_module(python, module):
    return python and subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", choices=["jax", "torch"])
    ap.add_argument("--cxla", default="build/examples/train")
    ap.add_argument("--jax-python", default="build/venv/bin/python")
    ap.add_argument("--torch-python", default="/usr/bin/python3")
    ap.add_argument("--target", type=float, default=0.90)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", default="cxla,jax,torch", help="comma-separated frameworks")
    a = ap.parse_args()
    if a.child:
        return (child_jax if a.child == "jax" else child_torch)(a.target)
    me = os.path.abspath(__file__)
    runs = {"cxla": [a.cxla, "--model=cnn", "--decay=0", f"--target-accuracy={a.target}", f"--eval-every={EVAL_EVERY}",
                     f"--steps={MAX_STEPS}", "--trace=", "--log-every=100000"],
            "jax": [a.jax_python, me, "--child", "jax", "--target", str(a.target)],
            "torch": [a.torch_python, me, "--child", "torch", "--target", str(a.target)]}
    wanted = [f for f in a.only.split(",") if f in runs]
    if "jax" in wanted and not has_module(a.jax_python, "optax"):
        print(f"jax: skipped ({a.jax_python} cannot import jax and optax)")
        wanted.remove("jax")
    if "torch" in wanted and not has_module(a.torch_python, "torch"):
        print(f"torch: skipped ({a.torch_python} cannot import torch)")
        wanted.remove("torch")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    results, failed = {f: [] for f in wanted}, 0
    for r in range(a.rounds):  # the frameworks in turn, so that each sees the machine alike
        for f in wanted:
            hit, why = timed(runs[f], env)
            if hit is None:
                print(f"{f}: did not reach {a.target}: {why}")
                failed += 1
                continue
            results[f].append(hit)
            print(f"round {r + 1}: {f} reached {a.target} at step {hit[1]} after {hit[0]:.1f} s "
                  f"(median training step {hit[2]:.2f} ms)", flush=True)
    print(f"\ntime to test accuracy {a.target} (LeNet-style CNN, Fashion-MNIST, {os.cpu_count()} cores), median of {a.rounds}:")
    med = {f: [statistics.median(h[i] for h in hits) for i in range(3)] for f, hits in results.items() if hits}
    base = med.get("cxla")
    for f, (sec, steps, step_ms) in med.items():
        ratio = f"  {sec / base[0]:.2f}x cxla's time, {step_ms / base[2]:.2f}x its step" if base and f != "cxla" else ""
        print(f"  {f:6s} {sec:7.1f} s  {steps:6.0f} steps  training step {step_ms:6.2f} ms{ratio}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
