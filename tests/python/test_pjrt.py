"""JAX on cxla through the PJRT plugin (libcxla_pjrt.so, docs/pjrt.md), against JAX's own CPU
backend in the same process: devices, device_put and back, jit of elementwise, dot, reduce,
while and cond programs, donation, an optax MLP training step, and JAX_PLATFORMS=cxla in a
fresh process that finds the plugin through the jax_plugins entry point.

Run by tests/python/python_test.sh with a venv that has jax (and optax for the training test).
The jit tests go through cxla's StableHLO reader (cxla_module_parse_stablehlo)."""
import contextlib
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import cxla._jax_plugin as plugin

plugin.initialize()

import jax  # noqa: E402  (after the plugin is registered)
import jax.numpy as jnp  # noqa: E402

# JAX's defaults as they are: Shardy on (its programs carry sdy.mesh and sdy.sharding), which
# cxla reads as it reads GSPMD shardings (Shardy.test_gspmd_partitioner covers the other).
CPU = jax.devices("cpu")[0]
CX = jax.devices("cxla")[0]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def on(device, tree):
    return jax.tree_util.tree_map(lambda a: jax.device_put(a, device), tree)


def both(fn, *args, **jit_kwargs):
    """fn jitted on cxla and on the cpu, on copies of args placed on each; numpy results."""
    got = jax.jit(fn, **jit_kwargs)(*on(CX, args))
    want = jax.jit(fn, **jit_kwargs)(*on(CPU, args))
    return jax.tree_util.tree_map(np.asarray, got), jax.tree_util.tree_map(np.asarray, want)


class Base(unittest.TestCase):
    def close(self, got, want, rtol=2e-5, atol=2e-5):
        gl, gt = jax.tree_util.tree_flatten(got)
        wl, wt = jax.tree_util.tree_flatten(want)
        self.assertEqual(gt, wt)
        for g, w in zip(gl, wl):
            self.assertEqual(g.shape, w.shape)
            self.assertEqual(g.dtype, w.dtype)
            if w.dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
            else:
                np.testing.assert_array_equal(g, w)


class Devices(Base):
    def test_devices(self):
        """The cpu first; a GPU after it where --pjrt-gpu (auto: a real GPU) finds one
        (GpuDevice runs the emulated one)."""
        ds = jax.devices("cxla")
        self.assertIn(len(ds), (1, 2))
        self.assertEqual(ds[0].platform, "cxla")
        self.assertEqual(ds[0].id, 0)
        self.assertEqual(ds[0].device_kind, "cpu")

    def test_initialize_twice(self):
        """JAX's discovery calls initialize() as well when the package is installed."""
        plugin.initialize()
        self.assertEqual(jax.devices("cxla"), [CX])

    def test_cpu_stays_the_default(self):
        """With both backends up, plain JAX code keeps running on the CPU."""
        self.assertEqual(jax.default_backend(), "cpu")
        self.assertEqual(jnp.ones(2).devices(), {CPU})

    def test_device_put_round_trip(self):
        for a in [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([1, -2, 3], np.int32),
                  np.array([True, False]), np.arange(5, dtype=np.uint8), np.float32(2.5),
                  np.arange(6, dtype=np.float32).reshape(2, 3).T,  # not contiguous: strides
                  np.array([1.5, -2.25], jnp.bfloat16)]:
            x = jax.device_put(a, CX)
            self.assertEqual(x.devices(), {CX})
            x.block_until_ready()
            back = np.asarray(x)
            self.assertEqual(back.dtype, a.dtype)
            np.testing.assert_array_equal(back, a)

    def test_delete(self):
        x = jax.device_put(np.ones(3, np.float32), CX)
        x.delete()
        self.assertTrue(x.is_deleted())


