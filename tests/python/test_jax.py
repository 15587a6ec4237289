"""cxla.jit against jax.jit (needs jax: tests/python/python_test.sh runs this in a venv with
jax from PyPI): the kinds of model in tests/hlo/jax rewritten in jax, pytrees in and out,
signatures, donation, and a 20-step MLP training loop that must reach jax's weights."""
import collections
import contextlib
import io
import logging
import unittest

import numpy as np

import jax
import jax.numpy as jnp

import cxla

RNG = np.random.default_rng(11)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def assert_trees_close(test, got, want, rtol=2e-5, atol=2e-5):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    test.assertEqual(got_tree, want_tree)
    for g, w in zip(got_leaves, want_leaves):
        test.assertIsInstance(g, np.ndarray)
        w = np.asarray(w)
        test.assertEqual(g.shape, w.shape)
        test.assertEqual(g.dtype, w.dtype)
        if w.dtype.kind in "fV" or str(w.dtype) == "bfloat16":
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, w)


# ---- the models of tests/hlo/jax, as jax functions ----

def mlp(p, x):
    h = jax.nn.relu(x @ p["w1"] + p["b1"])
    return jax.nn.softmax(h @ p["w2"] + p["b2"])


def layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b


def conv_layer(x, k, b):
    y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jax.nn.relu(y + b)


def attention(q, k, v):
    s = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1]).astype(np.float32)
    return jax.nn.softmax(s, axis=-1) @ v


def scan_cumprod(x):
    def body(c, xi):
        c = c * xi
        return c, c
    return jax.lax.scan(body, jnp.ones(x.shape[1:], x.dtype), x)


def cond(p, x):
    return jax.lax.cond(p, lambda x: jnp.sin(x), lambda x: jnp.cos(x) * 2, x)


def fori(x):
    return jax.lax.fori_loop(0, 7, lambda i, c: c * 0.5 + i, x)


def log_softmax_xent(logits, labels):
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))


def multi_output(x):
    return x.sum(0), x.max(1), jnp.argmax(x, 1), jnp.cumsum(x, 0)


def where_clip(x):
    return jnp.where(x > 0, jnp.clip(x, 0.1, 0.5), -x)


def take_dynamic(table, idx):
    return table[idx], jax.lax.dynamic_slice(table, (idx[0], 0), (2, table.shape[1]))


def top_k(x):  # as a sort (lax.top_k lowers to XLA's topk op, which cxla does not run yet)
    return jnp.sort(x, axis=-1)[:, ::-1][:, :3], jnp.argsort(-x, axis=-1)[:, :3]


def bf16_matmul(a, b):
    return (a.astype(jnp.bfloat16) @ b.astype(jnp.bfloat16)).astype(jnp.float32)


def embedding_grad(table, idx):
    return jax.grad(lambda t: jnp.sum(t[idx] ** 2))(table)


def attention_grad(q, k, v):
    return jax.grad(lambda q: jnp.sum(attention(q, k, v) ** 2))(q)


MODELS = [
    ("mlp", mlp, lambda: ({"w1": randn(16, 32), "b1": randn(32), "w2": randn(32, 10), "b2": randn(10)}, randn(8, 16))),
    ("layer_norm", layer_norm, lambda: (randn(4, 64), randn(64), randn(64))),
    ("conv_layer", conv_layer, lambda: (randn(2, 8, 8, 3), randn(3, 3, 3, 4), randn(4))),
    ("attention", attention, lambda: (randn(2, 5, 8), randn(2, 6, 8), randn(2, 6, 8))),
    ("scan", scan_cumprod, lambda: (randn(6, 3),)),
    ("cond_true", cond, lambda: (True, randn(5))),
    ("cond_false", cond, lambda: (False, randn(5))),
    ("fori_loop", fori, lambda: (randn(4),)),
    ("log_softmax_xent", log_softmax_xent, lambda: (randn(8, 5), RNG.integers(0, 5, 8).astype(np.int32))),
    ("multi_output", multi_output, lambda: (randn(4, 6),)),
    ("where_clip", where_clip, lambda: (randn(3, 7),)),
    ("take_dynamic", take_dynamic, lambda: (randn(10, 4), np.array([3, 0, 9, 3], np.int32))),
    ("top_k", top_k, lambda: (randn(4, 9),)),
    ("bf16_matmul", bf16_matmul, lambda: (randn(4, 8), randn(8, 3))),
    ("embedding_grad", embedding_grad, lambda: (randn(10, 4), np.array([1, 1, 7], np.int32))),
    ("attention_grad", attention_grad, lambda: (randn(1, 4, 8), randn(1, 4, 8), randn(1, 4, 8))),
]


