#!/usr/bin/env python3
"""loop.py — issue 21's loop benchmark: a while loop of many trips of a small body on the GPU,
jax.jit against cxla --backend=gpu running the HLO jax lowers for it, time per trip, in one run.

Two loops over x = f32[1024] (each trip x = 0.999 x + 0.001 sin x):
  counted   lax.fori_loop(0, TRIPS, ...): cxla knows the trip count when compiling and queues
            the body TRIPS times without reading anything back (`loops_counted` in its counts)
  while     lax.while_loop on a float counter (t < TRIPS, t += 1.0): a CUDA graph whose WHILE
            node a control kernel drives on the device (`loops_graph`; driver 12.4+)
  readback  the same with --gpu-graphs=off: the predicate is read back to the host after
            every trip
Both sides get their argument already on the GPU and wait for the result (jax's
block_until_ready; cxla reads the result, which waits for the device's stream). The results
must agree (rtol 1e-5).
Run on a machine with a GPU and jax: CXLA_BUILD=build python3 bench/gpu/loop.py
(CXLA_BENCH_BACKEND=gpu-emu CXLA_BENCH_TRIPS=20 CXLA_BENCH_STEPS=2 checks it without a GPU)
"""
import os
import statistics
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave GPU memory to cxla too
import jax
import jax.numpy as jnp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import cxla  # noqa: E402

BACKEND = os.environ.get("CXLA_BENCH_BACKEND", "gpu")
TRIPS = int(os.environ.get("CXLA_BENCH_TRIPS", "1000"))
STEPS = int(os.environ.get("CXLA_BENCH_STEPS", "20"))


def body(x):
    return 0.999 * x + 0.001 * jnp.sin(x)


def counted(x):
    return jax.lax.fori_loop(0, TRIPS, lambda i, v: body(v), x)


def float_while(x):
    return jax.lax.while_loop(lambda c: c[0] < TRIPS, lambda c: (c[0] + 1.0, body(c[1])), (jnp.float32(0), x))[1]


def median_us(call):
    call()
    times = []
    for _ in range(STEPS):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main():
    print(f"jax {jax.__version__} on {jax.devices()[0].device_kind}; cxla --backend={BACKEND}; {TRIPS} trips")
    x = np.linspace(-3, 3, 1024, dtype=np.float32)
    for name, fn, flags in (("counted", counted, {}), ("while", float_while, {}),
                            ("readback", float_while, {"gpu_graphs": False})):
        jf = jax.jit(fn)
        xd = jax.device_put(x)
        jt = median_us(lambda: jax.block_until_ready(jf(xd)))
        want = np.asarray(jf(xd))
        exe = cxla.compile(jf.lower(x).as_text(dialect="hlo"), backend=BACKEND, keep_on_device=True, **flags)
        xb = cxla.device_put(x, BACKEND)
        ct = median_us(lambda: np.asarray(exe(xb)))
        got = np.asarray(exe(xb))
        ok = np.allclose(got, want, rtol=1e-5, atol=1e-6)
        counts = exe.compile_counts
        loops = " ".join(w for w in counts.split() if w.startswith(("loops_counted=", "loops_graph=")))
        print(f"{name:8s} jax.jit {jt / TRIPS:.2f} us/trip, cxla {ct / TRIPS:.2f} us/trip, jax/cxla {jt / ct:.2f}"
              f" ({loops}){'' if ok else ' DIFFERENT'}")


if __name__ == "__main__":
    main()