class Jit(Base):
    def test_denormals_flushed_as_on_jax_cpu(self):
        # XLA:CPU runs with FTZ and DAZ: a product below f32's smallest normal is 0 there, and
        # on cxla through the plugin and cxla.jit too (--cpu-flush-denormals, docs/flags.md)
        x = np.full(1 << 16, 1e-20, np.float32)
        got, want = both(lambda a, b: a * b, x, x)
        np.testing.assert_array_equal(got, want)
        self.assertEqual(np.count_nonzero(got), 0)
        import cxla
        np.testing.assert_array_equal(cxla.jit(lambda a, b: a * b, backend="cpu")(x, x), want)
        ieee = cxla.jit(lambda a, b: a * b, backend="cpu", cpu_flush_denormals=False)(x, x)
        self.assertEqual(np.count_nonzero(ieee), x.size)

    def test_elementwise(self):
        x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
        self.close(*both(lambda a: jnp.tanh(a) * 2 + jnp.exp(-a * a), x))

    def test_dot(self):
        r = np.random.default_rng(1)
        a, b = r.standard_normal((8, 16), np.float32), r.standard_normal((16, 4), np.float32)
        self.close(*both(lambda x, y: x @ y, a, b), rtol=1e-4, atol=1e-5)

    def test_reduce(self):
        x = np.random.default_rng(2).standard_normal((5, 7), np.float32)
        self.close(*both(lambda a: (a.sum(0), a.max(1), jnp.argmax(a, axis=1)), x), rtol=1e-5)

    def test_while_and_cond(self):

        def f(x, n):
            y = jax.lax.fori_loop(0, n, lambda i, v: v * 0.5 + i, x)
            return jax.lax.cond(y.sum() > 0, lambda v: v * 2, lambda v: -v, y)

        self.close(*both(f, np.arange(4, dtype=np.float32), np.int32(5)))

    def test_block_until_ready_and_reuse(self):
        f = jax.jit(lambda a: a * 3)
        x = jax.device_put(np.arange(4, dtype=np.float32), CX)
        y = f(x).block_until_ready()
        z = f(y)
        np.testing.assert_array_equal(np.asarray(z), np.arange(4) * 9)
        np.testing.assert_array_equal(np.asarray(x), np.arange(4))  # inputs are not written

    def test_donation(self):
        f = jax.jit(lambda a, b: a + b, donate_argnums=0)
        x = jax.device_put(np.ones(4, np.float32), CX)
        y = jax.device_put(np.full(4, 2, np.float32), CX)
        z = f(x, y)
        np.testing.assert_array_equal(np.asarray(z), np.full(4, 3))
        self.assertTrue(x.is_deleted())
        self.assertFalse(y.is_deleted())

    def test_donation_of_many_arrays(self):
        """A step over 70 donated arrays (a model's parameters and optimizer state): every one is
        consumed, as on JAX's CPU, not only the first 64."""
        f = jax.jit(lambda t: [a + 1 for a in t], donate_argnums=0)
        xs = [jax.device_put(np.full(4, i, np.float32), CX) for i in range(70)]
        ys = f(xs)
        self.assertEqual([i for i, x in enumerate(xs) if not x.is_deleted()], [])
        self.assertEqual([float(y[0]) for y in ys], [i + 1.0 for i in range(70)])

    def test_mlp_training_step(self):
        try:
            import optax
        except ImportError:
            self.skipTest("optax is not installed")
        r = np.random.default_rng(3)
        params = {"w1": r.standard_normal((8, 16), np.float32) * 0.3, "b1": np.zeros(16, np.float32),
                  "w2": r.standard_normal((16, 3), np.float32) * 0.3, "b2": np.zeros(3, np.float32)}
        x = r.standard_normal((32, 8), np.float32)
        y = r.integers(0, 3, 32).astype(np.int32)
        opt = optax.adam(1e-2)

        def loss(p, x, y):
            h = jax.nn.relu(x @ p["w1"] + p["b1"])
            logits = h @ p["w2"] + p["b2"]
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

        def step(p, s, x, y):
            value, g = jax.value_and_grad(loss)(p, x, y)
            updates, s = opt.update(g, s, p)
            return optax.apply_updates(p, updates), s, value

        results = {}
        for dev in (CX, CPU):
            p = on(dev, params)
            s = on(dev, opt.init(params))
            f = jax.jit(step, donate_argnums=(0, 1))
            losses = []
            for _ in range(5):
                p, s, value = f(p, s, on(dev, x), on(dev, y))
                losses.append(float(value))
            results[dev.platform] = (jax.tree_util.tree_map(np.asarray, p), losses)
        np.testing.assert_allclose(results["cxla"][1], results["cpu"][1], rtol=1e-4)
        self.assertLess(results["cxla"][1][-1], results["cxla"][1][0])
        self.close(results["cxla"][0], results["cpu"][0], rtol=1e-3, atol=1e-4)