class Models(unittest.TestCase):
    """One test per model: cxla.jit on both backends against jax.jit on the same inputs."""


def _model_test(name, fn, make):
    def test(self):
        args = make()
        want = jax.jit(fn)(*args)
        tol = 2e-2 if name == "bf16_matmul" else 2e-5
        for backend in ("cpu", "interp"):
            got = cxla.jit(fn, backend=backend)(*args)
            assert_trees_close(self, got, want, rtol=tol, atol=tol)
    return test


for _name, _fn, _make in MODELS:
    setattr(Models, "test_" + _name, _model_test(_name, _fn, _make))


class LinearAlgebra(unittest.TestCase):
    def test_eig_on_both_backends(self):
        """jnp.linalg.eig (lapack_sgeev_ffi) through cxla.jit: LAPACK's geev on the cpu backend,
        the interpreter's own Schur reference; the eigenvalues are jax's as a set (the two order
        them differently), A v = w v, and the left vectors u^H A = w u^H."""
        a = np.random.default_rng(5).standard_normal((2, 6, 6)).astype(np.float32)
        want = np.sort_complex(np.asarray(jax.jit(jnp.linalg.eigvals)(a)))

        def left_right(x):
            return jax.lax.linalg.eig(x, compute_left_eigenvectors=True)

        for backend in ("cpu", "interp"):
            with self.subTest(backend):
                w, vl, vr = (np.asarray(r) for r in cxla.jit(left_right, backend=backend)(a))
                np.testing.assert_allclose(np.sort_complex(w), want, rtol=1e-4, atol=1e-4)
                np.testing.assert_allclose(a @ vr, vr * w[..., None, :], rtol=1e-4, atol=1e-4)
                uh = np.conj(np.swapaxes(vl, -1, -2))
                np.testing.assert_allclose(uh @ a, w[..., :, None] * uh, rtol=1e-4, atol=1e-4)

    def test_schur_and_perturbed_tridiagonal_solve_on_both_backends(self):
        """jax.scipy.linalg.schur (lapack_sgees_ffi, lapack_cgees_ffi) and the perturbed tridiagonal
        solve through cxla.jit: LAPACK's gees and jaxlib's kernel on the cpu backend, the
        interpreter's own references; a Schur form is checked as one (a = z t z^H, t
        (quasi-)triangular), the solve against jax's."""
        import jax.scipy.linalg as jsl
        rng = np.random.default_rng(8)
        a = rng.standard_normal((2, 6, 6)).astype(np.float32)
        ac = (a + 1j * rng.standard_normal((2, 6, 6))).astype(np.complex64)
        dl, d, du = (rng.standard_normal((2, 5)).astype(np.float32) for _ in range(3))
        b = rng.standard_normal((2, 5, 3)).astype(np.float32)
        d[1] = 0  # pivoting
        solve = lambda *x: jax.lax.linalg.tridiagonal_solve(*x, perturb_singular=True)  # noqa: E731
        want = np.asarray(jax.jit(solve)(dl, d, du, b))
        for backend in ("cpu", "interp"):
            for m, below in ((a, 2), (ac, 1)):
                with self.subTest(backend=backend, dtype=m.dtype.name):
                    t, z = (np.asarray(r) for r in cxla.jit(jsl.schur, backend=backend)(m))
                    zh = np.conj(np.swapaxes(z, -1, -2))
                    np.testing.assert_allclose(z @ t @ zh, m, rtol=1e-4, atol=1e-4)
                    self.assertTrue((np.tril(t, -below) == 0).all())
            with self.subTest(backend=backend, op="tridiagonal_solve"):
                got = np.asarray(cxla.jit(solve, backend=backend)(dl, d, du, b))
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def key_step(k, x):
    k1, k2 = jax.random.split(k)
    return {"key": k1, "y": x + jax.random.normal(k2, x.shape)}


