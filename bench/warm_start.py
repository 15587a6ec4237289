#!/usr/bin/env python3
"""warm_start.py — two (or more) cxla CLIs against each other on a new process's first LeNet step
with a warm disk cache (issue 22: "within 50 ms of start"), taking turns, so that both see the
same load. `bench_main --only=diskcache` measures one build; this compares builds, e.g. the
work tree's against a copy of an older build/cxla.

Each CLI gets its own --cache-dir (an entry names the binary it was written by), filled by two
untimed runs. Then every round runs each CLI once: `cxla run hlo/lenet_train_step.hlo
--random-inputs --threads=2 --cache-dir=DIR --trace=FILE`, timed from just before the spawn on
CLOCK_MONOTONIC, the clock the trace's timestamps use. The phases come from the trace, as in
bench_compile.c: load+read (spawn to the compile's start: dynamic loading, parsing), compile
(from the cache), inputs+first step (to the end of the first execution), first step done (the
goal's figure) and exit. Prints the median and best of each, and the ratio of the first CLI's
first-step time to the last one's (above 1: the last is faster).

With --spans it also sums, per process, the trace's spans inside the first execution that
LeNet's first step spent most on before this round (its oneDNN GEMM, which paid oneDNN's
once-per-process set-up; the max-pool gradients; the max-pools, or the kernels they are fused
into) and the compile's passes, and prints the least and median of each.

  python3 bench/warm_start.py OLD_CXLA build/cxla [--rounds 15] [--spans]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = os.path.join(HERE, "hlo", "lenet_train_step.hlo")
PHASES = ("load+read", "compile", "inputs+step", "step done", "exit")


def run(cli, cache, trace=None):
    args = [cli, "run", MODULE, "--backend=cpu", "--random-inputs", "--threads=2", "--cache-dir=" + cache]
    if trace:
        args.append("--trace=" + trace)
    subprocess.run(args, stdout=subprocess.DEVNULL, check=True)


def phases(trace, t0, t9):
    """The phases in ms from the spawn at t0 (seconds, monotonic) to the exit at t9."""
    with open(trace) as f:
        ev = json.load(f)
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    comp = next(e for e in ev if e.get("cat") == "compile" and e["name"].startswith("compile "))
    ex = next(e for e in ev if e.get("cat") == "execute")
    c0 = comp["ts"] / 1e6
    c1 = c0 + comp["dur"] / 1e6
    x1 = (ex["ts"] + ex["dur"]) / 1e6
    return [(c0 - t0) * 1e3, (c1 - c0) * 1e3, (x1 - c1) * 1e3, (x1 - t0) * 1e3, (t9 - t0) * 1e3]


# name: (which spans, inside the first execution only)
SPANS = {
    "first execution": (lambda e: e.get("cat") == "execute", False),
    "oneDNN gemm 64x128x1568": (lambda e: "gemm 64x128x1568" in e["name"], True),
    # the routines, or (since the pooling and its gradient fuse into their neighbours) the
    # kernels that hold them
    "select-and-scatter": (lambda e: e["name"].startswith("select-and-scatter") or
                           (e.get("cat") == "kernel" and "select-and-scatter" in e["name"]), True),
    "reduce-window kernels": (lambda e: e.get("cat") == "kernel" and "reduce-window" in e["name"], True),
    "passes (compile)": (lambda e: e.get("cat") == "compile" and e["name"] == "passes", False),
}


def spans(trace):
    """SPANS summed over one trace, ms."""
    with open(trace) as f:
        ev = json.load(f)
    ev = [e for e in (ev["traceEvents"] if isinstance(ev, dict) else ev) if "dur" in e]
    ex = next(e for e in ev if e.get("cat") == "execute")
    x0, x1 = ex["ts"], ex["ts"] + ex["dur"]
    out = []
    for pick, in_first in SPANS.values():
        if in_first:
            out.append(sum(e["dur"] for e in ev if pick(e) and x0 <= e["ts"] <= x1) / 1e3)
        else:
            out.append(next((e["dur"] for e in ev if pick(e)), 0) / 1e3)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("clis", nargs="+", help="cxla CLI binaries")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--spans", action="store_true", help="also the first execution's main spans")
    opt = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="cxla_warm_start_")
    try:
        caches = [os.path.join(tmp, "cache%d" % i) for i in range(len(opt.clis))]
        trace = os.path.join(tmp, "trace.json")
        for cli, cache in zip(opt.clis, caches):
            run(cli, cache)  # writes the entry
            run(cli, cache)  # the page cache holds the entry and the binary
        times = {cli: [] for cli in opt.clis}
        parts = {cli: [] for cli in opt.clis}
        for _ in range(opt.rounds):
            for cli, cache in zip(opt.clis, caches):
                t0 = time.monotonic()
                run(cli, cache, trace)
                t9 = time.monotonic()
                times[cli].append(phases(trace, t0, t9))
                if opt.spans:
                    parts[cli].append(spans(trace))
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
        print("%d rounds, 1-minute load average at the end %s (2 threads each); ms" % (opt.rounds, load))
        print("%-34s %7s" % ("", "") + "".join("%13s" % p for p in PHASES))
        for cli in opt.clis:
            v = times[cli]
            med = [statistics.median(x[i] for x in v) for i in range(len(PHASES))]
            best = [min(x[i] for x in v) for i in range(len(PHASES))]
            print("%-34s %7s" % (cli[-34:], "median") + "".join("%13.1f" % m for m in med))
            print("%-34s %7s" % ("", "best") + "".join("%13.1f" % b for b in best))
        if opt.spans:
            print("\nspans, least (median), ms:")
            for k, name in enumerate(SPANS):
                print("  %-26s" % name + "".join(
                    "%12.2f (%7.2f)" % (min(x[k] for x in parts[cli]), statistics.median(x[k] for x in parts[cli]))
                    for cli in opt.clis))
        a, b = times[opt.clis[0]], times[opt.clis[-1]]
        print("first step done, %s / %s: median %.2f, best %.2f" % (
            opt.clis[0], opt.clis[-1], statistics.median(x[3] for x in a) / statistics.median(x[3] for x in b),
            min(x[3] for x in a) / min(x[3] for x in b)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