class Programs(Base):
    def test_no_results_and_no_arguments(self):
        """A program without results (or arguments): JAX hands empty lists as NULL."""
        x = jax.device_put(np.ones(3, dtype=np.float32), CX)
        self.assertEqual(jax.jit(lambda: ())(), ())
        self.assertIsNone(jax.jit(lambda a: None)(x))
        self.assertEqual(float(jax.jit(lambda: jnp.float32(2) * 3, device=CX)()), 6.0)

    def test_denormal_constants_as_jax_cpu(self):
        """jnp.spacing of bf16 subnormals (JAX's testSpacingSubnormals) and denormal constants
        through selects: bit for bit JAX CPU's. JAX compiles from a thread that flushes
        denormals, where cxla read bf16's smallest subnormal constant as 0."""
        x = np.array([0.0, 9.184e-41, -9.184e-41, 1e-40, 1.0], dtype=jnp.bfloat16)
        got, want = both(jnp.spacing, x)
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
        self.assertEqual(int(got.view(np.uint16)[0]), 1)  # the smallest subnormal, not 0
        f = np.array([0.0, 1.5, -0.0], dtype=np.float32)
        got, want = both(lambda a: jnp.where(a == 0, jnp.float32(1e-40), a), f)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))

    def test_bitcast_convert_of_4_bit_types(self):
        """lax.bitcast_convert_type counts bit widths: int4[..., 2] <-> int8 packs two nibbles
        in a byte (JAX's testBitcastConvertTypeAgainstNumpy); cxla read the byte each int4 is
        stored in, and refused int4 <-> int32."""
        x = np.array([[1, 2], [3, -1], [-8, 7], [0, 5]], dtype=jnp.int4)
        for to in (jnp.int8, jnp.uint8):
            got, want = both(lambda a: jax.lax.bitcast_convert_type(a, to), x)
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, np.array([0x21, 0xF3, 0x78, 0x50], np.uint8))
        f = np.array([1.0, -2.5], dtype=np.float32)
        got, want = both(lambda a: jax.lax.bitcast_convert_type(a, jnp.uint4), f)
        np.testing.assert_array_equal(got.astype(np.int32), want.astype(np.int32))
        self.assertEqual(got.shape, (2, 8))

    def test_linear_algebra_through_lapack(self):
        """JAX's CPU-only lowering rules serve the cxla platform: qr, eigh, svd, lu, solve and
        cholesky become LAPACK FFI custom-calls that cxla runs (not TPU-only 'Qr' targets)."""
        rng = np.random.default_rng(0)
        a = rng.standard_normal((6, 6)).astype(np.float32)
        spd = a @ a.T + 6 * np.eye(6, dtype=np.float32)
        cases = {"qr": lambda m: jnp.abs(jnp.linalg.qr(m)[1]), "eigh": lambda m: jnp.linalg.eigh(m)[0],
                 "svd": lambda m: jnp.linalg.svd(m)[1], "lu": lambda m: jax.scipy.linalg.lu(m)[2],
                 "solve": lambda m: jnp.linalg.solve(m, m[:, :2]), "cholesky": jnp.linalg.cholesky}
        for name, fn in cases.items():
            with self.subTest(name):
                self.close(*both(fn, spd if name in ("eigh", "cholesky", "solve") else a), rtol=1e-3, atol=1e-4)


    def test_eig_through_lapack_geev(self):
        """jnp.linalg.eig (lapack_?geev_ffi) in f32, f64, c64 and c128, batched: the eigenvalues
        are JAX's CPU's as sets (each side orders them as its LAPACK does), and A v = w v, with
        unit vectors; eigvals alone (no vectors) too; a NaN matrix gives NaN, as on the cpu."""
        rng = np.random.default_rng(3)
        with jax.enable_x64(True):
            for dt in (np.float32, np.float64, np.complex64, np.complex128):
                with self.subTest(np.dtype(dt).name):
                    a = rng.standard_normal((2, 5, 5))
                    if np.dtype(dt).kind == "c":
                        a = a + 1j * rng.standard_normal((2, 5, 5))
                    a = a.astype(dt)
                    tol = 1e-4 if dt in (np.float32, np.complex64) else 1e-10
                    (w, v), (cw, _) = both(jnp.linalg.eig, a)
                    self.assertEqual(w.dtype, cw.dtype)
                    self.assertEqual(v.dtype, cw.dtype)
                    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(cw), rtol=tol, atol=tol)
                    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=tol, atol=tol)
                    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=tol)
                    ev, cev = both(jnp.linalg.eigvals, a)
                    np.testing.assert_allclose(np.sort_complex(ev), np.sort_complex(cev), rtol=tol, atol=tol)
            bad = np.array([[1, np.nan], [0, 1]], np.float32)
            self.assertTrue(np.isnan(both(jnp.linalg.eigvals, bad)[0]).all())


    def test_typed_prng_keys(self):
        """jax.random.key arrays (threefry and rbg) in and out of a jit on cxla: JAX passes their
        key data; the results are keys on cxla with JAX's CPU's bits."""
        def step(k, x):
            k1, k2 = jax.random.split(k)
            return k1, x + jax.random.normal(k2, x.shape)

        x = np.arange(4, dtype=np.float32)
        for impl in ("threefry2x32", "rbg"):
            with self.subTest(impl):
                k = jax.random.key(7, impl=impl)
                got = jax.jit(step)(*on(CX, (k, x)))
                want = jax.jit(step)(*on(CPU, (k, x)))
                self.assertEqual(got[0].devices(), {CX})
                self.assertTrue(jax.dtypes.issubdtype(got[0].dtype, jax.dtypes.prng_key))
                np.testing.assert_array_equal(np.asarray(jax.random.key_data(got[0])),
                                              np.asarray(jax.random.key_data(want[0])))
                np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[1]), rtol=1e-6, atol=1e-6)

    def test_schur_through_lapack_gees(self):
        """jax.scipy.linalg.schur (lapack_?gees_ffi) in f32, f64, c64 and c128, batched, and what
        JAX builds on it (sqrtm, funm): a Schur form is not unique, so each side's is checked as
        one (a = z t z^H, z^H z = I, t triangular, or quasi-triangular for real t) and the
        eigenvalues on t's diagonal are JAX's CPU's as sets; sqrtm's square is a."""
        rng = np.random.default_rng(4)
        import jax.scipy.linalg as jsl
        with jax.enable_x64(True):
            for dt in (np.float32, np.float64, np.complex64, np.complex128):
                with self.subTest(np.dtype(dt).name):
                    a = rng.standard_normal((2, 5, 5))
                    if np.dtype(dt).kind == "c":
                        a = a + 1j * rng.standard_normal((2, 5, 5))
                    a = a.astype(dt)
                    tol = 1e-4 if dt in (np.float32, np.complex64) else 1e-10
                    (t, z), (ct, _) = both(jsl.schur, a)
                    self.assertEqual(t.dtype, ct.dtype)
                    zh = np.conj(np.swapaxes(z, -1, -2))
                    np.testing.assert_allclose(z @ t @ zh, a, rtol=tol, atol=tol)
                    np.testing.assert_allclose(zh @ z, np.broadcast_to(np.eye(5), a.shape), atol=tol)
                    below = 2 if np.dtype(dt).kind == "f" else 1
                    self.assertTrue((np.tril(t, -below) == 0).all())
                    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(t).ravel()),
                                               np.sort_complex(np.linalg.eigvals(ct).ravel()), rtol=tol, atol=tol)
            s, _ = both(jsl.sqrtm, a[0])
            np.testing.assert_allclose(s @ s, a[0], rtol=1e-8, atol=1e-8)

    def test_tridiagonal_solve_perturbed(self):
        """lax.linalg.tridiagonal_solve(perturb_singular=True) (tridiagonal_solve_perturbed_ffi,
        jaxlib's own kernel) in the four types against JAX's CPU: a system that needs pivoting,
        and singular ones (rows alike, the zero matrix), finite and large as jaxlib makes them."""
        from jax import lax
        solve = lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)  # noqa: E731
        rng = np.random.default_rng(6)
        with jax.enable_x64(True):
            for dt in (np.float32, np.float64, np.complex64, np.complex128):
                with self.subTest(np.dtype(dt).name):
                    dl, d, du, b = (rng.standard_normal(s) for s in ((3, 6), (3, 6), (3, 6), (3, 6, 2)))
                    if np.dtype(dt).kind == "c":
                        dl = dl + 1j * rng.standard_normal((3, 6))
                    d[1] = 0  # the pivots of system 1 need rows swapped
                    d[2], dl[2], du[2] = 0, 0, 0  # the zero matrix
                    args = [x.astype(dt) for x in (dl, d, du, b)]
                    got, want = both(solve, *args)
                    tol = 1e-4 if dt in (np.float32, np.complex64) else 1e-10
                    np.testing.assert_allclose(got, want, rtol=tol)
                    self.assertTrue(np.isfinite(got).all() and (np.abs(got[2]) > 1e6).all())


