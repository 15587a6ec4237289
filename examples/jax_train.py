"""A flax CNN trained on Fashion-MNIST with optax: plain JAX, not one line of it about cxla.

Run it on JAX's own CPU backend and on cxla through its PJRT plugin (docs/pjrt.md):

    python examples/jax_train.py                      # JAX's default backend
    JAX_PLATFORMS=cxla python examples/jax_train.py   # the same program on cxla

Both print the test accuracy after each epoch, the time a training step takes and the time
to the first step (compile included); with the same seed they reach the same accuracy (the
float sums run in another order, so the last digits of the losses may differ).
The data is Debian's dataset-fashion-mnist package (or --data DIR with the four IDX files).
"""
import argparse
import gzip
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import linen as nn


def read_idx(path):
    """An IDX file (the MNIST format: big-endian dims after a magic word) as a numpy array."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(folder, split):
    prefix = "train" if split == "train" else "t10k"
    images = read_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte.gz"))
    return (images.astype(np.float32) / 255.0)[..., None], labels.astype(np.int32)


class CNN(nn.Module):
    """LeNet-style: two 3x3 convolutions with max-pooling, then two dense layers."""

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(16, (3, 3))(x))
        x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = nn.relu(nn.Conv(32, (3, 3))(x))
        x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.relu(nn.Dense(128)(x))
        return nn.Dense(10)(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--train-size", type=int, default=60000, help="first N training images")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    x_train, y_train = load(args.data, "train")
    x_test, y_test = load(args.data, "test")
    x_train, y_train = x_train[:args.train_size], y_train[:args.train_size]

    model = CNN()
    params = model.init(jax.random.PRNGKey(args.seed), jnp.zeros((1, 28, 28, 1)))
    tx = optax.adam(args.lr)
    opt_state = tx.init(params)

    def loss_fn(params, x, y):
        logits = model.apply(params, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    @jax.jit
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    @jax.jit
    def correct(params, x, y):
        return jnp.sum(jnp.argmax(model.apply(params, x), axis=-1) == y)

    def accuracy(params):
        n, hits = 1000, 0
        for i in range(0, len(x_test), n):
            hits += int(correct(params, x_test[i:i + n], y_test[i:i + n]))
        return hits / len(x_test)

    print(f"backend: {jax.default_backend()}, devices: {jax.devices()}")
    rng = np.random.default_rng(args.seed)
    steps_per_epoch = len(x_train) // args.batch
    start = time.perf_counter()
    first_step = None
    for epoch in range(args.epochs):
        order = rng.permutation(len(x_train))
        t0 = time.perf_counter()
        for s in range(steps_per_epoch):
            idx = order[s * args.batch:(s + 1) * args.batch]
            params, opt_state, loss = step(params, opt_state, x_train[idx], y_train[idx])
            if first_step is None:
                loss.block_until_ready()
                first_step = time.perf_counter() - start
        loss.block_until_ready()
        per_step = (time.perf_counter() - t0) / steps_per_epoch
        print(f"epoch {epoch + 1}: loss {float(loss):.4f}, test accuracy {accuracy(params):.4f}, "
              f"{per_step * 1e3:.2f} ms/step")
    print(f"first step (compile included) {first_step:.2f} s; total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
