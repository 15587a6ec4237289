#!/usr/bin/env python3
"""Per-call cost of a small executable from Python, and copies per call (bench/README.md).

Contenders, timed in turns in one process (the order rotated every round), each call returning
its results as host arrays:
  cxla            cxla.compile(...)(x, y): arrays read in place, results over cxla's memory
  cxla.jit        the same function through cxla.jit (pytree flattening and the signature key)
  library call    cxla_executable_execute_args + cxla_buffer_destroy through ctypes, arguments
  alone           prepared once: the floor under the package's own Python
  copying C API   what a ctypes user had before: cxla_literal_from_data + cxla_buffer_from_literal
                  per argument, cxla_executable_execute, cxla_buffer_to_literal + a numpy copy
                  of the literal's data per result (two copies in and two out per array)
  jax.jit numpy   jax.jit(f)(x, y) on numpy arrays, block_until_ready (jax copies them in)
  jax.jit device  the same on jax arrays already on the device (no transfer in)
Run it where jax is installed, with the package on the path:
  CXLA_BUILD=build PYTHONPATH=python build/venv/bin/python bench/python_overhead.py [--rounds N]
Without jax the jax rows are left out.
"""
import argparse
import ctypes
import statistics
import sys
import time

import numpy as np

import cxla
from cxla import _core

lib = _core.lib
vp = ctypes.c_void_p

ADD = """HloModule add
ENTRY main {
  x = f32[%(n)d] parameter(0)
  y = f32[%(n)d] parameter(1)
  ROOT a = f32[%(n)d] add(x, y)
}
"""


class CopyingShim:
    """The copying API as a ctypes shim uses it: 2 copies in and 2 out per array. Written to cost
    as little Python as possible (dims and types made once), so that what differs is the copies."""

    def __init__(self, exe, n):
        self.exe = exe
        self.ctx = exe._ctx.h
        self.f32 = _core.types.code["f32"]
        self.dims = (ctypes.c_int64 * 1)(n)
        self.nbytes = 4 * n
        self.mem = ctypes.c_char * self.nbytes
        self.args = vp * 2
        lib.cxla_literal_data.argtypes = [vp]
        lib.cxla_literal_data.restype = vp
        # pointers must not pass through ctypes' default int (a heap address above 2^31 crashes)
        lib.cxla_buffer_to_literal.argtypes = [vp, ctypes.POINTER(vp)]
        lib.cxla_buffer_to_literal.restype = ctypes.c_int

    def __call__(self, x, y):
        bufs = []
        for a in (x, y):
            lit = lib.cxla_literal_from_data(self.ctx, self.f32, 1, self.dims, a.ctypes.data, a.nbytes)  # copy 1 in
            b = vp()
            lib.cxla_buffer_from_literal(self.ctx, b"cpu", lit, ctypes.byref(b))  # copy 2 in
            lib.cxla_literal_destroy(lit)
            bufs.append(b.value)
        r = vp()
        if lib.cxla_executable_execute(self.exe._h, 2, self.args(*bufs), ctypes.byref(r)):
            raise RuntimeError(self.exe._ctx.message())
        lit = vp()
        lib.cxla_buffer_to_literal(r.value, ctypes.byref(lit))  # copy 1 out
        mem = self.mem.from_address(lib.cxla_literal_data(lit.value))
        out = np.frombuffer(mem, np.float32).copy()  # copy 2 out: the array must outlive the literal
        lib.cxla_literal_destroy(lit.value)
        lib.cxla_buffer_destroy(r.value)
        for b in bufs:
            lib.cxla_buffer_destroy(b)
        return out


def contenders(n):
    exe = cxla.compile(ADD % {"n": n})
    shim = CopyingShim(exe, n)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    want = x + y
    floor_args = exe._args_type.from_buffer_copy(exe._template)
    floor_args[0].data, floor_args[1].data = x.ctypes.data, y.ctypes.data
    r = vp()

    def floor():  # the library call alone, its arguments prepared once: no array comes back
        lib.cxla_executable_execute_args(exe._h, 2, floor_args, ctypes.byref(r))
        lib.cxla_buffer_destroy(r.value)

    out = {
        "cxla": lambda: exe(x, y),
        "copying C API": lambda: shim(x, y),
        "library call alone": floor,
    }
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    if jax is not None:
        jitted = cxla.jit(lambda x, y: x + y)
        jf = jax.jit(lambda x, y: x + y)
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        out["cxla.jit"] = lambda: jitted(x, y)
        out["jax.jit numpy"] = lambda: jf(x, y).block_until_ready()
        out["jax.jit device"] = lambda: jf(jx, jy).block_until_ready()
    for name, fn in out.items():  # every contender computes the same thing
        if name != "library call alone":
            np.testing.assert_allclose(np.asarray(fn()), want, rtol=1e-6, err_msg=name)
    return out, exe


def copies_per_call(n):
    """Copies the package makes per call (its own counters), and whether the result is read in
    place (its data pointer is the memory the execution wrote)."""
    exe = cxla.compile(ADD % {"n": n})
    x = np.ones(n, np.float32)
    before = dict(exe.copies)
    r = exe(x, x)
    owner = r.base._cxla_owner
    in_place = lib.cxla_buffer_data(owner.h) == r.__array_interface__["data"][0]
    return exe.copies["in"] - before["in"], exe.copies["out"] - before["out"], in_place


def run(n, rounds, calls):
    fns, _ = contenders(n)
    names = list(fns)
    times = {k: [] for k in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            fn = fns[name]
            for _ in range(max(calls // 20, 1)):  # warm-up
                fn()
            time.sleep(0.001)
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            times[name].append((time.perf_counter() - t0) / calls * 1e6)
    return {k: (min(v), statistics.median(v)) for k, v in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=101)
    ap.add_argument("--sizes", default="8,1048576", help="elements per f32 array, comma-separated")
    args = ap.parse_args()
    print("cxla %s (%s), numpy %s, python %s" % (cxla.__version__, cxla.library_path, np.__version__,
                                                sys.version.split()[0]))
    try:
        import jax
        print("jax %s" % jax.__version__)
    except ImportError:
        print("jax not installed: no jax rows")
    for n in (int(s) for s in args.sizes.split(",")):
        # Short windows (a few ms): on a loaded machine a long one always includes preemption.
        calls = 200 if n <= 4096 else 3
        res = run(n, args.rounds, calls)
        cin, cout, in_place = copies_per_call(n)
        print("\nf32[%d] + f32[%d] (%d rounds x %d calls): microseconds per call" % (n, n, args.rounds, calls))
        print("| contender | best | median | copies per call (in + out) |")
        print("|---|---|---|---|")
        copies = {"cxla": "%d + %d (result read in place: %s)" % (cin, cout, "yes" if in_place else "no"),
                  "cxla.jit": "%d + %d" % (cin, cout), "copying C API": "4 + 2 (2 per array each way)",
                  "library call alone": "0 + 0 (no result array)"}
        for name, (best, med) in res.items():
            print("| %s | %.2f | %.2f | %s |" % (name, best, med, copies.get(name, "(jax's own)")))


if __name__ == "__main__":
    main()
