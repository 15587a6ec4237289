"""The Python package over the C library, with numpy alone (Debian's python3 and python3-numpy):
compile, zero-copy arguments and results, tuples, donation, errors, flags, threads."""
import ctypes
import os
import pickle
import re
import tempfile
import threading
import unittest

import numpy as np

import cxla
from cxla import _core, _errors

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PAIR = """HloModule pair
ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  a = f32[2,3] add(x, y)
  ROOT t = (f32[2,3], f32[2,3]) tuple(a, x)
}
"""

SCALE = """HloModule scale
ENTRY main {
  x = f32[1024] parameter(0)
  two = f32[] constant(2)
  b = f32[1024] broadcast(two), dimensions={}
  ROOT r = f32[1024] multiply(x, b)
}
"""

ADD = """HloModule add
ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  ROOT a = f32[8] add(x, y)
}
"""


def data_pointer(a):
    return a.__array_interface__["data"][0]


def owned_by_cxla(a):
    """Whether a is a result array over memory cxla wrote (and keeps alive through a.base)."""
    owner = getattr(a.base, "_cxla_owner", None)
    return owner is not None and _core.lib.cxla_buffer_data(owner.h) == data_pointer(a)


class Package(unittest.TestCase):
    def test_version_is_the_header_s(self):
        with open(os.path.join(ROOT, "include", "cxla.h")) as f:
            text = f.read()
        want = ".".join(re.search(r"^#define CXLA_VERSION_%s\s+(\d+)" % p, text, re.M).group(1)
                        for p in ("MAJOR", "MINOR", "PATCH"))
        self.assertEqual(cxla.__version__, want)
        self.assertEqual(cxla.version(), want)
        self.assertTrue(os.path.exists(cxla.library_path), cxla.library_path)

    def test_grad_of_a_module(self):
        text = """HloModule sq
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[3] parameter(0)
  w = f32[3] parameter(1)
  m = f32[3] multiply(x, w)
  s = f32[3] multiply(m, m)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(s, z), dimensions={0}, to_apply=add
}
"""
        x = np.array([1, 2, 3], np.float32)
        w = np.array([0.5, -1, 2], np.float32)
        for backend in ("cpu", "interp"):
            value, (gx, gw) = cxla.value_and_grad(text, argnums=(0, 1), backend=backend)(x, w)
            np.testing.assert_allclose(value, np.sum((x * w) ** 2), rtol=1e-6)
            np.testing.assert_allclose(gx, 2 * x * w * w, rtol=1e-6)
            np.testing.assert_allclose(gw, 2 * w * x * x, rtol=1e-6)
            np.testing.assert_allclose(cxla.grad(text, backend=backend)(x, w), 2 * x * w * w, rtol=1e-6)
        with self.assertRaisesRegex(cxla.Error, "scalar") as e:
            cxla.grad(ADD)
        self.assertEqual(e.exception.status, "invalid argument")
        with self.assertRaises(cxla.Error):
            cxla.grad(text, argnums=5)

    def test_jit_without_a_framework_says_what_to_install(self):
        try:
            import jax  # noqa: F401
            self.skipTest("jax is installed here (tests/python/test_jax.py covers cxla.jit)")
        except ImportError:
            pass
        try:
            import tensorflow  # noqa: F401
            self.skipTest("tensorflow is installed here")
        except ImportError:
            pass
        with self.assertRaisesRegex(ImportError, "pip install jax"):
            cxla.jit(lambda x: x)


