#!/usr/bin/env python3
"""jax_survey.py — lowers a broad sample of the jax.numpy / jax.nn / jax.random / jax.scipy / jax.lax
functions people use every day to HLO text (exactly what `jax.jit(f).lower(*args).as_text(dialect="hlo")`
gives), runs them with jax, and writes one corpus file per function: the module, its inputs and
jax's result as `// INPUT:` / `// OUTPUT:` directives (tests/hlo/README.md).

    build/venv/bin/python scripts/jax_survey.py OUT_DIR [NAME_SUBSTRING...]

jax is the reference here: OUTPUT is jax's answer on its CPU backend, never cxla's. Needs jax in a
throwaway venv (never the system). Which of these cxla runs, and what it refuses when compiling,
is what `cxla compile` says about each file; tests/hlo/jax_ops holds the ones it runs (checked on
every backend by the corpus test), tests/hlo_pending/jax_ops the rest until their ops land."""
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
import jax.scipy as jsp


R = np.random.default_rng(7)


def f32(*shape, lo=-2.0, hi=2.0):
    return (R.uniform(lo, hi, size=shape)).astype(np.float32)


def spd(n):
    a = R.normal(size=(n, n)).astype(np.float32)
    return (a @ a.T + n * np.eye(n)).astype(np.float32)


def i32(*shape, lo=-5, hi=6):
    return R.integers(lo, hi, size=shape).astype(np.int32)


KEY = jax.random.key_data(jax.random.PRNGKey(42))  # u32[2], the raw threefry key
MESH1 = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))  # one device: sharding is a no-op


def rnd(fn):
    return lambda k: fn(jax.random.wrap_key_data(k))


