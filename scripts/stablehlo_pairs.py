#!/usr/bin/env python3
"""stablehlo_pairs.py — writes tests/stablehlo/programs/: for each small JAX program, the
StableHLO portable artifact (MLIR bytecode, VHLO at target 1.16.3) AND jaxlib's HLO text of the
same lowering, the inputs, and JAX's own outputs, so that tests/unit/test_stablehlo_translate.c
can check that cxla's translation of the artifact computes what the HLO text computes and what
JAX computed (an independent implementation).

Files per program NAME:
  NAME.mlirbc        serialize_portable_artifact(lowered.compiler_ir('stablehlo'), "1.16.3") as jax.export does
                     (or, for names starting with export_, jax.export's mlir_module_serialized)
  NAME.hlo           lowered.as_text(dialect='hlo') (none for the hand-written handwritten_ops)
  NAME.in<i>.npy     the flattened inputs, in parameter order
  NAME.out<i>.npy    JAX's outputs (jax.jit(f)(*inputs) on the CPU), flattened
  NAME.tol           "rtol atol" for comparing floats with JAX's outputs
and index.txt, one program name per line; refuse_*.mlirbc are artifacts cxla must refuse.

Run with the venv that has jax 0.10.2, jaxlib, flax, optax:
  /work/main/build/venv/bin/python scripts/stablehlo_pairs.py [OUTDIR]
Inputs come from a fixed seed, so rerunning writes the same files (up to jaxlib's version).
Numpy has no bfloat16 or complex .npy reader in cxla, so programs with bf16 or complex values
take and return f32 and convert inside.
"""
import os
import sys

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax._src.lib import _jax  # noqa: E402

TARGET = "1.16.3"
rng = np.random.default_rng(20260)
PROGRAMS = []


def program(name, rtol=1e-5, atol=1e-5):
    def wrap(make):
        PROGRAMS.append((name, make, rtol, atol))
        return make
    return wrap


def f32(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def i32(*shape, lo=0, hi=10):
    return rng.integers(lo, hi, size=shape, dtype=np.int32)


# ---- programs: each returns (f, args) -------------------------------------------------------

@program("elementwise")
def _():
    def f(x, y, k):
        a = jnp.sin(x) * jnp.exp(-y) + jnp.tanh(x) / (1.0 + y * y) + jnp.sqrt(jnp.abs(x))
        b = jnp.log1p(jnp.abs(y)) + jnp.arctan2(x, y) + jnp.expm1(x) * jax.nn.sigmoid(y)
        c = jnp.floor(x * 3) + jnp.ceil(y * 3) + jnp.round(x * 5) + jnp.sign(y) + lax.rsqrt(jnp.abs(y) + 1)
        d = jnp.where(x > y, jnp.maximum(x, y), jnp.minimum(x, y)) + jnp.clip(x, -0.5, 0.5) + lax.cbrt(y)
        e = jnp.power(jnp.abs(x) + 0.5, y) + jnp.cos(y) + jnp.tan(x * 0.5) + lax.erf(x) + jnp.log(jnp.abs(x) + 1)
        ki = (k << 2) ^ (k >> 1) | (k & 3)
        kj = lax.rem(k * 7 + 3, 5) + lax.div(k + 11, 3) + lax.population_count(k) + lax.clz(k)
        kk = lax.shift_right_logical(k, 1) - jnp.abs(k - 5) - (-k)
        isf = jnp.isfinite(x / (y - y))  # nan and inf: none finite where y - y == 0
        bits = lax.bitcast_convert_type(x, jnp.int32) & 0xFF
        return a + b, c + d + e, ki + kj + kk, isf, bits, x.astype(jnp.int32) + k, lax.reduce_precision(x, 5, 10)
    return f, (f32(4, 5), f32(4, 5), i32(4, 5, lo=0, hi=50))


@program("shapes")
def _():
    def f(x, y, i):
        r = x.reshape(5, 4).T
        c = jnp.concatenate([r, y], axis=1)
        p = jnp.pad(c, ((1, 2), (0, 1)), constant_values=3.0)
        p2 = lax.pad(x, -1.0, ((1, 0, 1), (0, -1, 0)))
        s = p[1:5:2, ::3]
        rev = jnp.flip(x, axis=(0, 1))
        b = jnp.broadcast_to(x[:, None, :], (4, 3, 5))
        ds = lax.dynamic_slice(x, (i, i + 1), (2, 3))
        dus = lax.dynamic_update_slice(x, jnp.full((2, 2), 9.0, jnp.float32), (i, 3))
        io = lax.broadcasted_iota(jnp.int32, (3, 4), 1) + jnp.arange(3, dtype=jnp.int32)[:, None]
        return c, p, p2, s, rev, b, ds, dus, io
    return f, (f32(4, 5), f32(4, 2), np.int32(1))


@program("dot_general")
def _():
    def f(a, b, c, d):
        bm = jnp.einsum("bij,bjk->bik", a, b, precision=lax.Precision.HIGHEST)
        mm = jnp.dot(c, d, preferred_element_type=jnp.float32)
        outer = lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
        v = jnp.dot(c[0], d[:, 1])
        return bm, mm, outer, v
    return f, (f32(2, 3, 4), f32(2, 4, 5), f32(3, 6), f32(6, 2))


@program("conv_nhwc", rtol=1e-4, atol=1e-4)
def _():
    def f(x, w, w2):
        y = lax.conv_general_dilated(x, w, window_strides=(2, 1), padding=((1, 2), (0, 1)),
                                     lhs_dilation=(1, 1), rhs_dilation=(1, 2),
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2)
        z = lax.conv_general_dilated(x, w2, window_strides=(1, 1), padding=((1, 1), (0, 1)), lhs_dilation=(2, 1),
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return y, z
    return f, (f32(2, 7, 6, 4), f32(3, 2, 2, 6), f32(2, 2, 4, 3))


@program("conv_nchw", rtol=1e-4, atol=1e-4)
def _():
    def f(x, w):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
        z = lax.conv_general_dilated(x, w, (2, 2), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                     precision=lax.Precision.HIGHEST)
        return jax.nn.relu(y), z
    return f, (f32(2, 3, 8, 8), f32(4, 3, 3, 3))


@program("reduce")
def _():
    def f(x, k):
        return (jnp.sum(x, axis=1), jnp.max(x, axis=0), jnp.argmax(x, axis=1), jnp.argmin(x, axis=0),
                jnp.prod(x[:2], axis=(0, 1)), jnp.any(x > 0.9), jnp.sum(k), jnp.min(k, axis=1))
    return f, (f32(5, 6), i32(5, 6, lo=-20, hi=20))


@program("reduce_window")
def _():
    def f(x):
        mp = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        ap = lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), ((0, 0), (1, 1), (1, 1), (0, 0))) / 9.0
        cs = jnp.cumsum(x[0, :, :, 0], axis=1)
        return mp, ap, cs
    return f, (f32(2, 6, 6, 3),)