class DotAlgorithms(Base):
    def test_one_pass_algorithms_and_refusals(self):
        """A dot algorithm of one pass is the dot on operands rounded to its input type; the
        3- and 6-pass bf16 splits of an f32 dot are their bf16 dots summed in f32, as accurate as
        JAX's CPU makes them (the others JAX refuses itself for CPUs, which cxla's lowering shares)."""
        from jax import lax
        a = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
        exact = a.astype(np.float64) @ a.T.astype(np.float64)
        for prec, tol in (("F32_F32_F32", 1e-5), ("BF16_BF16_F32", 3e-2), ("BF16_BF16_F32_X3", 1e-4),
                          ("BF16_BF16_F32_X6", 1e-5)):
            with self.subTest(prec):
                got, want = both(lambda x: lax.dot(x, x.T, precision=prec), a)
                self.close(got, want, rtol=tol, atol=tol)
                np.testing.assert_allclose(got, exact, rtol=tol, atol=tol)


class CostAnalysis(Base):
    def cost(self, fn, dev, *args):
        c = jax.jit(fn).lower(*on(dev, args)).compile().cost_analysis()
        c = c[0] if isinstance(c, (list, tuple)) else c
        self.assertIsInstance(c, dict)
        return c

    def test_flops_and_transcendentals_as_on_jax_cpu(self):
        """compiled.cost_analysis() counts what XLA's HloCostAnalysis counts: a product's, a
        padded, strided and dilated convolution's (only positions that land on the input), an
        elementwise chain's and a reduction's flops and transcendentals are JAX CPU's own numbers.
        Bytes accessed are what the compiled program's kernels move (cxla's fused module, as XLA
        counts its own): JAX CPU's numbers here, where both fuse alike (exp, multiply and sum one
        kernel: 32,772 bytes, where the module before fusion moves 229 kB)."""
        from jax import lax
        rng = np.random.default_rng(0)
        x = rng.standard_normal((64, 128), np.float32)
        w = rng.standard_normal((128, 32), np.float32)
        img = rng.standard_normal((2, 9, 9, 3), np.float32)
        k = rng.standard_normal((3, 3, 3, 4), np.float32)
        cases = {
            "matmul": (lambda a, b: a @ b, (x, w)),
            "exp_sum": (lambda a: jnp.sum(jnp.exp(a) * 2.0), (x,)),
            "tanh": (jnp.tanh, (x,)),
            "conv": (lambda a, b: lax.conv_general_dilated(
                a, b, (2, 2), [(1, 2), (0, 1)], rhs_dilation=(1, 2),
                dimension_numbers=("NHWC", "HWIO", "NHWC")), (img, k)),
        }
        for name, (fn, args) in cases.items():
            with self.subTest(name):
                got, want = self.cost(fn, CX, *args), self.cost(fn, CPU, *args)
                self.assertEqual(got["flops"], want.get("flops", 0.0))
                self.assertEqual(got["transcendentals"], want.get("transcendentals", 0.0))
                io = sum(a.nbytes for a in args)
                self.assertGreaterEqual(got["bytes accessed"], io)
                self.assertEqual(got["bytes accessed"], want["bytes accessed"])
        self.assertEqual(self.cost(cases["matmul"][0], CX, x, w)["flops"], 2 * 64 * 32 * 128)

    def test_loop_counts_every_trip(self):
        """A fori_loop of 10 trips counts its body 10 times (JAX's StableHLO carries the bound
        and the step; cxla knows the trip count), where XLA counts one trip."""
        from jax import lax
        x = np.ones((64, 128), np.float32)
        body = lambda i, c: c * 1.5 + 1.0  # noqa: E731
        one = self.cost(lambda a: lax.fori_loop(0, 1, body, a), CX, x)["flops"]
        ten = self.cost(lambda a: lax.fori_loop(0, 10, body, a), CX, x)["flops"]
        self.assertEqual(ten, 10 * one)
        self.assertEqual(self.cost(lambda a: lax.fori_loop(0, 10, body, a), CPU, x)["flops"], one)


class MemoryAnalysis(Base):
    def stats(self, fn, dev, *args, donate=()):
        m = jax.jit(fn, donate_argnums=donate).lower(*on(dev, args)).compile().memory_analysis()
        self.assertIsNotNone(m)
        return m

    def test_arguments_outputs_and_aliases_as_on_jax_cpu(self):
        """compiled.memory_analysis() reports the arguments' and results' bytes as JAX's CPU does,
        and the bytes of donated arguments a result is computed in (an optimizer's update in
        place); temporaries are cxla's own plan: none for one fused elementwise kernel, the first
        product's result in a chain of two."""
        rng = np.random.default_rng(0)
        p = rng.standard_normal((256, 256), np.float32)
        g = rng.standard_normal((256, 256), np.float32)
        sgd = lambda a, b: a - 0.1 * b  # noqa: E731
        for donate in ((), (0,)):
            with self.subTest(donate=donate):
                got, want = self.stats(sgd, CX, p, g, donate=donate), self.stats(sgd, CPU, p, g, donate=donate)
                self.assertEqual(got.argument_size_in_bytes, want.argument_size_in_bytes)
                self.assertEqual(got.output_size_in_bytes, want.output_size_in_bytes)
                self.assertEqual(got.alias_size_in_bytes, want.alias_size_in_bytes)
                self.assertEqual(got.alias_size_in_bytes, p.nbytes if donate else 0)
                self.assertEqual(got.temp_size_in_bytes, 0)
                self.assertGreater(got.generated_code_size_in_bytes, 0)
        two = self.stats(lambda a, b: (a @ b) @ b, CX, p, g)
        self.assertEqual(two.argument_size_in_bytes, 2 * p.nbytes)
        self.assertGreaterEqual(two.temp_size_in_bytes, p.nbytes)