# name -> (function, args). Small inputs keep the OUTPUT lines readable.
CASES = {
    # jax.numpy: reductions and statistics
    "jnp_sum": (lambda x: jnp.sum(x, axis=1), [f32(3, 4)]),
    "jnp_mean_var_std": (lambda x: (jnp.mean(x), jnp.var(x, axis=0), jnp.std(x, axis=1)), [f32(3, 4)]),
    "jnp_cumsum_cumprod": (lambda x: (jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=0)), [f32(3, 4, lo=0.5, hi=1.5)]),
    "jnp_cummax": (lambda x: jax.lax.cummax(x, axis=0), [f32(6)]),
    "jnp_argmax_argmin": (lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=0)), [f32(3, 4)]),
    "jnp_max_min": (lambda x: (jnp.max(x), jnp.min(x, axis=0)), [f32(3, 4)]),
    "jnp_median": (lambda x: jnp.median(x), [f32(7)]),
    "jnp_quantile": (lambda x: jnp.quantile(x, 0.3), [f32(9)]),
    "jnp_nanmean": (lambda x: jnp.nanmean(jnp.where(x > 1, jnp.nan, x)), [f32(8)]),
    "jnp_logsumexp": (lambda x: jsp.special.logsumexp(x, axis=1), [f32(3, 5)]),
    "jnp_all_any": (lambda x: (jnp.all(x > -1), jnp.any(x > 1.5, axis=0)), [f32(3, 4)]),
    "jnp_count_nonzero": (lambda x: jnp.count_nonzero(x > 0), [f32(10)]),
    # sorting and searching
    "jnp_sort": (lambda x: jnp.sort(x, axis=-1), [f32(3, 5)]),
    "jnp_argsort": (lambda x: jnp.argsort(x), [f32(6)]),
    "jnp_searchsorted": (lambda a, v: jnp.searchsorted(a, v), [np.sort(f32(8)), f32(5)]),
    "lax_top_k": (lambda x: jax.lax.top_k(x, 3), [f32(2, 6)]),
    "jnp_unique_size": (lambda x: jnp.unique(x, size=4, fill_value=0), [i32(8, lo=0, hi=4)]),
    # elementwise math
    "jnp_trig": (lambda x: (jnp.sin(x), jnp.cos(x), jnp.tan(x), jnp.arctan2(x, 1.5 - x)), [f32(5)]),
    "jnp_inverse_trig": (lambda x: (jnp.arcsin(x), jnp.arccos(x), jnp.arctan(x)), [f32(5, lo=-0.9, hi=0.9)]),
    "jnp_hyperbolic": (lambda x: (jnp.sinh(x), jnp.cosh(x), jnp.arcsinh(x), jnp.arctanh(x * 0.4)), [f32(5)]),
    "jnp_exp_log": (lambda x: (jnp.exp(x), jnp.log1p(jnp.abs(x)), jnp.expm1(x), jnp.log2(jnp.abs(x) + 1)), [f32(5)]),
    "jnp_power_sqrt": (lambda x: (jnp.power(jnp.abs(x), 1.7), jnp.sqrt(jnp.abs(x)), jnp.cbrt(x), jax.lax.rsqrt(jnp.abs(x) + 1)), [f32(5)]),
    "jnp_rounding": (lambda x: (jnp.floor(x), jnp.ceil(x), jnp.round(x), jnp.trunc(x), jnp.rint(x)), [f32(7) * 3]),
    "jnp_mod_divide": (lambda x, y: (jnp.mod(x, y), jnp.floor_divide(x, y), jnp.remainder(x, y)), [i32(6), i32(6, lo=1, hi=4)]),
    "jnp_float_mod": (lambda x: (jnp.mod(x, 0.7), jnp.fmod(x, 0.7)), [f32(6)]),
    "jnp_nan_to_num": (lambda x: jnp.nan_to_num(jnp.log(x)), [f32(6)]),
    "jnp_logaddexp": (lambda x, y: jnp.logaddexp(x, y), [f32(5), f32(5)]),
    "jnp_nextafter": (lambda x: jnp.nextafter(x, jnp.zeros_like(x)), [f32(4)]),
    "jnp_clip_where": (lambda x: jnp.where(x > 0, jnp.clip(x, 0.2, 1.0), -x), [f32(6)]),
    "jnp_isnan_isinf": (lambda x: (jnp.isnan(jnp.log(x)), jnp.isinf(1 / x), jnp.isfinite(jnp.log(x))), [f32(5)]),
    "jnp_bitwise": (lambda x, y: (x & y, x | y, x ^ y, ~x, x << 2, x >> 1), [i32(5, lo=0, hi=100), i32(5, lo=0, hi=100)]),
    "lax_population_count": (lambda x: (jax.lax.population_count(x), jax.lax.clz(x)), [i32(5, lo=0, hi=1000)]),
    "scipy_erf": (lambda x: (jsp.special.erf(x), jsp.special.erfc(x)), [f32(5)]),
    "scipy_erfinv": (lambda x: jax.lax.erf_inv(x), [f32(5, lo=-0.9, hi=0.9)]),
    "scipy_lgamma_digamma": (lambda x: (jax.lax.lgamma(x), jax.lax.digamma(x)), [f32(5, lo=0.5, hi=4)]),
    "scipy_ndtr": (lambda x: (jsp.special.ndtr(x), jsp.special.ndtri(jax.nn.sigmoid(x))), [f32(5)]),
    "jnp_polyval": (lambda p, x: jnp.polyval(p, x), [f32(4), f32(5)]),
    "jnp_interp": (lambda x: jnp.interp(x, jnp.array([0.0, 1.0, 2.0]), jnp.array([1.0, 3.0, 2.0])), [f32(5, lo=-0.5, hi=2.5)]),
    # dtypes
    "jnp_bf16_math": (lambda x: jnp.tanh(x.astype(jnp.bfloat16)) * 2, [f32(6)]),
    "jnp_f16_math": (lambda x: jnp.exp(x.astype(jnp.float16)).sum(), [f32(6)]),
    "jnp_int8_math": (lambda x: (x.astype(jnp.int8) * 50).astype(jnp.int32), [i32(6)]),
    "lax_bitcast_convert": (lambda x: jax.lax.bitcast_convert_type(x, jnp.int32), [f32(4)]),
    "lax_reduce_precision": (lambda x: jax.lax.reduce_precision(x, 5, 10), [f32(5)]),
    # shapes and indexing
    "jnp_reshape_transpose": (lambda x: jnp.transpose(x.reshape(2, 3, 2), (2, 0, 1)), [f32(12)]),
    "jnp_concat_stack_split": (lambda x: (jnp.concatenate([x, x * 2]), jnp.stack([x, -x], axis=1), jnp.split(x, 2)[1]), [f32(4)]),
    "jnp_tile_repeat": (lambda x: (jnp.tile(x, 2), jnp.repeat(x, 2)), [f32(3)]),
    "jnp_pad_roll_flip": (lambda x: (jnp.pad(x, 2, mode="reflect"), jnp.roll(x, 2), jnp.flip(x)), [f32(5)]),
    "jnp_take_along_axis": (lambda x, i: jnp.take_along_axis(x, i, axis=1), [f32(3, 4), i32(3, 2, lo=0, hi=4)]),
    "jnp_take": (lambda x, i: jnp.take(x, i, axis=0), [f32(5, 2), i32(3, lo=0, hi=5)]),
    "jnp_index_update": (lambda x, i: x.at[i].add(1.0).at[0].set(7.0), [f32(6), i32(3, lo=0, hi=6)]),
    "jnp_segment_sum": (lambda x, s: jax.ops.segment_sum(x, s, num_segments=3), [f32(6), i32(6, lo=0, hi=3)]),
    "jnp_boolean_mask_where": (lambda x: jnp.where(x > 0, size=3, fill_value=-1)[0], [f32(6)]),
    "jnp_tri_eye_diag": (lambda x: (jnp.triu(x), jnp.tril(x, -1), jnp.diag(x), jnp.trace(x), jnp.eye(3) * x), [f32(3, 3)]),
    "jnp_arange_linspace": (lambda x: x + jnp.linspace(0, 1, 5) + jnp.arange(5), [f32(5)]),
    "jnp_one_hot": (lambda i: jax.nn.one_hot(i, 4), [i32(5, lo=0, hi=4)]),
    "jnp_dynamic_slice": (lambda x, i: jax.lax.dynamic_slice(x, (i, 0), (2, 2)), [f32(4, 3), np.int32(1)]),
    # linear algebra
    "jnp_matmul_einsum": (lambda a, b: (a @ b, jnp.einsum("ij,kj->ik", a, b.T), jnp.outer(a[0], b[:, 0])), [f32(2, 3), f32(3, 2)]),
    "jnp_batched_matmul": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), [f32(2, 2, 3), f32(2, 3, 2)]),
    "jnp_kron_tensordot": (lambda a, b: (jnp.kron(a, b), jnp.tensordot(a, b, axes=1)), [f32(2, 2), f32(2, 2)]),
    "linalg_cholesky": (lambda a: jnp.linalg.cholesky(a), [spd(3)]),
    "linalg_solve": (lambda a, b: jnp.linalg.solve(a, b), [spd(3), f32(3)]),
    "linalg_inv": (lambda a: jnp.linalg.inv(a), [spd(3)]),
    "linalg_det_slogdet": (lambda a: (jnp.linalg.det(a), jnp.linalg.slogdet(a)[1]), [spd(3)]),
    "linalg_qr": (lambda a: jnp.abs(jnp.linalg.qr(a)[1]), [f32(4, 3)]),
    "linalg_eigh": (lambda a: jnp.linalg.eigh(a)[0], [spd(3)]),
    "linalg_svd": (lambda a: jnp.linalg.svd(a, compute_uv=False), [f32(4, 3)]),
    "linalg_triangular_solve": (lambda a, b: jsp.linalg.solve_triangular(a, b, lower=True), [np.tril(spd(3)), f32(3, 2)]),
    "linalg_norm": (lambda x: (jnp.linalg.norm(x), jnp.linalg.norm(x, axis=1)), [f32(3, 4)]),
    # complex numbers and FFT
    "jnp_complex_math": (lambda x, y: jnp.abs(jax.lax.complex(x, y) * jnp.exp(jax.lax.complex(y, x))), [f32(4), f32(4)]),
    "jnp_real_imag_angle": (lambda x, y: (jnp.real(jax.lax.complex(x, y) ** 2), jnp.angle(jax.lax.complex(x, y))), [f32(4), f32(4)]),
    "fft_fft": (lambda x: jnp.abs(jnp.fft.fft(x)), [f32(8)]),
    "fft_rfft_irfft": (lambda x: jnp.fft.irfft(jnp.fft.rfft(x) * 2, n=8), [f32(8)]),
    "fft_fft2": (lambda x: jnp.real(jnp.fft.ifft2(jnp.fft.fft2(x) * 0.5)), [f32(4, 4)]),
    # jax.nn
    "nn_activations": (lambda x: (jax.nn.relu(x), jax.nn.gelu(x), jax.nn.silu(x), jax.nn.sigmoid(x), jax.nn.softplus(x), jax.nn.elu(x), jax.nn.leaky_relu(x)), [f32(6)]),
    "nn_gelu_exact": (lambda x: jax.nn.gelu(x, approximate=False), [f32(6)]),
    "nn_softmax": (lambda x: (jax.nn.softmax(x, axis=-1), jax.nn.log_softmax(x, axis=0)), [f32(3, 4)]),
    "nn_standardize": (lambda x: jax.nn.standardize(x, axis=-1), [f32(3, 4)]),
    "nn_dot_product_attention": (lambda q, k, v: jax.nn.dot_product_attention(q, k, v), [f32(1, 4, 2, 8), f32(1, 4, 2, 8), f32(1, 4, 2, 8)]),
    "lax_conv": (lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME"), [f32(1, 2, 5, 5), f32(3, 2, 3, 3)]),
    "lax_conv_strided_dilated": (lambda x, w: jax.lax.conv_general_dilated(x, w, (2, 2), ((1, 1), (1, 1)), rhs_dilation=(2, 1), dimension_numbers=("NHWC", "HWIO", "NHWC")), [f32(1, 6, 6, 2), f32(3, 3, 2, 4)]),
    "lax_avg_max_pool": (lambda x: (jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2, 2), (1, 2, 2), "VALID") / 4, jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 3, 3), (1, 1, 1), "SAME")), [f32(1, 4, 4)]),
    # jax.random
    "random_uniform": (rnd(lambda k: jax.random.uniform(k, (6,))), [KEY]),
    "random_normal": (rnd(lambda k: jax.random.normal(k, (6,))), [KEY]),
    "random_bernoulli_categorical": (rnd(lambda k: (jax.random.bernoulli(k, 0.3, (6,)), jax.random.categorical(k, jnp.log(jnp.array([0.2, 0.5, 0.3])), shape=(5,)))), [KEY]),
    "random_split_randint": (rnd(lambda k: jax.random.randint(jax.random.split(k)[1], (5,), 0, 10)), [KEY]),
    "random_permutation": (rnd(lambda k: jax.random.permutation(k, 6)), [KEY]),
    "random_truncated_normal": (rnd(lambda k: jax.random.truncated_normal(k, -1.0, 1.0, (5,))), [KEY]),
    "random_bits_philox": (lambda k: jax.random.bits(jax.random.wrap_key_data(k, impl="rbg"), (4,)), [np.arange(4, dtype=np.uint32)]),
    # jax.lax control flow
    "lax_scan": (lambda x: jax.lax.scan(lambda c, a: (c + a, c * a), 0.0, x), [f32(5)]),
    "lax_fori_while": (lambda x: jax.lax.fori_loop(0, 4, lambda i, c: c * 1.5 + i, x), [f32(3)]),
    "lax_cond_switch": (lambda i, x: (jax.lax.cond(i > 0, jnp.sin, jnp.cos, x), jax.lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x)), [np.int32(1), f32(3)]),
    "lax_map": (lambda x: jax.lax.map(lambda r: jnp.sum(r * r), x), [f32(3, 4)]),
    "lax_associative_scan": (lambda x: jax.lax.associative_scan(jnp.add, x), [f32(8)]),
    "lax_sort_multi": (lambda a, b: jax.lax.sort((a, b), num_keys=1), [i32(6, lo=0, hi=3), f32(6)]),
    # gradients (what a training step emits)
    "grad_mlp": (jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)), [f32(3, 2), f32(4, 3)]),
    "grad_softmax_xent": (jax.grad(lambda w, x, y: -jnp.mean(jnp.sum(jax.nn.log_softmax(x @ w) * y, axis=-1))), [f32(3, 4), f32(5, 3), np.eye(4, dtype=np.float32)[[0, 1, 2, 3, 0]]]),
    # a CNN's SGD step: a stride-1 and a stride-2 NHWC/HWIO convolution, the loss's gradients as
    # autodiff writes them (weight gradients, the stride-2 layer's data gradient), the update
    "conv_train_step": (lambda w1, w2, x: (lambda l, g: (l, w1 - 0.1 * g[0], w2 - 0.1 * g[1]))(*jax.value_and_grad(
        lambda ws: jnp.sum(jnp.tanh(jax.lax.conv_general_dilated(jax.nn.relu(jax.lax.conv_general_dilated(
            x, ws[0], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))), ws[1], (2, 2), ((1, 1), (1, 1)),
            dimension_numbers=("NHWC", "HWIO", "NHWC"))) ** 2))((w1, w2))),
        [f32(3, 3, 3, 4, lo=-0.5, hi=0.5), f32(3, 3, 4, 5, lo=-0.5, hi=0.5), f32(2, 7, 7, 3)]),
    "grad_conv": (jax.grad(lambda w, x: jnp.sum(jax.lax.conv_general_dilated(x, w, (1, 1), "SAME") ** 2)), [f32(2, 1, 3, 3), f32(1, 1, 4, 4)]),
    # sharding annotations on one device (added last: earlier cases keep their random inputs)
    "lax_with_sharding_constraint": (lambda a, b: jnp.tanh(jax.lax.with_sharding_constraint(
        jnp.sin(a) @ b, jax.sharding.NamedSharding(MESH1, jax.sharding.PartitionSpec("x", None)))) + 1,
        [f32(3, 4), f32(4, 2)]),
    # Schur form (lapack_?gees_ffi) and the perturbed tridiagonal solve (added last, as above). A
    # Schur form is not unique, so these return what any correct one gives: z t z^H (= a), the
    # entries of t that must be zero (below the subdiagonal for real t, whose 2 x 2 blocks hold
    # the complex pairs; below the diagonal for complex t) and z^H z (= I).
    "linalg_schur_f32": (lambda a: _schur_checks(a, 2), [f32(2, 4, 4)]),
    "linalg_schur_c64": (lambda a: _schur_checks(a, 1), [(f32(4, 4) + 1j * f32(4, 4)).astype(np.complex64)]),
    "linalg_schur_f64_x64": (lambda a: _schur_checks(a, 2), [f32(5, 5).astype(np.float64)]),
    "linalg_schur_c128_x64": (lambda a: _schur_checks(a, 1), [(f32(2, 3, 3) + 1j * f32(2, 3, 3)).astype(np.complex128)]),
    "linalg_tridiagonal_solve_perturbed": (lambda dl, d, du, b: jax.lax.linalg.tridiagonal_solve(
        dl, d, du, b, perturb_singular=True), [f32(2, 5), f32(2, 5), f32(2, 5), f32(2, 5, 3)]),
    # singular systems: rows 0 and 1 alike (a zero pivot, perturbed), and the zero matrix
    "linalg_tridiagonal_solve_perturbed_singular": (lambda dl, d, du, b: jax.lax.linalg.tridiagonal_solve(
        dl, d, du, b, perturb_singular=True), [np.array([[0, 1, 2], [0, 0, 0]], np.float32),
        np.array([[1, 3, 1], [0, 0, 0]], np.float32), np.array([[3, 0, 0], [0, 0, 0]], np.float32),
        np.array([[[1], [4], [2]], [[1], [1], [1]]], np.float32)]),
    "linalg_tridiagonal_solve_perturbed_c128_x64": (lambda dl, d, du, b: jax.lax.linalg.tridiagonal_solve(
        dl, d, du, b, perturb_singular=True), [(f32(4) + 1j * f32(4)).astype(np.complex128),
        (f32(4) + 1j * f32(4)).astype(np.complex128), (f32(4) + 1j * f32(4)).astype(np.complex128),
        (f32(4, 2) + 1j * f32(4, 2)).astype(np.complex128)]),
    # a wide matrix without u and v: jax declares the reduced pair (u 2x2, vt 2x4), which u's
    # shape alone cannot tell from the full one (linalg_test testMatrixRank)
    "linalg_svd_wide": (lambda a: (jnp.linalg.svd(a, compute_uv=False), jnp.linalg.matrix_rank(a)), [f32(2, 4)]),
}