@program("select_and_scatter")
def _():
    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def f(x, g):
        _, vjp = jax.vjp(pool, x)
        return vjp(g)[0]
    return f, (f32(2, 6, 6, 3), f32(2, 3, 3, 3))


@program("while_loops")
def _():
    def f(x, n):
        y = lax.fori_loop(0, 10, lambda i, c: c * 0.9 + jnp.sin(c) * i.astype(jnp.float32) * 0.01, x)
        z = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5), (jnp.int32(0), x[0]))

        def step(c, xi):
            c = c * 0.5 + xi
            return c, c * 2.0
        last, ys = lax.scan(step, jnp.zeros(x.shape[1], jnp.float32), x)
        return y, z[0], z[1], last, ys
    return f, (f32(4, 3), np.int32(5))


@program("cond_case")
def _():
    def f(x, p, i):
        a = lax.cond(p > 0, lambda v: jnp.sin(v) * 2.0, lambda v: jnp.cos(v) - 1.0, x)
        b = lax.switch(i, [lambda v: v + 1.0, lambda v: v * v, lambda v: -v], x)
        c = lax.cond(p < 0, lambda v: v.sum(), lambda v: v.max(), x)
        return a, b, c
    return f, (f32(3, 4), np.float32(0.5), np.int32(1))


@program("gather_scatter")
def _():
    def f(x, idx, v):
        g = x[idx]
        g2 = x[:, idx[:2]]
        g3 = x[idx[0], 1:3]
        s = x.at[idx].add(v)
        s2 = x.at[idx[1], 0].set(-5.0)
        s3 = x.at[idx].max(v * 3.0)
        tk = jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1)
        return g, g2, g3, s, s2, s3, tk
    return f, (f32(6, 4), np.array([3, 1, 3, 0], np.int32), f32(4, 4))


@program("sort")
def _():
    def f(k, v, x):
        a, b = lax.sort((k, v), num_keys=1)
        c = jnp.sort(x, axis=0)
        d = jnp.argsort(-x, axis=1, stable=True)
        vals, ids = lax.top_k(x, 2)
        return a, b, c, d, vals, ids
    return f, (i32(8, lo=0, hi=4), f32(8), f32(5, 4))