class Calls(unittest.TestCase):
    def test_zero_copy_in_and_out(self):
        for backend in ("cpu", "interp"):
            f = cxla.compile(PAIR, backend=backend)
            x = np.arange(6, dtype=np.float32).reshape(2, 3)
            y = np.full((2, 3), 10, np.float32)
            s, same = f(x, y)
            np.testing.assert_array_equal(s, x + y)
            np.testing.assert_array_equal(same, x)
            self.assertEqual(f.copies, {"in": 0, "out": 0}, backend)
            for r in (s, same):
                self.assertTrue(owned_by_cxla(r), backend)
                self.assertTrue(r.flags.writeable and r.flags.c_contiguous)
            self.assertNotEqual(data_pointer(same), data_pointer(x))

    def test_results_outlive_the_executable(self):
        f = cxla.compile(SCALE)
        r = f(np.ones(1024, np.float32))
        del f
        import gc
        gc.collect()
        self.assertEqual(float(r.sum()), 2048.0)
        r[0] = 5  # the memory is the array's to write
        self.assertEqual(r[0], 5)

    def test_text_bytes_and_paths(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "add.hlo")
            with open(path, "w") as f:
                f.write(ADD)
            x = np.arange(8, dtype=np.float32)
            for hlo in (ADD, ADD.encode(), path, __import__("pathlib").Path(path)):
                np.testing.assert_array_equal(cxla.compile(hlo)(x, x), 2 * x)

    def test_layouts_that_need_a_copy(self):
        f = cxla.compile(PAIR)
        x = np.arange(6, dtype=np.float32).reshape(3, 2).T  # not C-contiguous
        raw = np.zeros(4 * 6 + 1, np.uint8)
        y = np.frombuffer(raw.data, dtype=np.float32, count=6, offset=1).reshape(2, 3)  # misaligned
        self.assertFalse(y.flags.aligned)
        s, _ = f(x, y)
        np.testing.assert_array_equal(s, x)
        self.assertEqual(f.copies["in"], 2)

    def test_array_likes_scalars_and_lists(self):
        class Interface:  # something with __array_interface__ only
            def __init__(self, a):
                self.a = a
                self.__array_interface__ = a.__array_interface__

        class DLPack:  # something with DLPack only
            def __init__(self, a):
                self.a = a

            def __dlpack__(self, stream=None):
                return self.a.__dlpack__()

            def __dlpack_device__(self):
                return self.a.__dlpack_device__()

        f = cxla.compile(ADD)
        x = np.arange(8, dtype=np.float32)
        np.testing.assert_array_equal(f(Interface(x), x), 2 * x)
        np.testing.assert_array_equal(f(DLPack(x), x), 2 * x)
        self.assertEqual(f.copies["in"], 0)
        np.testing.assert_array_equal(f(list(range(8)), x), 2 * x)
        g = cxla.compile("HloModule s\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\n")
        self.assertEqual(float(g(2.5)), -2.5)
        self.assertEqual(g(np.float32(1)).shape, ())

    def test_element_types(self):
        text = """HloModule types
ENTRY main {
  p = pred[3] parameter(0)
  i = s8[3] parameter(1)
  u = u64[3] parameter(2)
  h = f16[3] parameter(3)
  d = f64[3] parameter(4)
  np = pred[3] not(p)
  ni = s8[3] negate(i)
  hb = bf16[3] convert(h)
  ROOT t = (pred[3], s8[3], u64[3], f16[3], f64[3], bf16[3]) tuple(np, ni, u, h, d, hb)
}
"""
        for backend in ("cpu", "interp"):
            f = cxla.compile(text, backend=backend)
            p = np.array([True, False, True])
            i = np.array([1, -2, 127], np.int8)
            u = np.array([0, 1, 2**64 - 1], np.uint64)
            h = np.array([0.5, -1.25, 3], np.float16)
            d = np.array([1e300, -0.0, 2.5])
            rp, ri, ru, rh, rd, rb = f(p, i, u, h, d)
            np.testing.assert_array_equal(rp, ~p)
            np.testing.assert_array_equal(ri, -i)
            np.testing.assert_array_equal(ru, u)
            np.testing.assert_array_equal(rh, h)
            np.testing.assert_array_equal(rd, d)
            np.testing.assert_array_equal(np.asarray(rb, np.float32), h.astype(np.float32))
            self.assertEqual(rp.dtype, np.bool_)
            self.assertEqual(ru.dtype, np.uint64)

    def test_narrow_element_types(self):
        """f8/f4 and s4/u4 arrays are ml_dtypes' arrays both ways, read in place."""
        try:
            import ml_dtypes
        except ImportError:
            self.skipTest("ml_dtypes is not installed")
        text = """HloModule narrow
ENTRY main {
  x = f8e4m3fn[4] parameter(0)
  s = s4[4] parameter(1)
  y = f8e5m2[4] multiply(f8e5m2[4] convert(x), f8e5m2[4] convert(x))
  t = s4[4] add(s, s)
  ROOT r = (f8e5m2[4], s4[4], f4e2m1fn[4]) tuple(y, t, f4e2m1fn[4] convert(x))
}
"""
        x = np.array([1, 1.125, 448, -2], ml_dtypes.float8_e4m3fn)
        s = np.array([7, -8, 3, -1], ml_dtypes.int4)
        for backend in ("cpu", "interp"):
            y, t, q = cxla.compile(text, backend=backend)(x, s)
            self.assertEqual(y.dtype, np.dtype(ml_dtypes.float8_e5m2))
            self.assertEqual(t.dtype, np.dtype(ml_dtypes.int4))
            xf = x.astype(np.float32)
            # 1.125 is halfway between e5m2's 1 and 1.25: 1; 448^2 = 200704 -> inf; 7 + 7 and -8 + -8 wrap;
            # f4e2m1fn: 1.125 -> 1, 448 saturates to 6
            np.testing.assert_array_equal(y.astype(np.float32), [1, 1, np.inf, 4])
            np.testing.assert_array_equal(y, (xf.astype(ml_dtypes.float8_e5m2).astype(np.float32) ** 2)
                                          .astype(ml_dtypes.float8_e5m2))
            np.testing.assert_array_equal(t.astype(np.int8), [-2, 0, 6, -2])
            np.testing.assert_array_equal(q.astype(np.float32), [1, 1, 6, -2])

    def test_two_bit_and_e8m0_types(self):
        """s2/u2 and f8e8m0fnu arrays are ml_dtypes' int2, uint2 and float8_e8m0fnu both ways."""
        try:
            import ml_dtypes
        except ImportError:
            self.skipTest("ml_dtypes is not installed")
        if not all(hasattr(ml_dtypes, n) for n in ("int2", "uint2", "float8_e8m0fnu")):
            self.skipTest("this ml_dtypes has no int2, uint2 or float8_e8m0fnu")
        text = """HloModule two_bit
ENTRY main {
  s = s2[4] parameter(0)
  u = u2[4] parameter(1)
  e = f8e8m0fnu[3] parameter(2)
  ROOT r = (s2[4], u2[4], f8e8m0fnu[3]) tuple(s2[4] add(s, s), u2[4] multiply(u, u), f8e8m0fnu[3] multiply(e, e))
}
"""
        s = np.array([-2, -1, 0, 1], np.int8).astype(ml_dtypes.int2)
        u = np.array([0, 1, 2, 3], np.uint8).astype(ml_dtypes.uint2)
        e = np.array([0.5, 2, 2.0 ** 100], np.float32).astype(ml_dtypes.float8_e8m0fnu)
        for backend in ("cpu", "interp"):
            rs, ru, re = cxla.compile(text, backend=backend)(s, u, e)
            self.assertEqual(rs.dtype, np.dtype(ml_dtypes.int2))
            self.assertEqual(ru.dtype, np.dtype(ml_dtypes.uint2))
            self.assertEqual(re.dtype, np.dtype(ml_dtypes.float8_e8m0fnu))
            # -2 + -2 and 1 + 1 wrap; 2 * 2 = 4 and 3 * 3 = 9 wrap modulo 4; 2^200 is past 2^127: NaN
            np.testing.assert_array_equal(rs.astype(np.int8), [0, -2, 0, -2])
            np.testing.assert_array_equal(ru.astype(np.uint8), [0, 1, 0, 1])
            np.testing.assert_array_equal(re.astype(np.float32), [0.25, 4, np.nan])

    def test_complex_numbers(self):
        text = """HloModule cplx
ENTRY main {
  z = c64[8] parameter(0)
  w = c128[2,3] parameter(1)
  f = c64[8] fft(z), fft_type=FFT, fft_length={8}
  m = c128[2,3] multiply(w, w)
  ROOT t = (c64[8], c128[2,3], f32[8]) tuple(f, m, abs(z))
}
"""
        z = (np.arange(8) - 1j * np.arange(8)[::-1]).astype(np.complex64)
        w = np.array([[1 + 2j, -3j, 0.5], [2, 1 - 1j, -1 + 0.25j]])
        for backend in ("cpu", "interp"):
            rf, rm, ra = cxla.compile(text, backend=backend)(z, w)
            self.assertEqual((rf.dtype, rm.dtype, ra.dtype), (np.complex64, np.complex128, np.float32))
            np.testing.assert_allclose(rf, np.fft.fft(z), rtol=1e-5, atol=1e-4)
            np.testing.assert_array_equal(rm, w * w)
            np.testing.assert_allclose(ra, np.abs(z), rtol=1e-6)

    def test_nested_tuples_and_empty_arrays(self):
        text = """HloModule nested
ENTRY main {
  x = f32[0,4] parameter(0)
  i = s32[] constant(7)
  y = f32[2] constant({1, 2})
  in = (f32[0,4], s32[]) tuple(x, i)
  ROOT t = ((f32[0,4], s32[]), f32[2]) tuple(in, y)
}
"""
        f = cxla.compile(text)
        (e, i), y = f(np.zeros((0, 4), np.float32))
        self.assertEqual(e.shape, (0, 4))
        self.assertEqual(int(i), 7)
        np.testing.assert_array_equal(y, [1, 2])

    def test_tuple_parameter(self):
        text = """HloModule tp
ENTRY main {
  t = (f32[2], s32[]) parameter(0)
  a = f32[2] get-tuple-element(t), index=0
  ROOT n = f32[2] negate(a)
}
"""
        f = cxla.compile(text)
        np.testing.assert_array_equal(f((np.array([1, 2], np.float32), np.int32(3))), [-1, -2])
        with self.assertRaisesRegex(cxla.Error, "takes a tuple of 2 values"):
            f(np.zeros(2, np.float32))

    def test_many_threads_one_executable(self):
        f = cxla.compile(SCALE, threads=1)
        errors = []

        def work(k):
            x = np.full(1024, k, np.float32)
            for _ in range(50):
                r = f(x)
                if not (r == 2 * k).all():
                    errors.append(k)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


