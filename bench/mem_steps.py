#!/usr/bin/env python3
"""Writes the training-step modules bench/mem.py measures: bench/mem/jax_mlp_step.hlo and
bench/mem/jax_cnn_step.hlo, jax.jit(step, donate_argnums=(0, 1)).lower(...).as_text('hlo') of a
flax Adam training step (the models of bench/jax_plugin.py: MLP 784-512-512-10 and the small
CNN, batch 128). jax only ever lives in the venv that runs this, never in the library or tests.

  build/venv/bin/python bench/mem_steps.py
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
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


def step_hlo(model, shape):
    tx = optax.adam(1e-3)

    def loss_fn(params, x, y):
        return optax.softmax_cross_entropy_with_integer_labels(model.apply(params, x), y).mean()

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

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