@program("iota")
def _():
    def f(x):
        a = jnp.arange(12, dtype=jnp.float32).reshape(3, 4) * x
        b = lax.iota(jnp.int32, 5)
        c = jnp.eye(4, dtype=jnp.float32)
        d = jnp.tri(3, 4, 1, dtype=jnp.int32)
        return a, b, c, d
    return f, (f32(3, 4),)


@program("rng_bit_generator")
def _():
    def f(key):
        k2, bits = lax.rng_bit_generator(key, (3, 5), jnp.uint32, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
        k3, bits2 = lax.rng_bit_generator(key, (7,), jnp.uint32, algorithm=lax.RandomAlgorithm.RNG_PHILOX)
        return k2, bits, k3, bits2
    return f, (np.array([1, 2, 3, 4], np.uint32),)


@program("jax_random", rtol=1e-5, atol=1e-6)
def _():
    def f(seed):
        key = jax.random.key(seed)
        k1, k2 = jax.random.split(key)
        return jax.random.uniform(k1, (3, 4)), jax.random.normal(k2, (5,)), jax.random.randint(k1, (4,), 0, 100)
    return f, (np.uint32(42),)


@program("linalg", rtol=1e-4, atol=1e-4)
def _():
    def f(a, b):
        spd = a @ a.T + 4.0 * jnp.eye(4, dtype=jnp.float32)
        ch = jnp.linalg.cholesky(spd)
        x = jnp.linalg.solve(spd + a, b)
        tri = jax.scipy.linalg.solve_triangular(ch, b, lower=True)
        return ch, x, tri
    return f, (f32(4, 4), f32(4, 2))


@program("linalg_decomp", rtol=1e-3, atol=1e-3)
def _():
    # QR, symmetric eigenvalues, singular values: lapack's geqrf/orgqr, syevd, gesdd through
    # typed-FFI custom calls; only basis-independent results are compared
    def f(a):
        q, r = jnp.linalg.qr(a)
        w = jnp.linalg.eigvalsh(a + a.T)
        s = jnp.linalg.svd(a, compute_uv=False)
        return jnp.abs(r), q @ r, w, s
    return f, (f32(4, 4),)


@program("fft", rtol=1e-4, atol=1e-4)
def _():
    def f(x):
        r = jnp.fft.rfft2(x)
        back = jnp.fft.irfft2(r, s=x.shape)
        return jnp.abs(r), back
    return f, (f32(4, 6),)


@program("remat_scan", rtol=1e-5, atol=1e-5)
def _():
    # jax.checkpoint lowers to an optimization_barrier; a scan with a pytree carry
    @jax.checkpoint
    def layer(w, x):
        return jnp.tanh(x @ w)

    def f(w, xs):
        def step(c, x):
            h = layer(w, x + c["h"])
            return {"h": h, "n": c["n"] + 1}, h.sum()
        c, ys = lax.scan(step, {"h": jnp.zeros(3, jnp.float32), "n": jnp.int32(0)}, xs)
        g = jax.grad(lambda w: layer(w, xs[0]).sum())(w)
        return c["h"], c["n"], ys, g
    return f, (f32(3, 3), f32(5, 3))


@program("mixed_types", rtol=1e-3, atol=1e-3)
def _():
    def f(x, k):
        h = x.astype(jnp.float16)
        y = (h * h + jnp.float16(1)).astype(jnp.float32)
        b = k.astype(jnp.int8) * jnp.int8(3)
        u = k.astype(jnp.uint32) >> 1
        d = x.astype(jnp.float64) if jax.config.jax_enable_x64 else x
        one_hot = jax.nn.one_hot(k % 4, 4)
        return y, b.astype(jnp.int32), u, d * 2, one_hot, jnp.argmax(one_hot, axis=-1)
    return f, (f32(3, 4), i32(3, 4, lo=-8, hi=8))


@program("attention", rtol=1e-4, atol=1e-5)
def _():
    def f(q, k, v):
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(jnp.float32(q.shape[-1]))
        mask = jnp.tril(jnp.ones((q.shape[1], k.shape[1]), bool))
        s = jnp.where(mask, s, -1e9)
        p = jax.nn.softmax(s, axis=-1)
        return jnp.einsum("bhqk,bkhd->bqhd", p, v), jax.nn.gelu(q).mean(), jax.nn.logsumexp(s, axis=-1)
    return f, (f32(2, 5, 2, 4), f32(2, 5, 2, 4), f32(2, 5, 2, 4))


@program("bf16", rtol=2e-2, atol=2e-2)
def _():
    def f(x, w):
        xb, wb = x.astype(jnp.bfloat16), w.astype(jnp.bfloat16)
        y = jnp.tanh(xb @ wb) * jnp.bfloat16(1.5) + xb[:, :1]
        return y.astype(jnp.float32), jnp.sum(y, axis=0, dtype=jnp.float32)
    return f, (f32(3, 4), f32(4, 5))


@program("complex", rtol=1e-4, atol=1e-4)
def _():
    def f(x, y):
        z = lax.complex(x, y)
        w = z * z + jnp.exp(z) / (z + 2.0) - jnp.conj(z) * 1j
        m = jnp.abs(w) + jnp.angle(z)
        fz = jnp.fft.fft(z)
        return jnp.real(w), jnp.imag(w), m, jnp.real(fz), jnp.imag(fz), jnp.sqrt(z).real
    return f, (f32(2, 8), f32(2, 8))


@program("mlp_train_step", rtol=1e-4, atol=1e-5)
def _():
    def loss(params, x, y):
        (w1, b1), (w2, b2) = params
        h = jax.nn.relu(x @ w1 + b1)
        out = h @ w2 + b2
        return jnp.mean(jax.nn.log_softmax(out) * -y)

    def f(w1, b1, w2, b2, x, y):
        params = ((w1, b1), (w2, b2))
        l, g = jax.value_and_grad(loss)(params, x, y)
        new = jax.tree_util.tree_map(lambda p, q: p - 0.1 * q, params, g)
        return l, new
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=8)]
    return f, (f32(5, 16) * 0.5, f32(16) * 0.1, f32(16, 3) * 0.5, f32(3) * 0.1, f32(8, 5), y)


