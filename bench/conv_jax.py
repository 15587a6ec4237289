#!/usr/bin/env python3
"""conv_jax.py — a convolution layer's forward and both gradients (jax.grad of a sum of squares),
f32 and bf16, through the cxla PJRT plugin against JAX's own CPU backend, in one process
(JAX_PLATFORMS=cxla,cpu), contenders in turns (bench/turns.py). The layers are the LeNet /
flax CNN ones (NHWC, HWIO, 3x3 SAME). Issue 22 found bf16 convolutions slower than jax.jit;
CXLA_FLAGS=--cpu-onednn=off gives cxla's path before oneDNN.

  PYTHONPATH=/tmp/egg:python CXLA_BUILD=build JAX_PLATFORMS=cxla,cpu \\
      build/venv/bin/python bench/conv_jax.py [--rounds 15]
(/tmp/egg from `cd python && python setup.py -q egg_info --egg-base /tmp/egg`.)
"""
import argparse
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from turns import time_case  # noqa: E402

LAYERS = [("conv2 b128 16->32 14x14", (128, 14, 14, 16), (3, 3, 16, 32)),
          ("conv1 b128 1->16 28x28", (128, 28, 28, 1), (3, 3, 1, 16))]


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def loss(x, w):
    return jnp.sum(conv(x, w).astype(jnp.float32) ** 2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    a = ap.parse_args()
    devs = {"cxla": jax.devices("cxla")[0], "jax cpu": jax.devices("cpu")[0]}
    step = jax.jit(jax.grad(loss, argnums=(0, 1)))
    rng = np.random.default_rng(0)
    print("| layer | type | cxla ms (median) | jax.jit ms | jax / cxla, median (best) | max rel diff |")
    print("|---|---|---|---|---|---|")
    for name, xs, ws in LAYERS:
        x = rng.standard_normal(xs).astype(np.float32)
        w = (rng.standard_normal(ws) * 0.1).astype(np.float32)
        for dt in (jnp.float32, jnp.bfloat16):
            args = {k: (jax.device_put(jnp.asarray(x, dt), d), jax.device_put(jnp.asarray(w, dt), d))
                    for k, d in devs.items()}
            outs = {k: [np.asarray(o, np.float32) for o in step(*v)] for k, v in args.items()}
            diff = max(float(np.max(np.abs(p - q)) / (np.max(np.abs(q)) + 1e-30))
                       for p, q in zip(outs["cxla"], outs["jax cpu"]))
            fns = {k: (lambda v=v: jax.block_until_ready(step(*v))) for k, v in args.items()}
            t = time_case(fns, a.rounds, 3, 1e3)
            print("| %s | %s | %.2f | %.2f | %.2f (%.2f) | %.1e |" % (
                name, jnp.dtype(dt).name, t["cxla"][1], t["jax cpu"][1], t["jax cpu"][1] / t["cxla"][1],
                t["jax cpu"][0] / t["cxla"][0], diff))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