class Sinks(Base):
    def test_dce_sink(self):
        """lax.dce_sink keeps a value's computation through dead-code elimination and computes
        nothing: the program runs as on JAX's CPU, and the compiled program's text (the program
        cxla compiled, through PJRT_Executable_OptimizedProgram) keeps the sink and its add."""
        from jax import lax

        def f(x):
            lax.dce_sink(x + 1, prevent_mlir_dce=True)
            return x * 2

        x = np.float32(1.5)
        self.close(*both(f, x))
        text = jax.jit(f).lower(jax.device_put(x, CX)).compile().as_text()
        self.assertIn("dce_sink", text)
        self.assertIn("add", text)


class PlatformDependent(Base):
    def test_cpu_branch_runs_on_cxla(self):
        """lax.platform_dependent takes its 'cpu' branch on cxla (which lowers with JAX's CPU
        rules), as on JAX's CPU, jitted, eager and under grad; a branch naming 'cxla' wins."""
        from jax import lax
        x = np.arange(3, dtype=np.float32)

        def f(v):
            return lax.platform_dependent(v, cpu=jnp.sin, default=jnp.cos)

        self.close(*both(f, x))
        np.testing.assert_allclose(np.asarray(jax.jit(f)(jax.device_put(x, CX))), np.sin(x), rtol=1e-6)
        with jax.default_device(CX):
            np.testing.assert_allclose(np.asarray(f(x)), np.sin(x), rtol=1e-6)
        self.close(*both(jax.grad(lambda v: f(v).sum()), x))
        own = jax.jit(lambda v: lax.platform_dependent(v, cpu=jnp.sin, cxla=jnp.tanh, default=jnp.cos))
        np.testing.assert_allclose(np.asarray(own(jax.device_put(x, CX))), np.tanh(x), rtol=1e-6)


class Tokens(Base):
    def test_token_results_and_arguments(self):
        """A jitted function returns tokens (PJRT buffers of type TOKEN) and takes them back, a
        token made outside jit included; a token has no value to copy to the host."""
        from jax._src import core
        with jax.default_device(CX):
            tok = jax.lax.create_token()
            self.assertIsInstance(jax.jit(jax.lax.create_token)(1.0), core.Token)
            noop = jax.jit(lambda a, t: (a, t))
            a, t = noop(jnp.arange(3.0), tok)
            self.assertIsInstance(t, core.Token)
            self.assertIsNot(t, tok)
            b, t2 = noop(a * 2, t)
            np.testing.assert_array_equal(np.asarray(b), [0.0, 2.0, 4.0])
            self.assertEqual(b.devices(), {CX})
            _, y = jax.jit(lambda x: (x + 2, tok))(7)
            self.assertIsInstance(y, core.Token)
            with self.assertRaisesRegex(RuntimeError, "token-shape buffer"):
                t2._buf._value


class Shardy(Base):
    def test_default_partitioner(self):
        """JAX's default, Shardy: the program carries sdy.mesh and sdy.sharding."""
        self.assertTrue(jax.config.jax_use_shardy_partitioner)
        x = jax.device_put(np.arange(4, dtype=np.float32), CX)
        y = jax.jit(lambda a: a * 2 + 1)(x)
        np.testing.assert_array_equal(np.asarray(y), [1, 3, 5, 7])

    def test_sharding_constraints_inside(self):
        """jax.random's out_sharding: an sdy.sharding_constraint between builtin casts."""
        key = jax.device_put(jax.random.PRNGKey(0), CX)
        got = np.asarray(jax.jit(lambda k: jax.random.normal(k, (5,)))(key))
        want = np.asarray(jax.jit(lambda k: jax.random.normal(k, (5,)))(jax.device_put(jax.random.PRNGKey(0), CPU)))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

    def test_gspmd_partitioner(self):
        """The older GSPMD shardings (mhlo.sharding attributes) read as well."""
        jax.config.update("jax_use_shardy_partitioner", False)
        try:
            x = jax.device_put(np.arange(4, dtype=np.float32), CX)
            y = jax.jit(lambda a: a * 3 - 1)(x)
            np.testing.assert_array_equal(np.asarray(y), [-1, 2, 5, 8])
        finally:
            jax.config.update("jax_use_shardy_partitioner", True)

    def test_shard_map_on_one_device(self):
        """A shard_map (with a psum) over a one-device mesh of cxla, its input resharded: the
        StableHLO's sdy.sharding_constraint and result shardings are the values themselves."""
        from jax.sharding import PartitionSpec as P

        def step(x):
            body = lambda b: jnp.sin(b) * 2 + jax.lax.psum(b.sum(), "x")  # noqa: E731
            return jax.shard_map(body, in_specs=P("x"), out_specs=P("x"))(jax.reshard(x, P("x")))

        x = np.arange(12, dtype=np.float32).reshape(4, 3)
        got = {}
        for dev in (CX, CPU):
            mesh = jax.make_mesh((1,), ("x",), devices=[dev], axis_types=(jax.sharding.AxisType.Explicit,))
            with jax.set_mesh(mesh):
                got[dev.platform] = np.asarray(jax.jit(step)(jax.device_put(x, dev)))
        np.testing.assert_allclose(got["cxla"], got["cpu"], rtol=1e-6, atol=1e-6)