@program("flax_cnn_step", rtol=1e-4, atol=1e-5)
def _():
    import flax.linen as nn

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Conv(4, (3, 3))(x)
            x = nn.relu(x)
            x = nn.avg_pool(x, (2, 2), (2, 2))
            x = x.reshape(x.shape[0], -1)
            return nn.Dense(3)(x)

    model = CNN()
    x0 = f32(2, 6, 6, 1)
    params = model.init(jax.random.key(0), x0)
    leaves, tree = jax.tree_util.tree_flatten(params)

    def f(*args):
        p = jax.tree_util.tree_unflatten(tree, args[:-2])
        x, y = args[-2:]

        def loss(p):
            logits = model.apply(p, x)
            return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))
        l, g = jax.value_and_grad(loss)(p)
        return l, jax.tree_util.tree_map(lambda a, b: a - 0.05 * b, p, g)
    y = np.eye(3, dtype=np.float32)[[0, 2]]
    return f, tuple(np.asarray(v) for v in leaves) + (x0, y)


@program("flax_transformer_step", rtol=2e-4, atol=2e-5)
def _():
    # a small transformer block (attention, layer norm, MLP) and one optax step (SGD with
    # momentum and weight decay: Adam's first step is g/|g|, which for the attention's key bias
    # (a zero gradient, up to rounding) is rounding noise scaled to the learning rate)
    import flax.linen as nn
    import optax

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.LayerNorm()(x)
            h = nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=8)(h, h)
            x = x + h
            h = nn.LayerNorm()(x)
            h = nn.Dense(16)(h)
            h = nn.gelu(h)
            return x + nn.Dense(8)(h)

    model = Block()
    x0 = f32(2, 5, 8)
    params = model.init(jax.random.key(1), x0)
    opt = optax.chain(optax.add_decayed_weights(1e-3), optax.sgd(1e-2, momentum=0.9))
    state = opt.init(params)
    leaves, tree = jax.tree_util.tree_flatten((params, state))

    def f(*args):
        params, state = jax.tree_util.tree_unflatten(tree, args[:-2])
        x, y = args[-2:]

        def loss(p):
            return jnp.mean((model.apply(p, x) - y) ** 2)
        l, g = jax.value_and_grad(loss)(params)
        upd, state = opt.update(g, state, params)
        return l, optax.apply_updates(params, upd), state
    return f, tuple(np.asarray(v) for v in leaves) + (x0, f32(2, 5, 8))


@program("donate")
def _():
    # donated arguments: jax marks them (tf.aliasing_output / jax.buffer_donor) and XLA makes
    # them the module's input_output_alias / buffer_donor
    def f(w, g):
        return w - 0.5 * g, jnp.sum(g * g)
    return f, (f32(3, 4), f32(3, 4)), {"donate_argnums": (0,)}