class Donation(unittest.TestCase):
    def test_a_result_is_donated_in_place(self):
        f = cxla.compile(SCALE, donate_argnums=(0,))
        self.assertEqual(f.donated, (0,))
        x = np.ones(1024, np.float32)
        a = f(x)  # x is not cxla's: donated as a copy, untouched
        self.assertEqual(f.copies["in"], 1)
        np.testing.assert_array_equal(x, 1)
        before = data_pointer(a)
        b = f(a)  # a is cxla's: handed over, no copy, the result computed in its memory
        self.assertEqual(f.copies["in"], 1)
        self.assertEqual(data_pointer(b), before)
        np.testing.assert_array_equal(b, 4)
        self.assertFalse(a.flags.writeable)
        with self.assertRaisesRegex(cxla.Error, "was donated to an earlier execution"):
            f(a)
        del b  # a's memory is b's: a keeps it alive
        import gc
        gc.collect()
        self.assertEqual(a.shape, (1024,))
        float(a.sum())  # readable (its value is undefined)

    def test_donated_memory_read_elsewhere_is_refused(self):
        f = cxla.compile(PAIR, donate_argnums=(0,))
        x = np.ones((2, 3), np.float32)
        s, _ = f(x, x)
        with self.assertRaisesRegex(cxla.Error, r"argument 0 \(parameter 'x'\) is donated, and argument 1 reads the same memory"):
            f(s, s)
        self.assertTrue(s.flags.writeable)  # refused before the run: still s's
        np.testing.assert_array_equal(f(s, x)[0], 3)

    def test_loop_of_donated_steps(self):
        f = cxla.compile(SCALE, donate_argnums=[0])
        w = f(np.full(1024, 0.5, np.float32))
        for _ in range(10):
            w = f(w)
        np.testing.assert_array_equal(w, 0.5 * 2**11)
        self.assertEqual(f.copies, {"in": 1, "out": 0})

    def test_bad_donation(self):
        with self.assertRaisesRegex(cxla.Error, "donate_argnums: 3 names no parameter"):
            cxla.compile(SCALE, donate_argnums=(3,))

    def test_donation_past_64_parameters(self):
        text = "HloModule wide\nENTRY main {\n%s  ROOT r = f32[4] add(p1, p66)\n}\n" % "".join(
            "  p%d = f32[4] parameter(%d)\n" % (i, i) for i in range(70))
        f = cxla.compile(text, donate_argnums=(66, 1))
        self.assertEqual(f.donated, (1, 66))
        args = [np.full(4, i, np.float32) for i in range(70)]
        np.testing.assert_array_equal(f(*args), 67)