class HostCallbacks(Base):
    """jax.debug.print, pure_callback and io_callback on a cxla device: the plugin's lowering
    registers the callable and the plugin calls it back (docs/pjrt.md), as JAX's CPU does."""

    def printed(self, fn, *args):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            out = jax.tree_util.tree_map(np.asarray, fn(*args))
            jax.effects_barrier()
        return out, buf.getvalue()

    def test_debug_print(self):
        def f(x):
            jax.debug.print("x={x} sum={s}", x=x, s=x.sum())
            return x * 2

        x = np.arange(3, dtype=np.float32)
        got, said = self.printed(jax.jit(f), jax.device_put(x, CX))
        want, cpu_said = self.printed(jax.jit(f), jax.device_put(x, CPU))
        self.close(got, want)
        self.assertIn("x=[0. 1. 2.] sum=3.0", said)
        self.assertEqual(said, cpu_said)

    def test_pure_callback_in_a_loop_and_under_vmap(self):
        spec = jax.ShapeDtypeStruct((4,), np.float32)

        def loop(x):
            body = lambda i, c: c + jax.pure_callback(lambda v, k: np.cos(v) * k, spec, c, i.astype(np.float32))
            return jax.lax.fori_loop(0, 3, body, x)

        def mapped(x):
            one = jax.ShapeDtypeStruct((), np.float32)
            return jax.vmap(lambda v: jax.pure_callback(lambda a: np.sinh(a), one, v, vmap_method="sequential"))(x)

        x = np.linspace(-1, 1, 4, dtype=np.float32)
        for fn in (loop, mapped):
            with self.subTest(fn.__name__):
                got, want = both(fn, x)
                self.close(got, want)
                self.assertIn("cxla_host_callback", jax.jit(fn).lower(jax.device_put(x, CX)).as_text())

    def test_io_callback_ordered(self):
        from jax.experimental import io_callback
        log = []

        def f(x):
            for k in range(3):  # no data between them: only the ordered effect's tokens order them
                io_callback(lambda k=k: log.append(k), None, ordered=True)
            return io_callback(lambda v: v + 1, jax.ShapeDtypeStruct((3,), np.float32), x, ordered=True)

        x = jax.device_put(np.arange(3, dtype=np.float32), CX)
        step = jax.jit(f)
        self.close(np.asarray(step(x)), np.arange(3, dtype=np.float32) + 1)
        self.close(np.asarray(step(x)), np.arange(3, dtype=np.float32) + 1)
        jax.effects_barrier()
        self.assertEqual(log, [0, 1, 2, 0, 1, 2])

    def test_an_exception_is_a_runtime_error(self):
        spec = jax.ShapeDtypeStruct((3,), np.float32)

        def bad(v):
            raise ValueError("no value for you")

        fns = {"raises": lambda a: jax.pure_callback(bad, spec, a),
               "wrong shape": lambda a: jax.pure_callback(lambda v: np.zeros((3, 1), np.float32), spec, a)}
        msgs = {"raises": "ValueError: no value for you", "wrong shape": "Incorrect output shape for return value #0"}
        logging.disable(logging.CRITICAL)  # jax logs the traceback of a failed pure_callback too
        try:
            for name, fn in fns.items():
                with self.subTest(name):
                    with self.assertRaisesRegex(jax.errors.JaxRuntimeError, "host callback .*" + msgs[name]):
                        np.asarray(jax.jit(fn)(jax.device_put(np.ones(3, np.float32), CX)))
            self.close(np.asarray(jax.jit(lambda a: a * 2)(jax.device_put(np.ones(3, np.float32), CX))),
                       np.full(3, 2, np.float32))
        finally:
            logging.disable(logging.NOTSET)


class EntryPoint(Base):
    def test_jax_platforms_cxla(self):
        """A fresh process with JAX_PLATFORMS=cxla finds the plugin through the jax_plugins entry
        point that python/pyproject.toml declares (its metadata written by setuptools' egg_info
        into a scratch folder on the path, as an install would)."""
        with tempfile.TemporaryDirectory() as tmp:
            meta = subprocess.run([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", tmp],
                                  cwd=os.path.join(ROOT, "python"), capture_output=True, text=True)
            self.assertEqual(meta.returncode, 0, meta.stderr[-2000:])
            env = dict(os.environ, JAX_PLATFORMS="cxla", PYTHONPATH=tmp + os.pathsep + os.path.join(ROOT, "python"),
                       CXLA_FLAGS="--pjrt-gpu=off")  # one device on any machine
            probe = ("import jax, numpy as np\n"
                     "d = jax.devices()[0]\n"
                     "print(d.platform, len(jax.devices()))\n"
                     "print(np.asarray(jax.jit(lambda a: a * 2)(np.arange(3, dtype=np.float32))).tolist())\n")
            out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, cwd=tmp,
                                 timeout=300)
            self.assertEqual(out.returncode, 0, out.stderr[-2000:])
            self.assertEqual(out.stdout.split("\n")[:2], ["cxla 1", "[0.0, 2.0, 4.0]"])