def _schur_checks(a, below):
    t, z = jsp.linalg.schur(a)
    zh = jnp.conj(jnp.swapaxes(z, -1, -2))
    return z @ t @ zh, jnp.abs(jnp.tril(t, -below)), zh @ z


def literal(v):
    """HLO literal text of a numpy value, with its shape (tests/hlo/README.md)."""
    v = np.asarray(v)
    names = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.float16): "f16",
             np.dtype(np.int8): "s8", np.dtype(np.int16): "s16", np.dtype(np.int32): "s32", np.dtype(np.int64): "s64",
             np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32", np.dtype(np.uint64): "u64",
             np.dtype(np.bool_): "pred", np.dtype(np.complex64): "c64", np.dtype(np.complex128): "c128"}
    if v.dtype.name == "bfloat16":
        t = "bf16"
    else:
        t = names[v.dtype]

    def one(x):
        if t == "pred":
            return "true" if x else "false"
        if t in ("c64", "c128"):
            return "(%s, %s)" % (num(x.real), num(x.imag))
        if t[0] in "su":
            return str(int(x))
        return num(float(x))

    def num(x):
        if np.isnan(x):
            return "nan"
        if np.isinf(x):
            return "inf" if x > 0 else "-inf"
        return repr(float(x))

    def nest(a):
        if a.ndim == 0:
            return one(a[()])
        return "{" + ", ".join(nest(a[i]) for i in range(a.shape[0])) + "}"

    return "%s[%s] %s" % (t, ",".join(map(str, v.shape)), nest(v))