class Errors(unittest.TestCase):
    def test_parse_error_has_the_location(self):
        with self.assertRaises(cxla.Error) as e:
            cxla.compile("HloModule m\nENTRY e {\n  x = f32[2 parameter(0)\n}\n")
        self.assertRegex(str(e.exception), r"^<text>:3:\d+: error: ")
        self.assertEqual(e.exception.status, "parse error")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.hlo")
            with open(path, "w") as f:
                f.write("HloModule m\nENTRY e {\n  ROOT x = f32[2] nonsense(0)\n}\n")
            with self.assertRaisesRegex(cxla.Error, re.escape(path) + r":3:\d+: error: "):
                cxla.compile(path)
            with self.assertRaisesRegex(cxla.Error, "missing.hlo"):
                cxla.compile(os.path.join(d, "missing.hlo"))

    def test_bad_arguments(self):
        f = cxla.compile(PAIR)
        x = np.zeros((2, 3), np.float32)
        with self.assertRaisesRegex(cxla.Error, r"argument 1 \(parameter 'y'\): expected f32\[2,3\], got f32\[3,2\]") as e:
            f(x, np.zeros((3, 2), np.float32))
        self.assertEqual(e.exception.status, "invalid argument")
        with self.assertRaisesRegex(cxla.Error, r"expected f32\[2,3\], got f64\[2,3\]"):
            f(x, np.zeros((2, 3)))
        with self.assertRaisesRegex(cxla.Error, "expected 2 arguments"):
            f(x)
        with self.assertRaisesRegex(cxla.Error, r"expected f32\[2,3\], got c64\[2,3\]"):
            f(x, np.zeros((2, 3), np.complex64))
        with self.assertRaisesRegex(cxla.Error, "dtype float128 has no cxla element type"):
            f(x, np.zeros((2, 3), np.longdouble))

    def test_backends_and_flags(self):
        with self.assertRaisesRegex(cxla.Error, "unknown backend 'tpu'"):
            cxla.compile(ADD, backend="tpu")
        with self.assertRaisesRegex(cxla.Error, "fusion"):
            cxla.compile(ADD, fusion="sideways")
        with self.assertRaisesRegex(cxla.Error, "no-such-flag"):
            cxla.compile(ADD, no_such_flag=1)
        f = cxla.compile(ADD, fusion=False, threads=1, opt_level=1)
        self.assertIn("kernels=", f.compile_counts)
        self.assertIn("verify=", f.compile_stats)
        # an add of two f32[8]: 8 flops; its operands and result, 96 bytes
        self.assertEqual(f.cost, {"flops": 8.0, "transcendentals": 0.0, "bytes accessed": 96.0})
        fp = dict(f.footprint)
        self.assertGreater(fp.pop("code_bytes"), 0)
        self.assertEqual(fp, {"argument_bytes": 64, "output_bytes": 32, "alias_bytes": 0, "temp_bytes": 0})
        # exp, multiply and sum: one kernel reads x and writes the scalar (the module before
        # fusion moves 229,388 bytes); the product's result in a chain of two is a temporary
        g = cxla.compile("HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                         "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[64,128] parameter(0)\n"
                         "  e = f32[64,128] exponential(x)\n  c = f32[] constant(2)\n"
                         "  cb = f32[64,128] broadcast(c), dimensions={}\n  m = f32[64,128] multiply(e, cb)\n"
                         "  z = f32[] constant(0)\n  ROOT s = f32[] reduce(m, z), dimensions={0,1}, to_apply=add\n}\n")
        self.assertEqual(g.cost["bytes accessed"], 64 * 128 * 4 + 4)
        self.assertEqual(g.cost["flops"], 16383.0)
        chain = cxla.compile("HloModule c\nENTRY e {\n  a = f32[64,64] parameter(0)\n"
                             "  d = f32[64,64] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                             "  ROOT d2 = f32[64,64] dot(d, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n")
        self.assertGreaterEqual(chain.footprint["temp_bytes"], 64 * 64 * 4)
        x = np.ones(8, np.float32)
        np.testing.assert_array_equal(f(x, x), 2)
        self.assertIn("f32[8]", repr(f))
        self.assertEqual(f.parameter_names, ["x", "y"])

    def test_unsupported_op_is_refused_at_compile_time(self):
        text = 'HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] custom-call(x), custom_call_target="f"\n}\n'
        with self.assertRaisesRegex(cxla.Error, r"^<text>:4:\d+: error: not supported: custom-call 'r'") as e:
            cxla.compile(text)
        self.assertEqual(e.exception.status, "not supported")

    def test_each_status_has_its_class(self):
        """One subclass of cxla.Error per cxla_status, made in one place from the code: its
        code, the library's name for it, and nothing shared between two statuses."""
        classes = {}
        for st in cxla.Status:
            if st == cxla.Status.OK:
                continue
            e = _errors.error(int(st), "message %d" % st)
            self.assertIsInstance(e, cxla.Error)
            self.assertIsNot(type(e), cxla.Error, st)
            self.assertIs(e.code, st)
            self.assertEqual(e.status, _core.lib.cxla_status_str(int(st)).decode())
            self.assertEqual(str(e), "message %d" % st)
            self.assertEqual(e.message, "message %d" % st)
            classes[type(e)] = st
        self.assertEqual(len(classes), len(cxla.Status) - 1)
        expect = {cxla.InvalidArgumentError: "INVALID_ARGUMENT", cxla.ParseError: "PARSE", cxla.VerifyError: "VERIFY",
                  cxla.UnsupportedError: "UNSUPPORTED", cxla.OutOfMemoryError: "OUT_OF_MEMORY", cxla.FileError: "IO",
                  cxla.DeviceError: "DEVICE", cxla.CompileError: "COMPILE", cxla.ExecutionError: "RUNTIME",
                  cxla.InternalError: "INTERNAL"}
        self.assertEqual({c: s.name for c, s in classes.items()}, expect)
        self.assertTrue(issubclass(cxla.OutOfMemoryError, MemoryError))
        with self.assertRaises(MemoryError):
            raise _errors.error(int(cxla.Status.OUT_OF_MEMORY), "no memory")
        odd = _errors.error(99, "from a newer library")  # a code this package does not know
        self.assertIs(type(odd), cxla.Error)
        self.assertEqual((odd.code, odd.status), (99, "status 99"))
        for e in (_errors.error(int(cxla.Status.IO), "gone"), odd):  # whole through pickle (multiprocessing)
            back = pickle.loads(pickle.dumps(e))
            self.assertEqual((type(back), str(back), back.code, back.status), (type(e), str(e), e.code, e.status))
        old = cxla.Error("made by hand", "parse error")  # the constructor as it was
        self.assertEqual((str(old), old.status, old.code), ("made by hand", "parse error", None))

    def test_library_failures_raise_their_class(self):
        with self.assertRaises(cxla.ParseError) as e:
            cxla.compile("HloModule m\nENTRY e {\n  x = f32[2 parameter(0)\n}\n")
        self.assertEqual((e.exception.code, e.exception.status), (cxla.Status.PARSE, "parse error"))
        with self.assertRaisesRegex(cxla.VerifyError, "add") as e:
            cxla.compile("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  y = f32[3] parameter(1)\n"
                         "  ROOT a = f32[2] add(x, y)\n}\n")
        self.assertEqual(e.exception.code, cxla.Status.VERIFY)
        with self.assertRaises(cxla.UnsupportedError):
            cxla.compile('HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n'
                         '  ROOT r = f32[4] custom-call(x), custom_call_target="f"\n}\n')
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(cxla.FileError, "missing.hlo") as e:
                cxla.compile(os.path.join(d, "missing.hlo"))
            self.assertEqual(e.exception.status, _core.lib.cxla_status_str(int(cxla.Status.IO)).decode())
        f = cxla.compile(PAIR)
        x = np.zeros((2, 3), np.float32)
        with self.assertRaisesRegex(cxla.InvalidArgumentError, r"argument 1 \(parameter 'y'\)") as e:
            f(x, np.zeros((3, 2), np.float32))  # found by the library
        self.assertEqual(e.exception.code, cxla.Status.INVALID_ARGUMENT)
        with self.assertRaisesRegex(cxla.InvalidArgumentError, "expected 2 arguments") as e:
            f(x)  # found by the package
        self.assertEqual((e.exception.code, e.exception.status), (cxla.Status.INVALID_ARGUMENT, "invalid argument"))
        with self.assertRaises(cxla.InvalidArgumentError):
            cxla.compile(ADD, no_such_flag=1)
        with self.assertRaises(cxla.InvalidArgumentError):
            cxla.compile(SCALE, donate_argnums=(3,))


class Lifetime(unittest.TestCase):
    """close(), `with`, and use after close, for everything that holds C resources."""

    def test_close_is_idempotent_and_results_outlive_it(self):
        f = cxla.compile(ADD)
        x = np.arange(8, dtype=np.float32)
        y = f(x, x)
        self.assertFalse(f.closed)
        f.close()
        self.assertTrue(f.closed)
        f.close()  # twice is fine
        np.testing.assert_array_equal(y, 2 * x)  # the result's memory is its own
        self.assertTrue(owned_by_cxla(y))
        self.assertIn("closed", repr(f))
        with self.assertRaisesRegex(cxla.InvalidArgumentError, r"used after close\(\)"):
            f(x, x)
        with self.assertRaisesRegex(cxla.InvalidArgumentError, r"used after close\(\)"):
            f.compile_counts
        with self.assertRaisesRegex(cxla.Error, r"used after close\(\)"):
            f.compile_stats
        self.assertEqual(f.parameter_names, ["x", "y"])  # what it was stays readable

    def test_with_closes_also_on_an_exception(self):
        x = np.ones(8, np.float32)
        with cxla.compile(ADD) as f:
            self.assertIsInstance(f, cxla.Executable)
            np.testing.assert_array_equal(f(x, x), 2)
        self.assertTrue(f.closed)
        with self.assertRaises(cxla.InvalidArgumentError):
            f(x, x)
        with self.assertRaises(KeyError):
            with cxla.compile(ADD) as g:
                raise KeyError("inside")
        self.assertTrue(g.closed)
        with self.assertRaisesRegex(cxla.InvalidArgumentError, "after close"):
            with g:  # entering a closed one
                pass

    def test_del_is_the_safety_net_and_frees_once(self):
        calls = []

        def destroy(h):
            calls.append(h)
            _core.lib.cxla_executable_destroy(h)

        f = cxla.compile(ADD)
        handle = f._h
        f.__del__(destroy)  # what collection does to one nobody closed
        self.assertEqual(calls, [handle])
        self.assertTrue(f.closed)
        f.__del__(destroy)
        f.close()
        g = cxla.compile(ADD)
        g.close()
        g.__del__(destroy)  # closed already: nothing more to free
        self.assertEqual(calls, [handle])

    def test_donated_results_survive_close(self):
        f = cxla.compile(SCALE, donate_argnums=(0,))
        a = f(np.ones(1024, np.float32))
        b = f(a)  # a is handed over in place
        f.close()
        np.testing.assert_array_equal(b, 4)

    def test_grad_and_jit_close(self):
        text = "HloModule sq\nENTRY main {\n  x = f32[] parameter(0)\n  ROOT m = f32[] multiply(x, x)\n}\n"
        with cxla.grad(text) as g:
            self.assertAlmostEqual(float(g(np.float32(3))), 6.0)
            exe = g._exe
        self.assertTrue(g.closed and exe.closed)
        with self.assertRaisesRegex(cxla.InvalidArgumentError, "after close"):
            g(np.float32(3))
        g.close()
        j = cxla.jit(lambda x: x, framework="jax")  # closed before any call: needs no jax
        j.close()
        j.close()
        self.assertTrue(j.closed)
        self.assertEqual(j.executables(), [])
        with self.assertRaisesRegex(cxla.InvalidArgumentError, "after close"):
            j(np.ones(2, np.float32))


class StableHLOTest(unittest.TestCase):
    """cxla.compile of StableHLO portable artifacts (MLIR bytecode, as jax.export writes it):
    bytes or a path, against the outputs JAX computed (tests/stablehlo/programs)."""

    PROGRAMS = os.path.join(ROOT, "tests", "stablehlo", "programs")

    def _files(self, name):
        d = self.PROGRAMS
        ins = [np.load(os.path.join(d, "%s.in%d.npy" % (name, i))) for i in range(2)]
        outs = [np.load(os.path.join(d, "%s.out%d.npy" % (name, i))) for i in range(2)]
        with open(os.path.join(d, name + ".mlirbc"), "rb") as f:
            return f.read(), ins, outs

    def test_compile_artifact_bytes(self):
        data, ins, outs = self._files("export_mlp")
        self.assertTrue(data.startswith(b"ML\xefR"))
        for backend in ("cpu", "interp"):
            f = cxla.compile(data, backend=backend)
            got = f(*ins)
            self.assertEqual(len(got), 2)
            for g, w in zip(got, outs):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)

    def test_compile_artifact_path(self):
        f = cxla.compile(os.path.join(self.PROGRAMS, "donate.mlirbc"))
        w = np.ones((3, 4), np.float32)
        g = np.full((3, 4), 2.0, np.float32)
        got = f(w, g)
        np.testing.assert_allclose(got[0], w - 0.5 * g)
        np.testing.assert_allclose(got[1], 48.0)

    def test_truncated_artifact_names_the_byte(self):
        data, _, _ = self._files("export_mlp")
        with self.assertRaisesRegex(cxla.Error, r"^m\.mlirbc: byte \d+") as e:
            cxla.compile(data[:200], filename="m.mlirbc")
        self.assertEqual(e.exception.status, "parse error")


MOMENTUM = """HloModule momentum, input_output_alias={ {0}: (0, {}, may-alias), {1}: (2, {}, may-alias) }
ENTRY main {
  w = f32[4096] parameter(0)
  g = f32[4096] parameter(1)
  m = f32[4096] parameter(2)
  h = f32[] constant(0.5)
  hb = f32[4096] broadcast(h), dimensions={}
  nm = f32[4096] add(m, g)
  d = f32[4096] multiply(nm, hb)
  nw = f32[4096] subtract(w, d)
  ROOT t = (f32[4096], f32[4096]) tuple(nw, nm)
}
"""


class DeviceBufferTest(unittest.TestCase):
    """cxla.Buffer on the emulated GPU: state kept on the device across calls, donated in place,
    copies to and from numpy, and the errors of a consumed buffer."""

    def test_training_loop_keeps_state_on_the_device(self):
        f = cxla.compile(MOMENTUM, backend="gpu-emu", keep_on_device=True)
        w0 = np.arange(4096, dtype=np.float32)
        g = np.linspace(-1, 1, 4096, dtype=np.float32)
        w, gb, m = (cxla.device_put(a, "gpu-emu") for a in (w0, g, np.zeros(4096, np.float32)))
        self.assertEqual(w.memory, "gpu-emu")
        self.assertEqual(f.donated, (0, 2))
        before = None
        for k in range(6):
            old = w
            w, m = f(w, gb, m)
            self.assertIsInstance(w, cxla.Buffer)
            self.assertEqual((w.memory, old.memory), ("gpu-emu", None))  # the old state was consumed
            stats = cxla.memory_stats("gpu-emu")
            if k == 1:
                before = stats["driver_allocs"]
        self.assertEqual(stats["driver_allocs"], before)  # nothing asked of the driver after step 1
        ww, mm = w0.copy(), np.zeros(4096, np.float32)
        for _ in range(6):
            mm = mm + g
            ww = ww - mm * np.float32(0.5)
        np.testing.assert_array_equal(np.asarray(w), ww)
        np.testing.assert_array_equal(m.to_numpy(), mm)
        with self.assertRaisesRegex(cxla.InvalidArgumentError, "donated"):
            np.asarray(old)
        with self.assertRaisesRegex(cxla.InvalidArgumentError, "was donated to an earlier execution"):
            f(old, gb, m)

    def test_copies_between_host_and_device(self):
        x = np.arange(12, dtype=np.float64).reshape(3, 4)
        d = cxla.device_put(x, "gpu-emu")
        self.assertEqual((d.shape, d.dtype, d.memory), ((3, 4), np.dtype(np.float64), "gpu-emu"))
        h = d.copy_to("cpu")
        self.assertEqual(h.memory, "host")
        np.testing.assert_array_equal(h.to_numpy(), x)
        np.testing.assert_array_equal(h.copy_to("gpu-emu").copy_to("gpu-emu").to_numpy(), x)
        add = cxla.compile(ADD, backend="cpu")  # a device buffer into a cpu executable: copied out
        a = cxla.device_put(np.ones(8, np.float32), "gpu-emu")
        np.testing.assert_array_equal(add(a, np.ones(8, np.float32)), np.full(8, 2, np.float32))
        d.delete()
        self.assertIsNone(d.memory)
        with self.assertRaisesRegex(cxla.InvalidArgumentError, "after delete"):
            d.copy_to("cpu")
        with self.assertRaises(cxla.UnsupportedError):
            cxla.memory_stats("cpu")

    def test_batches_staged_through_pinned_memory(self):
        # device_put and reading a result back go through pinned staging blocks kept for reuse:
        # after the first step nothing more is pinned, and every byte is counted
        f = cxla.compile(MOMENTUM.replace(", input_output_alias={ {0}: (0, {}, may-alias), {1}: (2, {}, may-alias) }", ""),
                         backend="gpu-emu", keep_on_device=True)
        w = cxla.device_put(np.zeros(4096, np.float32), "gpu-emu")
        m = cxla.device_put(np.zeros(4096, np.float32), "gpu-emu")
        first = None
        for k in range(5):
            g = cxla.device_put(np.full(4096, k, np.float32), "gpu-emu")
            w, m = f(w, g, m)
            np.testing.assert_array_equal(m.to_numpy(), np.full(4096, k * (k + 1) / 2, np.float32))
            stats = cxla.memory_stats("gpu-emu")
            if k == 0:
                first = stats
        self.assertEqual(stats["pinned_allocs"], first["pinned_allocs"])
        self.assertGreaterEqual(stats["pinned_hits"] - first["pinned_hits"], 8)
        self.assertGreaterEqual(stats["staged_bytes"] - first["staged_bytes"], 8 * 4 * 4096)


if __name__ == "__main__":
    unittest.main()