@program("export_tpu_linalg", rtol=1e-4, atol=1e-4)
def _():
    # exported for TPU: cholesky and triangular_solve stay StableHLO ops (on CPU jax calls LAPACK)
    def f(a, b):
        spd = a @ a.T + 3.0 * jnp.eye(4, dtype=jnp.float32)
        l = lax.linalg.cholesky(spd)
        x = lax.linalg.triangular_solve(l, b, left_side=True, lower=True)
        y = lax.linalg.triangular_solve(l, b.T, left_side=False, lower=True, transpose_a=True)
        return l, x, y
    return f, (f32(4, 4), f32(4, 2))


@program("export_mlp")
def _():
    def f(x, w):
        return jnp.tanh(x @ w).sum(axis=0), jnp.max(x)
    return f, (f32(3, 4), f32(4, 2))


@program("denormal_constants", rtol=0, atol=0)
def _():
    # constants below the normal range (f32's 1e-40, bf16's smallest) through selects only, which
    # keep them even where executions flush denormals (XLA:CPU's FTZ and DAZ): cxla must read and
    # fold them as IEEE whatever the calling thread's environment (tests/unit/test_stablehlo_translate.c, stablehlo_programs_from_a_thread_that_flushes)
    def f(x):
        tiny = jnp.where(x == 0, jnp.float32(1e-40), x)
        xb = x.astype(jnp.bfloat16)
        sub = jnp.where(xb == 0, jnp.copysign(jnp.bfloat16(9.184e-41), xb), xb)
        return tiny, sub.astype(jnp.float32)
    return f, (np.array([0.0, 1.5, -0.0, -2.0], np.float32),)


# ---- writing ----------------------------------------------------------------------------------

def artifact(name, jitted, args):
    if name.startswith("export_"):
        platforms = ["tpu"] if name.startswith("export_tpu_") else None
        exp = jax.export.export(jitted, platforms=platforms)(*args)
        return bytes(exp.mlir_module_serialized)
    # As jax.export serializes (_export._module_to_bytecode): jaxlib's serializer also legalizes
    # the CHLO ops jax lowers to (erf, top_k, ...) into StableHLO, which VHLO can hold.
    module = jitted.lower(*args).compiler_ir("stablehlo")
    asm = module.operation.get_asm(binary=True, enable_debug_info=True)
    return bytes(_jax.mlir.serialize_portable_artifact(asm, TARGET, False))


# ---- hand-written StableHLO (ops jax on one CPU device does not emit), expected values from
# numpy; serialized to VHLO as jax.export does ----

COLLECTIVES = """
module @collectives attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 1 : i32} {
  func.func public @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>) {
    %0 = "stablehlo.all_reduce"(%x) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.all_gather"(%x) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4xf32>) -> tensor<8xf32>
    %2 = "stablehlo.collective_permute"(%x) <{source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "stablehlo.reduce_scatter"(%x) <{scatter_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<2xf32>
    %4 = "stablehlo.all_to_all"(%x) <{split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
    %r = stablehlo.replica_id : tensor<ui32>
    %rf = stablehlo.convert %r : (tensor<ui32>) -> tensor<f32>
    %rb = stablehlo.broadcast_in_dim %rf, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %5 = stablehlo.add %x, %rb : tensor<4xf32>
    return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
"""

FEEDS = """
module @feeds {
  func.func public @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %t0 = stablehlo.create_token : !stablehlo.token
    %d:3 = "stablehlo.infeed"(%t0) <{infeed_config = ""}> : (!stablehlo.token) -> (tensor<3xf32>, tensor<2xi32>, !stablehlo.token)
    %s = stablehlo.multiply %x, %d#0 : tensor<3xf32>
    %t1 = "stablehlo.outfeed"(%s, %d#1, %d#2) <{outfeed_config = ""}> : (tensor<3xf32>, tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
    %t2 = stablehlo.after_all %t1, %t0 : !stablehlo.token
    return %s : tensor<3xf32>
  }
}
"""