def key_bits(tree):
    """tree with each typed PRNG key array replaced by its uint32 key data."""
    def bits(a):
        is_key = hasattr(a, "dtype") and jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key)
        return np.asarray(jax.random.key_data(a) if is_key else a)
    return jax.tree_util.tree_map(bits, tree)


def sharded_step(x):
    """A shard_map over a one-device mesh whose input is resharded first: jax writes Sharding
    and xla.sdy.FuncResultSharding custom-calls into the HLO text."""
    from jax.sharding import PartitionSpec as P

    def body(b):
        return jnp.sin(b) * 2 + jax.lax.psum(b.sum(), "x")
    return jax.shard_map(body, in_specs=P("x"), out_specs=P("x"))(jax.reshard(x, P("x")))


class Sharding(unittest.TestCase):
    def test_shard_map_on_one_device(self):
        mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
        x = randn(4, 3)
        with jax.set_mesh(mesh):
            self.assertIn("xla.sdy.FuncResultSharding", cxla.jit(sharded_step).lower(x))
            want = jax.jit(sharded_step)(x)
            for backend in ("cpu", "interp"):
                assert_trees_close(self, cxla.jit(sharded_step, backend=backend)(x), want)


def printed(fn, *args):
    """fn(*args) and what it printed to stdout."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = fn(*args)
        jax.effects_barrier()
    return out, buf.getvalue()


class HostCallbacks(unittest.TestCase):
    """jax.debug.print, pure_callback and io_callback call back into this process: cxla.jit
    registers the lowering's callables (docs/python.md) and both backends run them."""

    def test_debug_print(self):
        def f(x):
            jax.debug.print("x={x} sum={s}", x=x, s=x.sum())
            return x * 2

        x = np.arange(3, dtype=np.float32)
        want, said = printed(jax.jit(f), x)
        self.assertIn("x=[0. 1. 2.] sum=3.0", said)
        for backend in ("interp", "cpu"):
            with self.subTest(backend):
                got, out = printed(cxla.jit(f, backend=backend), x)
                assert_trees_close(self, got, want)
                self.assertEqual(out, said)

    def test_pure_callback_in_a_loop_and_under_vmap(self):
        spec = jax.ShapeDtypeStruct((4,), np.float32)

        def loop(x):
            body = lambda i, c: c + jax.pure_callback(lambda v, k: np.cos(v) * k, spec, c, i.astype(np.float32))
            return jax.lax.fori_loop(0, 3, body, x)

        def mapped(x):
            one = jax.ShapeDtypeStruct((), np.float32)
            return jax.vmap(lambda v: jax.pure_callback(lambda a: np.sinh(a), one, v, vmap_method="sequential"))(x)

        x = randn(4)
        for fn in (loop, mapped):
            for backend in ("interp", "cpu"):
                with self.subTest(fn=fn.__name__, backend=backend):
                    assert_trees_close(self, cxla.jit(fn, backend=backend)(x), jax.jit(fn)(x))

    def test_io_callback_ordered(self):
        from jax.experimental import io_callback
        log = []

        def f(x):
            for k in range(3):  # no data between them: only the ordered effect's tokens order them
                io_callback(lambda k=k: log.append(k), None, ordered=True)
            return io_callback(lambda v: v + 1, jax.ShapeDtypeStruct((3,), np.float32), x, ordered=True)

        x = randn(3)
        for backend in ("interp", "cpu"):
            with self.subTest(backend):
                del log[:]
                step = cxla.jit(f, backend=backend)
                assert_trees_close(self, step(x), x + 1)
                assert_trees_close(self, step(x), x + 1)
                self.assertEqual(log, [0, 1, 2, 0, 1, 2])

    def test_an_exception_is_an_execution_error(self):
        spec = jax.ShapeDtypeStruct((3,), np.float32)

        def bad(v):
            raise ValueError("no value for you")

        fns = {"raises": lambda a: jax.pure_callback(bad, spec, a),
               "wrong shape": lambda a: jax.pure_callback(lambda v: np.zeros(4, np.float32), spec, a)}
        msgs = {"raises": "ValueError: no value for you", "wrong shape": "Incorrect output shape for return value #0"}
        logging.disable(logging.CRITICAL)  # jax logs the traceback of a failed pure_callback too
        try:
            for name, fn in fns.items():
                for backend in ("interp", "cpu"):
                    with self.subTest(name, backend=backend):
                        step = cxla.jit(fn, backend=backend)
                        with self.assertRaisesRegex(cxla.ExecutionError, "host callback .*" + msgs[name]):
                            step(randn(3))
                        self.assertTrue(np.allclose(cxla.jit(lambda a: a * 2, backend=backend)(np.ones(3)), 2))
        finally:
            logging.disable(logging.NOTSET)

    def test_jax_cpu_text_alone_is_refused_when_compiling(self):
        """The text of lower() names its callbacks by index= into the lowering's list, which
        only cxla.jit maps: cxla.compile refuses it (before anything runs), naming the call."""
        x = randn(3)
        text = cxla.jit(lambda a: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((3,), np.float32), a)).lower(x)
        with self.assertRaisesRegex(cxla.UnsupportedError, "custom-call 'pure_callback.1' .*index= into its lowering"):
            cxla.compile(text)