GPU_PROBE = r"""
import json, jax, jax.numpy as jnp, numpy as np
from jax import lax
out = {}
cx = jax.devices("cxla")
out["devices"] = [[d.id, d.device_kind, d.platform, d.process_index, str(d), repr(d)] for d in jax.devices()]
out["default"] = jax.devices()[0].id
gpu = cx[-1]
out["memories"] = [[m.kind, str(m)] for m in gpu.addressable_memories()]
cpu = jax.devices("cpu")[0]
x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
w = np.arange(20, dtype=np.float32).reshape(4, 5) / 10
f = lambda a, b: jnp.tanh(a @ b) * 2 + jnp.sum(a, axis=1, keepdims=True)
xg, wg = jax.device_put(x, gpu), jax.device_put(w, gpu)
out["put_devices"] = [d.id for d in xg.devices()]
out["round_trip"] = bool(np.array_equal(np.asarray(xg), x))
y = jax.jit(f)(xg, wg)
out["jit_devices"] = [d.id for d in y.devices()]
want = jax.jit(f)(jax.device_put(x, cpu), jax.device_put(w, cpu))
out["max_err"] = float(np.max(np.abs(np.asarray(y) - np.asarray(want))))
g = jax.jit(lambda a: a * 3 + 1, donate_argnums=0)
d = jax.device_put(x, gpu)
r = g(d)
out["donated"] = [d.is_deleted(), [e.id for e in r.devices()], bool(np.allclose(np.asarray(r), x * 3 + 1))]
ms0 = gpu.memory_stats()
big = jax.device_put(np.ones((256, 1024), np.float32), gpu)
ms1 = gpu.memory_stats()
del big
ms2 = gpu.memory_stats()
out["memory_stats"] = [cx[0].memory_stats(), sorted(k for k, v in ms1.items() if v >= 0),
                       ms1["bytes_in_use"] - ms0["bytes_in_use"],
                       ms2["bytes_in_use"] == ms0["bytes_in_use"], ms2["peak_bytes_in_use"] >= ms1["bytes_in_use"],
                       ms2["pool_bytes"] >= ms1["bytes_in_use"]]
to_cx_cpu = jax.device_put(y, cx[0])
to_jax_cpu = jax.device_put(y, cpu)
back = jax.device_put(to_cx_cpu, gpu)
out["copies"] = [[e.id for e in to_cx_cpu.devices()], to_jax_cpu.devices() == {cpu}, [e.id for e in back.devices()],
                 bool(np.array_equal(np.asarray(to_cx_cpu), np.asarray(y))),
                 bool(np.array_equal(np.asarray(to_jax_cpu), np.asarray(y))),
                 bool(np.array_equal(np.asarray(back), np.asarray(y)))]
import jax.scipy.linalg as jsl
la_in = np.random.RandomState(1).randn(3, 5, 5).astype(np.float32)
la_fns = {  # LAPACK targets the gpu backend runs on the host (gees, gehrd, geev, geqp3, the perturbed
            # tridiagonal solve) or on cuSOLVER (sytrd through eigvalsh's lowering, potrf, getrf)
    "schur": lambda a: jsl.schur(a[0])[0], "hessenberg": lambda a: jsl.hessenberg(a[0])[0],
    "eigvals": lambda a: jnp.abs(jnp.linalg.eigvals(a)), "qr_pivoting": lambda a: jsl.qr(a[0], pivoting=True)[1],
    "tridiagonal_solve": lambda a: lax.linalg.tridiagonal_solve(a[:, 0], a[:, 1] + 4, a[:, 2], a[:, :, :2]),
    "cholesky": lambda a: jnp.linalg.cholesky(a @ jnp.swapaxes(a, -1, -2) + 5 * jnp.eye(5)),
    "lu": lambda a: jsl.lu_factor(a)[0]}
out["linalg"] = {}
for name, fn in la_fns.items():
    got = jax.jit(fn)(jax.device_put(la_in, gpu))
    ref = jax.jit(fn)(jax.device_put(la_in, cpu))
    out["linalg"][name] = [[e.id for e in got.devices()], float(np.max(np.abs(np.asarray(got) - np.asarray(ref))))]
cb = jax.jit(lambda a: jax.pure_callback(lambda x: np.asarray(x) * 2, jax.ShapeDtypeStruct((4,), np.float32), a))
on_gpu = cb(jax.device_put(np.arange(4, dtype=np.float32), gpu))
out["callback"] = [[e.id for e in on_gpu.devices()], np.asarray(on_gpu).tolist()]
draw = jax.jit(lambda a: a + lax.rng_uniform(0.0, 1.0, (4,)))
on_gpu = draw(jax.device_put(np.zeros(4, np.float32), gpu))
on_cx_cpu = draw(jax.device_put(np.zeros(4, np.float32), cx[0]))
out["rng"] = [[e.id for e in on_gpu.devices()], bool(np.array_equal(np.asarray(on_gpu), np.asarray(on_cx_cpu)))]
try:
    from jax.experimental.shard_map import shard_map
    from jax.sharding import Mesh, PartitionSpec
    on_one = Mesh(np.array([gpu]), ("i",))
    jax.jit(shard_map(lambda a: a + lax.axis_index("i"), mesh=on_one, in_specs=PartitionSpec("i"),
                      out_specs=PartitionSpec("i")))(jax.device_put(np.zeros(4, np.int32), gpu)).block_until_ready()
    out["refused"] = "no error"
except Exception as e:
    out["refused"] = type(e).__name__ + ": " + str(e)
import optax
opt = optax.adam(1e-2)
def mlp_loss(p, a, b):
    return jnp.mean((jnp.tanh(a @ p["w1"] + p["b1"]) @ p["w2"] - b) ** 2)
def train_step(p, s, a, b):
    l, gr = jax.value_and_grad(mlp_loss)(p, a, b)
    u, s = opt.update(gr, s, p)
    return optax.apply_updates(p, u), s, l
rs = np.random.RandomState(0)
xs = rs.randn(32, 8).astype(np.float32)
ys = np.sin(xs[:, :1])
p0 = {"w1": rs.randn(8, 16).astype(np.float32) * 0.3, "b1": np.zeros(16, np.float32),
      "w2": rs.randn(16, 1).astype(np.float32) * 0.3}
losses = {}
for dev in (gpu, cpu):
    p = jax.device_put(p0, dev)
    s = jax.device_put(opt.init(p), dev)
    step = jax.jit(train_step, donate_argnums=(0, 1))
    a, b = jax.device_put(xs, dev), jax.device_put(ys, dev)
    ls = []
    for _ in range(5):
        p, s, l = step(p, s, a, b)
        ls.append(float(l))
    losses[dev.platform] = [ls, sorted({e.id for leaf in jax.tree_util.tree_leaves((p, s)) for e in leaf.devices()})]
out["train"] = losses
print("RESULT " + json.dumps(out))
"""


