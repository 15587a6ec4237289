#!/usr/bin/env python3
"""Writes the training-step modules bench/mem.py measures: bench/mem/jax_mlp_step.hlo and
bench/mem/jax_cnn_step.hlo, jax.jit(step, donate_argnums=(0, 1)).lower(...).as_text('hlo') of a
flax Adam training step (the models of bench/jax_plugin.py: MLP 784-512-512-10 and the small
CNN, batch 128). jax only ever lives in the venv that runs this, never in the library or tests.

  build/venv/bin/python bench/mem_steps.py
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import sys  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jax_plugin import CNN, MLP, train_step  # noqa: E402  (the same models and step)


def step_hlo(model, shape):
    tx, step = train_step(model)
    x = np.zeros(shape, np.float32)
    y = np.zeros(shape[0], np.int32)
    params = model.init(jax.random.PRNGKey(0), x[:1])
    return jax.jit(step, donate_argnums=(0, 1)).lower(params, tx.init(params), x, y).as_text("hlo")


def main():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mem")
    for name, model, shape in (("mlp", MLP(), (128, 784)), ("cnn", CNN(), (128, 28, 28, 1))):
        path = os.path.join(here, f"jax_{name}_step.hlo")
        with open(path, "w") as fh:
            fh.write(step_hlo(model, shape))
        print("wrote", path)


if __name__ == "__main__":
    main()