class TypedKeys(unittest.TestCase):
    def test_key_arguments_and_results(self):
        """jax.random.key arrays (threefry and rbg) as arguments and results: they cross as
        their key data and come back as keys of the same implementation, jax's values."""
        x = randn(5)
        for impl in ("threefry2x32", "rbg"):
            with self.subTest(impl):
                k = jax.random.key(3, impl=impl)
                for backend in ("cpu", "interp"):
                    got = cxla.jit(key_step, backend=backend)(k, x)
                    want = jax.jit(key_step)(k, x)
                    self.assertTrue(jax.dtypes.issubdtype(got["key"].dtype, jax.dtypes.prng_key))
                    self.assertEqual(str(jax.random.key_impl(got["key"])), str(jax.random.key_impl(k)))
                    assert_trees_close(self, key_bits(got), key_bits(want))
                batch = jax.random.split(k, 3)  # an array of keys
                got = cxla.jit(lambda ks: jax.vmap(jax.random.split)(ks))(batch)
                np.testing.assert_array_equal(key_bits(got), key_bits(jax.vmap(jax.random.split)(batch)))

    def test_flax_nnx_state_with_rng_keys(self):
        """A flax nnx module's state keeps its dropout stream's key: a step through cxla.jit
        takes and returns it, as jax.jit does."""
        try:
            from flax import nnx
        except ImportError as e:
            self.skipTest("flax is not installed (%s)" % e)

        class Model(nnx.Module):
            def __init__(self, rngs):
                self.lin = nnx.Linear(3, 4, rngs=rngs)
                self.drop = nnx.Dropout(0.5, rngs=rngs)

            def __call__(self, x):
                return self.drop(self.lin(x))

        graph, state = nnx.split(Model(nnx.Rngs(0, dropout=1)))

        def step(st, x):
            m = nnx.merge(graph, st)
            return m(x), nnx.state(m)

        x = randn(6, 3)
        got, want = cxla.jit(step)(state, x), jax.jit(step)(state, x)
        assert_trees_close(self, key_bits(got), key_bits(want))
        got2 = cxla.jit(step)(got[1], x)  # the new key: another dropout mask
        self.assertFalse(np.array_equal(np.asarray(got2[0]), np.asarray(got[0])))