class GpuDevice(Base):
    """The plugin's GPU device on the emulated GPU (CXLA_FLAGS=--pjrt-gpu=emu, docs/pjrt.md), in
    a fresh process: the flag is read when JAX makes the plugin's client."""

    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, JAX_PLATFORMS="cxla,cpu", CXLA_FLAGS="--pjrt-gpu=emu",
                       PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
            probe = "import cxla._jax_plugin as p\np.initialize()\n" + GPU_PROBE
            cls.run_ = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, cwd=tmp,
                                      timeout=600)
        lines = [ln for ln in cls.run_.stdout.split("\n") if ln.startswith("RESULT ")]
        cls.out = json.loads(lines[-1][7:]) if lines else None

    def setUp(self):
        self.assertIsNotNone(self.out, self.run_.stderr[-3000:])

    def test_devices_listed(self):
        """jax.devices() lists the cpu (the default, first) and the gpu-emu device, one platform,
        process 0; the GPU has its own memory, of kind "device"."""
        self.assertEqual(self.out["devices"], [[0, "cpu", "cxla", 0, "cxla:0", "CxlaDevice(id=0)"],
                                               [1, "gpu-emu", "cxla", 0, "cxla:1", "CxlaDevice(id=1)"]])
        self.assertEqual(self.out["default"], 0)
        self.assertEqual(self.out["memories"], [["device", "cxla:1 device memory"]])

    def test_device_put_and_jit_on_the_gpu(self):
        """device_put onto the GPU and back; a jitted dot + tanh + reduce runs there, its result
        stays there, and it matches JAX's CPU."""
        self.assertEqual(self.out["put_devices"], [1])
        self.assertTrue(self.out["round_trip"])
        self.assertEqual(self.out["jit_devices"], [1])
        self.assertLess(self.out["max_err"], 1e-5)

    def test_donation(self):
        self.assertEqual(self.out["donated"], [True, [1], True])

    def test_device_memory_stats(self):
        """device.memory_stats() on the GPU: bytes in use (up by a 1 MiB array's bytes while it
        lives, back when it is deleted), their peak and the pool the cache keeps (JAX gives -1 for
        the figures a plugin leaves unset); None on the cpu device, as on JAX's own CPU backend."""
        cpu_stats, keys, grew, back, peak, pool = self.out["memory_stats"]
        self.assertIsNone(cpu_stats)
        self.assertEqual(keys, ["bytes_in_use", "peak_bytes_in_use", "pool_bytes"])
        self.assertEqual(grew, 256 * 1024 * 4)
        self.assertTrue(back and peak and pool)

    def test_copies_between_devices(self):
        """GPU -> cxla's cpu, GPU -> JAX's CPU backend, cxla's cpu -> GPU, values unchanged."""
        self.assertEqual(self.out["copies"], [[0], True, [1], True, True, True])

    def test_training_steps_with_donation(self):
        """Five donated Adam steps of an MLP on the GPU: every parameter and optimizer state stays
        there, and the losses are JAX CPU's (float32 rounding apart)."""
        (gpu_losses, gpu_devs), (cpu_losses, _) = self.out["train"]["cxla"], self.out["train"]["cpu"]
        self.assertEqual(gpu_devs, [1])
        np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-5)
        self.assertLess(gpu_losses[-1], gpu_losses[0])

    def test_lapack_targets_on_the_gpu(self):
        """jax.scipy.linalg.schur, hessenberg, eigvals, pivoted QR, the tridiagonal solve, cholesky
        and LU of batches compile for the GPU (host steps where no NVIDIA library has the
        routine), their results stay there and match JAX's CPU."""
        for name, (devs, err) in self.out["linalg"].items():
            self.assertEqual(devs, [1], name)
            self.assertLess(err, 1e-3, name)

    def test_refused_op_is_cxla_error(self):
        """An op the gpu backend refuses (lax.axis_index: a partition-id, which needs a GPU transport)
        fails the compile with cxla's message."""
        self.assertIn("JaxRuntimeError: UNIMPLEMENTED", self.out["refused"])
        self.assertIn("(partition-id) cannot run on the GPU yet", self.out["refused"])

    def test_pure_callback_runs_on_the_gpu(self):
        """A jax.pure_callback in a program on the GPU is a host step there: the host computes it."""
        self.assertEqual(self.out["callback"], [[1], [0.0, 2.0, 4.0, 6.0]])

    def test_rng_matches_the_cpu_device(self):
        """lax.rng_uniform runs on the GPU and draws the cxla cpu device's numbers, bit for bit."""
        self.assertEqual(self.out["rng"], [[1], True])


class Example(Base):
    def test_jax_train_reaches_jax_accuracy(self):
        """examples/jax_train.py, plain flax and optax, trained on cxla (JAX_PLATFORMS=cxla in a
        fresh process, the plugin found through its entry point) and on JAX's CPU: the same
        accuracy on the test set, up to the last digits that summation order moves."""
        try:
            import flax  # noqa: F401
            import optax  # noqa: F401
        except ImportError as e:
            self.skipTest(f"examples/jax_train.py needs flax and optax: {e}")
        data = "/usr/share/datasets/fashion-mnist"
        if not os.path.exists(os.path.join(data, "t10k-labels-idx1-ubyte.gz")):
            self.skipTest("Fashion-MNIST (Debian's dataset-fashion-mnist) is not installed")
        with tempfile.TemporaryDirectory() as tmp:
            meta = subprocess.run([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", tmp],
                                  cwd=os.path.join(ROOT, "python"), capture_output=True, text=True)
            self.assertEqual(meta.returncode, 0, meta.stderr[-2000:])
            acc = {}
            for platform in ("cxla", "cpu"):
                env = dict(os.environ, JAX_PLATFORMS=platform,
                           PYTHONPATH=tmp + os.pathsep + os.path.join(ROOT, "python"))
                out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "jax_train.py"), "--epochs", "1",
                                      "--train-size", "2048", "--data", data], env=env, capture_output=True, text=True,
                                     cwd=tmp, timeout=600)
                self.assertEqual(out.returncode, 0, out.stderr[-2000:])
                self.assertIn(f"backend: {platform}", out.stdout)
                acc[platform] = float(out.stdout.split("test accuracy ")[1].split(",")[0])
        self.assertGreater(acc["cpu"], 0.6)
        self.assertLess(abs(acc["cxla"] - acc["cpu"]), 0.01, acc)


if __name__ == "__main__":
    unittest.main()