# argument attributes XLA turns into the module header and parameter layouts: jax.buffer_donor,
# tf.aliasing_output, mhlo.layout_mode, mhlo.sharding
ENTRY_ATTRS = """
module @entry_attrs attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%a: tensor<4xf32> {jax.buffer_donor = true},
                         %b: tensor<4xf32> {tf.aliasing_output = 0 : i32},
                         %c: tensor<2x3xf32> {mhlo.layout_mode = "{0,1}", mhlo.sharding = "{replicated}"})
      -> (tensor<4xf32> {mhlo.layout_mode = "default"}) {
    %0 = stablehlo.add %a, %b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


# ops jax does not emit on CPU (if, map, batch norm, the old broadcast, get_dimension_size,
# tuples, clamp/select with scalar operands, a while capturing a value from outside, Sharding
# annotations, reduce_precision): expected values from numpy and jax's own autodiff
HANDWRITTEN_OPS = """module @ops {
  func.func public @main(%x: tensor<2x3xf32>, %p: tensor<i1>, %v: tensor<3xf32>, %s: tensor<f32>, %spd: tensor<3x3xf32>,
                         %e: tensor<2x4x3xf32>, %ix: tensor<2x2xi32>)
      -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>,
          tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<2x3xf32>,
          tensor<4x2x3xf32>, tensor<i32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<3xf32>,
          tensor<3x3xf32>, tensor<i32>, tensor<4x2x2xf32>, tensor<2x2x2x4xf32>) {
    %c2 = stablehlo.constant dense<2.0> : tensor<f32>
    %lo = stablehlo.constant dense<-0.25> : tensor<f32>
    %hi = stablehlo.constant dense<0.5> : tensor<f32>
    %eps = stablehlo.constant dense<1.0> : tensor<3xf32>
    // if with implicit captures: %x and %s from outside the regions
    %0 = "stablehlo.if"(%p) ({
      %m = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
      %r = stablehlo.multiply %x, %m : tensor<2x3xf32>
      stablehlo.return %r : tensor<2x3xf32>
    }, {
      %r = stablehlo.negate %x : tensor<2x3xf32>
      stablehlo.return %r : tensor<2x3xf32>
    }) : (tensor<i1>) -> tensor<2x3xf32>
    // clamp with scalar bounds, select with a scalar predicate
    %1 = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    %2 = stablehlo.select %p, %x, %1 : tensor<i1>, tensor<2x3xf32>
    // batch norm over feature dimension 1
    %bt:3 = "stablehlo.batch_norm_training"(%x, %v, %eps) <{epsilon = 0.001 : f32, feature_index = 1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
    %bi = "stablehlo.batch_norm_inference"(%x, %v, %eps, %v, %eps) <{epsilon = 0.001 : f32, feature_index = 1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %bg:3 = "stablehlo.batch_norm_grad"(%x, %v, %bt#1, %bt#2, %1) <{epsilon = 0.001 : f32, feature_index = 1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
    // map with a computation
    %mp = "stablehlo.map"(%x, %1) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.multiply %a, %b : tensor<f32>
      %u = stablehlo.add %t, %a : tensor<f32>
      stablehlo.return %u : tensor<f32>
    }) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    // dot (the old op), broadcast (the old op), tuple and get_tuple_element
    %d = stablehlo.dot_general %v, %v, contracting_dims = [0] x [0], precision = [DEFAULT, HIGHEST] : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
    %tp = "stablehlo.tuple"(%x, %d) : (tensor<2x3xf32>, tensor<f32>) -> tuple<tensor<2x3xf32>, tensor<f32>>
    %g0 = "stablehlo.get_tuple_element"(%tp) <{index = 0 : i32}> : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tensor<2x3xf32>
    %bc = "stablehlo.broadcast"(%g0) <{broadcast_sizes = array<i64: 4>}> : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
    %gd = "stablehlo.get_dimension_size"(%bc) <{dimension = 0 : i64}> : (tensor<4x2x3xf32>) -> tensor<i32>
    // while whose body uses %s from outside (an implicit capture)
    %w:2 = stablehlo.while(%i = %gd, %acc = %x) : tensor<i32>, tensor<2x3xf32>
      cond {
        %z = stablehlo.constant dense<0> : tensor<i32>
        %c = stablehlo.compare GT, %i, %z : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %one = stablehlo.constant dense<1> : tensor<i32>
        %n = stablehlo.subtract %i, %one : tensor<i32>
        %m = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
        %a2 = stablehlo.add %acc, %m : tensor<2x3xf32>
        stablehlo.return %n, %a2 : tensor<i32>, tensor<2x3xf32>
      }
    // optimization barrier of two values; reduce_precision to bf16's bits
    %ob:2 = stablehlo.optimization_barrier %x, %s : tensor<2x3xf32>, tensor<f32>
    %rp = stablehlo.reduce_precision %x, format = e8m7 : tensor<2x3xf32>
    // a Sharding annotation and a shape-keeping Shardy marker: identities on one device
    %sh = stablehlo.custom_call @Sharding(%v) {mhlo.sharding = "{replicated}"} : (tensor<3xf32>) -> tensor<3xf32>
    %sd = stablehlo.custom_call @xla.sdy.FuncResultSharding(%sh) {has_side_effect = true} : (tensor<3xf32>) -> tensor<3xf32>
    // a typed-FFI custom call as StableHLO writes it (api_version 4, a dictionary backend_config),
    // its upper triangle (LAPACK leaves the input there) masked by a dense constant
    %ch:2 = stablehlo.custom_call @lapack_spotrf_ffi(%spd) {api_version = 4 : i32, backend_config = {uplo = 76 : ui8},
        operand_layouts = [dense<[0, 1]> : tensor<2xindex>],
        result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
    %mask = stablehlo.constant dense<[[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]> : tensor<3x3xf32>
    %low = stablehlo.multiply %ch#0, %mask : tensor<3x3xf32>
    // the deprecated ops XLA still translates: einsum (a batch dot and a transpose) and
    // torch_index_select (a gather)
    %es = "stablehlo.einsum"(%e, %x) <{einsum_config = "bjk,ck->jbc"}> : (tensor<2x4x3xf32>, tensor<2x3xf32>) -> tensor<4x2x2xf32>
    %ts = "stablehlo.torch_index_select"(%e, %ix) <{dim = 1 : i64, batch_dims = 0 : i64}> : (tensor<2x4x3xf32>, tensor<2x2xi32>) -> tensor<2x2x2x3xf32>
    %tt = stablehlo.transpose %ts, dims = [0, 1, 3, 2] : (tensor<2x2x2x3xf32>) -> tensor<2x2x3x2xf32>
    %t4 = stablehlo.slice %tt [0:2, 0:2, 0:2, 0:2] : (tensor<2x2x3x2xf32>) -> tensor<2x2x2x2xf32>
    %t5 = stablehlo.concatenate %t4, %t4, dim = 3 : (tensor<2x2x2x2xf32>, tensor<2x2x2x2xf32>) -> tensor<2x2x2x4xf32>
    return %0, %1, %2, %bt#0, %bt#1, %bi, %bg#1, %bg#2, %mp, %d, %ob#0, %bc, %w#0, %w#1, %rp, %ob#1, %sd, %low, %ch#1, %es, %t5
      : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<i32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<3xf32>, tensor<3x3xf32>, tensor<i32>, tensor<4x2x2xf32>, tensor<2x2x2x4xf32>
  }
}
"""


def handwritten_ops(out):
    x = f32(2, 3)
    p = np.bool_(True)
    v = np.array([0.5, -1.5, 2.0], np.float32)
    s_ = np.float32(0.75)
    eps = np.float32(0.001)
    clip = np.clip(x, -0.25, 0.5)
    a = f32(3, 3)
    spd = (a @ a.T + 3 * np.eye(3)).astype(np.float32)
    e = f32(2, 4, 3)
    ix = np.array([[3, 0], [1, 1]], np.int32)
    tk = np.take(e, ix, axis=1).transpose(0, 1, 3, 2)[:, :, :2, :2]

    def bn(x, scale, offset):
        m = jnp.mean(x, axis=0)
        var = jnp.mean((x - m) ** 2, axis=0)
        return (x - m) / jnp.sqrt(var + eps) * scale + offset, m, var
    (y, m, _), vjp = jax.vjp(bn, x, v, np.ones(3, np.float32))
    _, g_scale, g_offset = vjp((clip, np.zeros(3, np.float32), np.zeros(3, np.float32)))
    import ml_dtypes
    outs = [x * s_ if p else -x, clip, np.where(p, x, clip), y, m, (x - v) / np.sqrt(1 + eps) * v + 1, g_scale,
            g_offset, x * clip + x, np.float32(v @ v), x, np.broadcast_to(x, (4, 2, 3)), np.int32(0), x + 4 * s_,
            x.astype(ml_dtypes.bfloat16).astype(np.float32), s_, v, np.linalg.cholesky(spd).astype(np.float32),
            np.int32(0), np.einsum("bjk,ck->jbc", e, x), np.concatenate([tk, tk], axis=3)]
    with open(os.path.join(out, "handwritten_ops.mlirbc"), "wb") as fh:
        fh.write(bytes(_jax.mlir.serialize_portable_artifact(HANDWRITTEN_OPS, TARGET, False)))
    for i, a in enumerate((x, p, v, s_, spd, e, ix)):
        np.save(os.path.join(out, "handwritten_ops.in%d.npy" % i), np.asarray(a))
    for i, r in enumerate(outs):
        np.save(os.path.join(out, "handwritten_ops.out%d.npy" % i), np.asarray(r))
    with open(os.path.join(out, "handwritten_ops.tol"), "w") as fh:
        fh.write("1e-05 2e-05\n")
    return "handwritten_ops"


# send/recv with the host: loaded as HLO's send/send-done and recv/recv-done (which cxla does not run)
SENDRECV = """
module @sendrecv {
  func.func public @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %t = stablehlo.create_token : !stablehlo.token
    %t1 = "stablehlo.send"(%x, %t) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 2>, is_host_transfer = true}> : (tensor<3xf32>, !stablehlo.token) -> !stablehlo.token
    %r:2 = "stablehlo.recv"(%t1) <{channel_handle = #stablehlo.channel_handle<handle = 6, type = 3>, is_host_transfer = true}> : (!stablehlo.token) -> (tensor<3xf32>, !stablehlo.token)
    return %r#0 : tensor<3xf32>
  }
}
"""


def hand_written(out):
    """collectives.*: replica r's input is collectives.r<r>.in0.npy, its outputs
    collectives.r<r>.out<k>.npy; feeds.*: infeed literals feeds.infeed<k>.npy, outfeed
    literals feeds.outfeed<k>.npy, plus the usual in/out files."""
    for name, text in (("collectives", COLLECTIVES), ("feeds", FEEDS), ("entry_attrs", ENTRY_ATTRS), ("sendrecv", SENDRECV)):
        with open(os.path.join(out, name + ".mlirbc"), "wb") as fh:
            fh.write(bytes(_jax.mlir.serialize_portable_artifact(text, TARGET, False)))
    x = [np.array([1, 5, 3, 8], np.float32), np.array([4, 2, 7, 6], np.float32)]
    outs = [[np.maximum(x[0], x[1]), np.concatenate(x), x[1 - r], (x[0] + x[1])[2 * r:2 * r + 2],
             np.concatenate([x[0][2 * r:2 * r + 2], x[1][2 * r:2 * r + 2]]), x[r] + r] for r in range(2)]
    for r in range(2):
        np.save(os.path.join(out, "collectives.r%d.in0.npy" % r), x[r])
        for k, v in enumerate(outs[r]):
            np.save(os.path.join(out, "collectives.r%d.out%d.npy" % (r, k)), v.astype(np.float32))
    fx = np.array([1.5, -2, 3], np.float32)
    d0, d1 = np.array([2, 4, -1], np.float32), np.array([7, 9], np.int32)
    np.save(os.path.join(out, "feeds.in0.npy"), fx)
    np.save(os.path.join(out, "feeds.infeed0.npy"), d0)
    np.save(os.path.join(out, "feeds.infeed1.npy"), d1)
    np.save(os.path.join(out, "feeds.out0.npy"), fx * d0)
    np.save(os.path.join(out, "feeds.outfeed0.npy"), fx * d0)
    np.save(os.path.join(out, "feeds.outfeed1.npy"), d1)


def refusals(out):
    """Artifacts cxla must refuse, with the reason in the name: a shape-polymorphic export."""
    def f(x):
        return jnp.sin(x) * 2.0
    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("b, 4"), jnp.float32)
    exp = jax.export.export(jax.jit(f))(spec)
    with open(os.path.join(out, "refuse_dynamic.mlirbc"), "wb") as fh:
        fh.write(bytes(exp.mlir_module_serialized))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "stablehlo", "programs")
    os.makedirs(out, exist_ok=True)
    names = []
    for name, make, rtol, atol in PROGRAMS:
        made = make()
        f, args = made[0], tuple(np.asarray(a) for a in made[1])
        jitted = jax.jit(f, **(made[2] if len(made) > 2 else {}))
        bc = artifact(name, jitted, args)
        hlo_text = jitted.lower(*args).as_text(dialect="hlo")
        results = jax.tree_util.tree_leaves(jitted(*[np.copy(a) for a in args]))
        with open(os.path.join(out, name + ".mlirbc"), "wb") as fh:
            fh.write(bc)
        with open(os.path.join(out, name + ".hlo"), "w") as fh:
            fh.write(hlo_text)
        for i, a in enumerate(args):
            np.save(os.path.join(out, "%s.in%d.npy" % (name, i)), a)
        for i, r in enumerate(results):
            np.save(os.path.join(out, "%s.out%d.npy" % (name, i)), np.asarray(r))
        with open(os.path.join(out, name + ".tol"), "w") as fh:
            fh.write("%g %g\n" % (rtol, atol))
        names.append(name)
        print("%-20s %6d bytes, %d inputs, %d outputs" % (name, len(bc), len(args), len(results)))
    refusals(out)
    hand_written(out)
    names.append(handwritten_ops(out))  # no .hlo: jax writes no such program
    with open(os.path.join(out, "index.txt"), "w") as fh:
        fh.write("\n".join(names) + "\n")


if __name__ == "__main__":
    main()