class Pytrees(unittest.TestCase):
    def test_structures_kwargs_and_none(self):
        Pair = collections.namedtuple("Pair", "a b")

        def f(d, lst, pair, none, *, scale):
            return {"sum": d["x"] + lst[1], "pair": Pair(pair.b, pair.a * scale), "none": none, "list": [lst[0]]}

        args = ({"x": randn(3)}, [randn(2), randn(3)], Pair(randn(1), randn(4)), None)
        got = cxla.jit(f)(*args, scale=np.float32(2))
        want = jax.jit(f)(*args, scale=np.float32(2))
        assert_trees_close(self, got, want)
        self.assertIsInstance(got["pair"], Pair)
        self.assertIsNone(got["none"])

    def test_one_compile_per_signature(self):
        calls = []

        def f(x, n):
            calls.append(1)  # jax traces once per lowering
            return x * n

        cf = cxla.jit(f, static_argnums=1)
        x = randn(3)
        np.testing.assert_allclose(cf(x, 2), x * 2)
        y = randn(3)
        np.testing.assert_allclose(cf(y, 2), y * 2)
        self.assertEqual(len(cf._cache), 1)
        cf(randn(4), 2)  # another shape
        cf(x, 3)  # another static value
        cf(x.astype(np.float16), 2)  # another dtype
        self.assertEqual(len(cf._cache), 4)
        self.assertEqual(len(calls), 4)

    def test_close_frees_every_compiled_program(self):
        x = randn(3)
        with cxla.jit(lambda x: x * 2) as f:
            np.testing.assert_allclose(f(x), x * 2)  # the fast path's entry
            y = randn(4)
            np.testing.assert_allclose(f(y), y * 2)
            exes = f.executables()
            self.assertEqual(len(exes), 2)
        self.assertTrue(f.closed and all(e.closed for e in exes))
        with self.assertRaisesRegex(cxla.InvalidArgumentError, "after close"):
            f(x)  # once on the fast path's key, now refused
        g = cxla.grad(lambda w: (w * w).sum())
        np.testing.assert_allclose(g(x), 2 * x, rtol=1e-6)
        g.close()
        with self.assertRaises(cxla.InvalidArgumentError):
            g(x)

    def test_jax_dtype_rules(self):
        f = cxla.jit(lambda x, s: x * s)
        got = f(np.arange(3, dtype=np.float64), 2.0)  # float64 becomes float32 (x64 off), 2.0 is weak
        want = jax.jit(lambda x, s: x * s)(np.arange(3, dtype=np.float64), 2.0)
        assert_trees_close(self, got, want)
        np.testing.assert_array_equal(f(jnp.ones(3), 3.0), 3.0)  # jax arrays in

    def test_lower_is_the_hlo_cxla_runs(self):
        text = cxla.jit(mlp).lower(*MODELS[0][2]())
        self.assertTrue(text.startswith("HloModule jit_mlp"))


def mlp_loss(params, x, y):
    h = jnp.tanh(x @ params[0]["w"] + params[0]["b"])
    logits = h @ params[1]["w"] + params[1]["b"]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def sgd_step(params, x, y):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


