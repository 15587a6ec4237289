"""cxla.jit for TensorFlow functions against TensorFlow itself (needs tensorflow: run by
tests/python/python_test.sh when $CXLA_TF_VENV names a venv that has it)."""
import unittest

import numpy as np

import tensorflow as tf

import cxla

RNG = np.random.default_rng(5)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


class TensorFlow(unittest.TestCase):
    def test_tf_function(self):
        @tf.function(jit_compile=True)
        def f(x, w):
            return tf.nn.relu(x @ w), tf.reduce_sum(x)

        x, w = randn(8, 4), randn(4, 2)
        cf = cxla.jit(f)
        self.assertEqual(cf.framework, "tensorflow")
        got, want = cf(x, w), f(x, w)
        self.assertIsInstance(got, tuple)
        for g, w_ in zip(got, want):
            np.testing.assert_allclose(g, w_.numpy(), rtol=1e-5, atol=1e-5)
        self.assertTrue(cf.lower(x, w).startswith("HloModule"))

    def test_structures_and_variables(self):
        v = tf.Variable(randn(4, 3))

        def g(d):
            return {"y": tf.tanh(d["x"] @ v), "n": tf.shape(d["x"])[0], "s": [d["b"] * 2.0]}

        cg = cxla.jit(g, framework="tensorflow")
        d = {"x": randn(5, 4), "b": randn(3)}
        got = cg(d)
        np.testing.assert_allclose(got["y"], np.tanh(d["x"] @ v.numpy()), rtol=1e-5, atol=1e-5)
        self.assertEqual(int(got["n"]), 5)
        np.testing.assert_allclose(got["s"][0], d["b"] * 2)
        v.assign(v * 2)  # read at its current value on every call
        np.testing.assert_allclose(cg(d)["y"], np.tanh(d["x"] @ v.numpy()), rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    unittest.main()
