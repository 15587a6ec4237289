"""turns.py — the timing loop the Python benchmarks share: contenders take turns in one process,
the order rotated every round; before each turn one warm-up call and a 2 ms sleep (so the
previous contender's threads go idle), then `calls` calls timed one by one."""
import statistics
import time


def time_case(fns, rounds, calls, scale=1.0):
    """{name: (best, median)} of the single calls of each fns[name](), in seconds times scale."""
    names = list(fns)
    times = {k: [] for k in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            fn = fns[name]
            fn()  # warm-up
            time.sleep(0.002)
            for _ in range(calls):
                t0 = time.perf_counter()
                fn()
                times[name].append((time.perf_counter() - t0) * scale)
    return {k: (min(v), statistics.median(v)) for k, v in times.items()}