class Training(unittest.TestCase):
    def test_mlp_training_loop_reaches_jax_s_weights(self):
        sizes = [(12, 32), (32, 4)]
        params = [{"w": randn(a, b) * 0.3, "b": np.zeros(b, np.float32)} for a, b in sizes]
        x = randn(64, 12)
        y = np.eye(4, dtype=np.float32)[RNG.integers(0, 4, 64)]
        jax_step = jax.jit(sgd_step)
        cxla_step = cxla.jit(sgd_step, donate_argnums=0)
        pj, pc = params, jax.tree_util.tree_map(np.copy, params)
        losses_j, losses_c = [], []
        for _ in range(20):
            pj, lj = jax_step(pj, x, y)
            pc, lc = cxla_step(pc, x, y)
            losses_j.append(float(lj))
            losses_c.append(float(lc))
        self.assertLess(losses_j[-1], losses_j[0])
        np.testing.assert_allclose(losses_c, losses_j, rtol=1e-5, atol=1e-6)
        assert_trees_close(self, pc, pj, rtol=1e-5, atol=1e-6)
        (exe, *_), = cxla_step._cache.values()
        # The first step copies the 4 donated leaves (they were not cxla's); later steps none.
        self.assertEqual(exe.copies, {"in": 4, "out": 0})

    def test_many_donated_leaves(self):
        """A state of 70 arrays (a model's parameters and optimizer state), donated: every leaf
        goes back in as the result of the step before, without a copy after the first call."""
        step = cxla.jit(lambda t: [a + 1 for a in t], donate_argnums=0)
        state = [np.full(4, i, np.float32) for i in range(70)]
        for _ in range(3):
            state = step(state)
        self.assertEqual([float(a[0]) for a in state], [i + 3.0 for i in range(70)])
        (exe, *_), = step._cache.values()
        self.assertEqual(len(exe.donated), 70)
        self.assertEqual(exe.copies, {"in": 70, "out": 0})

    def test_cxla_s_own_gradients_match_jax_s(self):
        sizes = [(12, 16), (16, 4)]
        params = [{"w": randn(a, b) * 0.3, "b": randn(b) * 0.1} for a, b in sizes]
        x, y = randn(32, 12), np.eye(4, dtype=np.float32)[RNG.integers(0, 4, 32)]
        value, grads = cxla.value_and_grad(mlp_loss)(params, x, y)
        want_value, want_grads = jax.value_and_grad(mlp_loss)(params, x, y)
        np.testing.assert_allclose(value, want_value, rtol=1e-5)
        assert_trees_close(self, grads, want_grads, rtol=1e-5, atol=1e-6)
        gp, gx = cxla.grad(mlp_loss, argnums=(0, 1), backend="interp")(params, x, y)
        want_gp, want_gx = jax.grad(mlp_loss, argnums=(0, 1))(params, x, y)
        assert_trees_close(self, (gp, gx), (want_gp, want_gx), rtol=1e-5, atol=1e-6)

    def test_training_loop_on_cxla_s_gradients(self):
        """20 SGD steps whose gradients come from cxla's autodiff, the update in numpy."""
        sizes = [(12, 32), (32, 4)]
        params = [{"w": randn(a, b) * 0.3, "b": np.zeros(b, np.float32)} for a, b in sizes]
        x = randn(64, 12)
        y = np.eye(4, dtype=np.float32)[RNG.integers(0, 4, 64)]
        jax_step = jax.jit(sgd_step)
        vg = cxla.value_and_grad(mlp_loss)
        pj, pc = params, params
        for _ in range(20):
            pj, lj = jax_step(pj, x, y)
            lc, g = vg(pc, x, y)
            pc = jax.tree_util.tree_map(lambda p, g: p - np.float32(0.1) * g, pc, g)
            np.testing.assert_allclose(lc, lj, rtol=1e-5, atol=1e-6)
        assert_trees_close(self, pc, pj, rtol=1e-5, atol=1e-6)
        self.assertEqual(len(vg._cache), 1)

    def test_grad_of_a_jax_function(self):
        g = cxla.jit(jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)))
        w, x = randn(5, 3), randn(7, 5)
        assert_trees_close(self, g(w, x), jax.jit(jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)))(w, x))


class ExportTest(unittest.TestCase):
    """jax.export's artifact (StableHLO bytecode) compiled by cxla computes what jax does."""

    def test_exported_artifact(self):
        def f(x, w):
            return jax.nn.relu(x @ w).sum(axis=0), jnp.cumsum(x, axis=1)
        x, w = randn(4, 5), randn(5, 3)
        exp = jax.export.export(jax.jit(f))(x, w)
        for backend in ("cpu", "interp"):
            g = cxla.compile(exp.mlir_module_serialized, backend=backend)
            assert_trees_close(self, tuple(g(x, w)), tuple(np.asarray(v) for v in f(x, w)), rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    unittest.main()