def result_literal(out):
    leaves = jax.tree_util.tree_leaves(out)
    if isinstance(out, (tuple, list)) or len(leaves) != 1:
        shapes = []
        vals = []
        for l in leaves:
            s = literal(np.asarray(l))
            head, body = s.split(" ", 1)
            shapes.append(head)
            vals.append(body)
        return "(%s) (%s)" % (", ".join(shapes), ", ".join(vals))
    return literal(np.asarray(leaves[0]))


def directive(name, text, width=96):
    lines = []
    first = "// %s: " % name
    while len(text) > width:
        cut = text.rfind(" ", 0, width)
        cut = cut if cut > 0 else width
        lines.append(text[:cut])
        text = text[cut + 1:]
    lines.append(text)
    return "\n".join([first + lines[0]] + ["// ... " + l for l in lines[1:]])


def main():
    out_dir = sys.argv[1]
    only = sys.argv[2:]
    os.makedirs(out_dir, exist_ok=True)
    for name, (fn, args) in CASES.items():
        if only and not any(o in name for o in only):
            continue
        try:
            with jax.enable_x64(name.endswith("_x64")):  # f64 and c128 cases: jax's 64-bit mode
                lowered = jax.jit(fn).lower(*args)
                text = lowered.as_text(dialect="hlo")
                out = jax.jit(fn)(*args)
        except Exception as e:  # a case jax itself cannot lower here is reported, not fatal
            print("%s: jax failed: %s" % (name, str(e).splitlines()[0]))
            continue
        floats = any(np.asarray(l).dtype.kind in "fc" or np.asarray(l).dtype.name == "bfloat16"
                     for l in jax.tree_util.tree_leaves(out))
        head = ["// %s, lowered by scripts/jax_survey.py with jax %s on CPU (jax.jit(f).lower(*args)"
                ".as_text(dialect=\"hlo\")); OUTPUT is jax's own result." % (name, jax.__version__)]
        body = [text.rstrip(), ""]
        for a in args:
            body.append(directive("INPUT", literal(a)))
        body.append(directive("OUTPUT", result_literal(out)))
        if floats:
            body.append("// TOLERANCE: 2e-5 2e-6")
        with open(os.path.join(out_dir, name + ".hlo"), "w") as f:
            f.write("\n".join(head + body) + "\n")
        print(name)


if __name__ == "__main__":
    main()
