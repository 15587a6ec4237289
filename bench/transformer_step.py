"""A small pre-LN transformer block as JAX users write it (issue 22): the model both
bench/train_peers.py and bench/compare_jax.py time as a training step.

One block on a next-token task: token embedding + learned positions, layer norm, 4-head causal
self-attention (q/k/v/o projections, scores as a batched einsum, the mask by jnp.where, softmax),
residual, layer norm, MLP 128-512-128 with gelu (jax.nn.gelu's default tanh form), residual,
final layer norm, projection to the vocabulary, softmax cross-entropy on integer labels.
Batch 8, sequence 128, d_model 128: a few milliseconds per step on two cores.

Only numpy and (inside the functions that need it) jax are imported, so both benchmark
scripts can share it.
"""
import numpy as np

BATCH, SEQ, D, HEADS, MLP, VOCAB = 8, 128, 128, 4, 512, 256
NAMES = ("emb", "pos", "ln1_g", "ln1_b", "wq", "wk", "wv", "wo", "ln2_g", "ln2_b",
         "w1", "b1", "w2", "b2", "lnf_g", "lnf_b", "wout")


def init_params(rng):
    """Weights in jax's layout ([in, out]); gains 1, biases 0; the order of NAMES."""
    def glorot(a, b):
        lim = np.sqrt(6.0 / (a + b))
        return rng.uniform(-lim, lim, (a, b)).astype(np.float32)
    ones, zeros = (lambda n: np.ones(n, np.float32)), (lambda n: np.zeros(n, np.float32))
    return [(rng.standard_normal((VOCAB, D)) * 0.02).astype(np.float32),
            (rng.standard_normal((SEQ, D)) * 0.02).astype(np.float32),
            ones(D), zeros(D), glorot(D, D), glorot(D, D), glorot(D, D), glorot(D, D),
            ones(D), zeros(D), glorot(D, MLP), zeros(MLP), glorot(MLP, D), zeros(D),
            ones(D), zeros(D), glorot(D, VOCAB)]


def batch(rng):
    """Tokens [BATCH, SEQ] and the next tokens as labels (int32)."""
    seq = rng.integers(0, VOCAB, (BATCH, SEQ + 1)).astype(np.int32)
    return seq[:, :-1].copy(), seq[:, 1:].copy()


def layer_norm(h, g, b):
    """Layer norm over the last axis (eps 1e-5), in jax.numpy."""
    import jax
    import jax.numpy as jnp
    mu = jnp.mean(h, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(h - mu), axis=-1, keepdims=True)
    return (h - mu) * jax.lax.rsqrt(var + 1e-5) * g + b


def attention(h, wq, wk, wv, wo, heads=HEADS):
    """Causal multi-head self-attention of h [batch, seq, d], in jax.numpy."""
    import jax
    import jax.numpy as jnp
    b, t, d = h.shape
    split = lambda a: a.reshape(b, t, heads, d // heads)
    q, k, v = split(h @ wq), split(h @ wk), split(h @ wv)
    s = jnp.einsum("bthd,bshd->bhts", q, k) / np.float32(np.sqrt(d // heads))
    causal = jnp.tril(jnp.ones((t, t), bool))
    s = jnp.where(causal, s, -1e9)
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum("bhts,bshd->bthd", p, v).reshape(b, t, d) @ wo


def block(h, ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, w1, b1, w2, b2, heads=HEADS):
    """One pre-LN block: attention and the gelu MLP, each added back to h."""
    import jax
    h = h + attention(layer_norm(h, ln1_g, ln1_b), wq, wk, wv, wo, heads)
    return h + jax.nn.gelu(layer_norm(h, ln2_g, ln2_b) @ w1 + b1) @ w2 + b2


def loss(heads=HEADS):
    """loss(params, x, y) -> mean cross-entropy, in jax.numpy (sizes from the params' shapes)."""
    import jax
    import jax.numpy as jnp

    def f(params, x, y):
        (emb, pos, ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b,
         w1, b1, w2, b2, lnf_g, lnf_b, wout) = params
        h = emb[x] + pos
        h = block(h, ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, w1, b1, w2, b2, heads)
        logits = layer_norm(h, lnf_g, lnf_b) @ wout
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, y[..., None], axis=-1))
    return f
